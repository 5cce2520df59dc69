// How the store's search reads a `filter` and ranks items for a `query`: pure functions over item
// values, no SQL and no clock. The ranking stands in for the real server's semantic search, which
// needs an embedding model: a deterministic lexical score (docs/agent-server-wire.md, "Store").

import { Unprocessable } from '../domain/errors.js'

type Json = unknown
type JsonObject = Record<string, unknown>

/** The comparison operators the real store's filters accept. */
const OPERATORS: ReadonlySet<string> = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte'])

const isObject = (value: Json): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)
/** A filter value with any `$` key is a set of operators (the real store reads it so too). */
const isOperators = (value: Json): value is JsonObject => isObject(value) && Object.keys(value).some((k) => k.startsWith('$'))

/** Refuses (422) a filter with an operator the real store does not know, before anything is read. */
export function checkFilter(filter: JsonObject): void {
  for (const condition of Object.values(filter)) {
    if (!isOperators(condition)) continue
    const unknown = Object.keys(condition).find((op) => !OPERATORS.has(op))
    if (unknown !== undefined) throw new Unprocessable(`Unsupported operator: ${unknown}`)
  }
}

/** JSON equality: same type, same scalars, same members. */
function equal(a: Json, b: Json): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]))
  if (isObject(a)) {
    if (!isObject(b)) return false
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && equal(a[k], b[k]))
  }
  return false
}

/** JSON containment as PostgreSQL's `@>`: objects by their members, arrays by their elements, scalars by equality. */
function contains(item: Json, wanted: Json): boolean {
  if (isObject(wanted)) return isObject(item) && Object.entries(wanted).every(([k, v]) => k in item && contains(item[k], v))
  if (Array.isArray(wanted)) return Array.isArray(item) && wanted.every((w) => item.some((i) => contains(i, w)))
  return equal(item, wanted)
}

/** Ordering for `$gt`…: numbers with numbers, strings with strings; anything else never matches. */
function order(a: Json, b: Json): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  return undefined
}

function holds(value: Json, op: string, operand: Json): boolean {
  if (op === '$eq') return equal(value, operand)
  if (op === '$ne') return !equal(value, operand)
  const cmp = order(value, operand)
  if (cmp === undefined || Number.isNaN(cmp)) return false
  return op === '$gt' ? cmp > 0 : op === '$gte' ? cmp >= 0 : op === '$lt' ? cmp < 0 : cmp <= 0
}

/** Whether an item's value passes a filter (checked by `checkFilter`): every top-level field's condition holds. */
export function matchesFilter(value: JsonObject, filter: JsonObject): boolean {
  return Object.entries(filter).every(([field, condition]) => {
    const present = Object.hasOwn(value, field)
    if (isOperators(condition)) return Object.entries(condition).every(([op, operand]) => present ? holds(value[field], op, operand) : op === '$ne')
    return present && contains(value[field], condition)
  })
}

/** Lower-cased runs of letters and digits. */
export function terms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

/** The texts at a field path: `a.b`, with `[*]` or `[n]` (from the end when negative) for list elements. */
function textsAt(value: Json, path: string): string[] {
  let found: Json[] = [value]
  for (const part of path.split('.')) {
    const step = /^([^[]*)((?:\[(?:\*|-?\d+)\])*)$/.exec(part)
    if (!step) return []
    if (step[1] !== '') found = found.flatMap((v) => (isObject(v) && Object.hasOwn(v, step[1]) ? [v[step[1]]] : []))
    for (const index of step[2].match(/\[(\*|-?\d+)\]/g) ?? []) {
      const which = index.slice(1, -1)
      found = found.flatMap((v) => {
        if (!Array.isArray(v)) return []
        if (which === '*') return v
        const i = Number(which) < 0 ? v.length + Number(which) : Number(which)
        return i >= 0 && i < v.length ? [v[i]] : []
      })
    }
  }
  return found.map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? ''))
}

/**
 * The text a query is matched against: the value's JSON text when `index` is null (the real
 * store's default, the whole document), the texts at the listed field paths, or none (`false`:
 * the item is left out of query searches).
 */
export function indexedText(value: JsonObject, index: false | string[] | null): string | null {
  if (index === false) return null
  if (index === null) return JSON.stringify(value)
  return index.flatMap((path) => (path === '$' ? [JSON.stringify(value)] : textsAt(value, path))).join(' ')
}

/** The share of the query's distinct terms found in the text: from 0 (none) to 1 (all). */
export function lexicalScore(query: string, text: string): number {
  return lexicalScorer(query)(text)
}

/**
 * `lexicalScore` for one query over many texts. A term is one of the text's terms when it occurs in
 * the lower-cased text with no letter or digit on either side: each is looked for with a pattern made
 * once, rather than every text split into its terms.
 */
export function lexicalScorer(query: string): (text: string) => number {
  const wanted = [...new Set(terms(query))].map((term) => new RegExp(`(?<![\\p{L}\\p{N}])${term}(?![\\p{L}\\p{N}])`, 'u'))
  if (wanted.length === 0) return () => 0
  return (text) => {
    const lower = text.toLowerCase()
    let found = 0
    for (const term of wanted) if (term.test(lower)) found++
    return found / wanted.length
  }
}
