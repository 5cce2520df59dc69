// `extract` of a thread search: `{"<alias>": "<path>"}`, each path a way into the thread as the
// API shows it, from `values`, `metadata`, `config` or `interrupts`, by keys (`.name`) and list
// positions (`[0]`, `[-1]` from the end): `values.messages[-1].content`. Each found thread gets
// `extracted: {"<alias>": <value, or null where the path leads nowhere>}`.

import type { PydanticError } from '../validation/pydantic-error.js'

/** The parts of the thread a path may start from (the OpenAPI document's list). */
export const EXTRACT_ROOTS = ['values', 'metadata', 'config', 'interrupts'] as const
/** How many paths one search may extract (the OpenAPI document's `maxProperties`). */
export const MAX_EXTRACTS = 10

type Segment = string | number

const FIRST = /^([A-Za-z_][\w-]*)/
const NEXT = /^(?:\.([^.[\]]+)|\[(-?\d+)\])/

/** A path as keys and positions, or null when it is not one (or does not start at a root). */
export function parseExtractPath(path: string): Segment[] | null {
  const first = FIRST.exec(path)
  if (!first || !(EXTRACT_ROOTS as readonly string[]).includes(first[1])) return null
  const segments: Segment[] = [first[1]]
  let rest = path.slice(first[0].length)
  while (rest !== '') {
    const next = NEXT.exec(rest)
    if (!next) return null
    segments.push(next[1] ?? Number(next[2]))
    rest = rest.slice(next[0].length)
  }
  return segments
}

/** What a parsed path leads to in `thread` (null where it leads nowhere). */
export function extractPath(thread: Record<string, unknown>, segments: Segment[]): unknown {
  let at: unknown = thread
  for (const segment of segments) {
    if (typeof segment === 'number') {
      if (!Array.isArray(at)) return null
      at = at[segment < 0 ? at.length + segment : segment]
    } else {
      if (typeof at !== 'object' || at === null || Array.isArray(at)) return null
      at = (at as Record<string, unknown>)[segment]
    }
    if (at === undefined) return null
  }
  return at
}

/** What is wrong with a search's `extract`, in pydantic's form (empty: nothing). */
export function extractProblems(extract: Record<string, string>): PydanticError[] {
  const aliases = Object.keys(extract)
  if (aliases.length > MAX_EXTRACTS) {
    return [{
      type: 'too_long', loc: ['body', 'extract'], input: extract,
      msg: `Dictionary should have at most ${MAX_EXTRACTS} items after validation, not ${aliases.length}`,
      ctx: { field_type: 'Dictionary', max_length: MAX_EXTRACTS, actual_length: aliases.length },
    }]
  }
  return aliases.filter((alias) => parseExtractPath(extract[alias]) === null).map((alias) => ({
    type: 'value_error', loc: ['body', 'extract', alias], input: extract[alias],
    msg: `Value error, invalid path '${extract[alias]}': a path starts with ${EXTRACT_ROOTS.join(', ')} and goes on by .key or [index]`,
    ctx: { error: `invalid path '${extract[alias]}'` },
  }))
}

/** `extracted` for one thread as the API shows it. */
export function extractAll(thread: Record<string, unknown>, extract: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(extract).map(([alias, path]) => [alias, extractPath(thread, parseExtractPath(path)!)]))
}
