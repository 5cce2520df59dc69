// The tracing service's filter language (`filter`, `trace_filter`, `tree_filter` of a run query), as
// far as it means something for hangar's runs: `and`, `or`, `not` over `eq`, `neq`, `gt`, `gte`,
// `lt`, `lte` and `has`, on a run's own fields, its feedback and its metadata. Inside one `and`,
// `feedback_key`/`feedback_score`/`feedback_value` conditions speak of the same feedback record and
// `metadata_key`/`metadata_value` of the same entry, as in the service's documentation
// (`and(eq(feedback_key, "user_score"), eq(feedback_score, 1))`). Anything else (full-text
// `search`, token or cost fields, unknown functions) is refused with a message naming it.

import { RuleViolation } from './errors.js'

type Scalar = string | number | boolean | null
type Arg = { call: Call } | { field: string } | { value: Scalar }
interface Call { fn: string; args: Arg[] }

/** What a filter is evaluated on: one run as the tracing service shows it. */
export interface FilterSubject {
  id: string
  trace_id: string
  name: string
  run_type: string
  status: string
  start_time: number
  end_time: number | null
  latency: number | null
  error: string | null
  is_root: boolean
  tags: readonly string[]
  feedback: readonly { key: string; score: unknown; value: unknown }[]
  metadata: readonly (readonly [string, unknown])[]
}

const COMPARATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'has'] as const
type Comparator = typeof COMPARATORS[number]
const RUN_FIELDS = ['id', 'trace_id', 'name', 'run_type', 'status', 'start_time', 'end_time', 'latency', 'error', 'is_root', 'tags'] as const
const GROUPS = { feedback: ['feedback_key', 'feedback_score', 'feedback_value'], metadata: ['metadata_key', 'metadata_value'] } as const
type Group = keyof typeof GROUPS
const groupOf = (field: string): Group | undefined =>
  (Object.keys(GROUPS) as Group[]).find((g) => (GROUPS[g] as readonly string[]).includes(field))
const TIME_FIELDS: ReadonlySet<string> = new Set(['start_time', 'end_time'])

/** A parsed filter: `matches(subject)` says whether a run passes it; `feedback` whether it has a feedback condition. */
export interface RunFilter {
  matches(subject: FilterSubject): boolean
  readonly feedback: boolean
}

/** Parses a filter expression; a 400 names what is wrong. */
export function parseRunFilter(text: string, what = 'filter'): RunFilter {
  const call = new Parser(text, what).parse()
  check(call, what)
  return { matches: (subject) => evaluate(call, subject, {}), feedback: names(call, 'feedback') }
}

/** Whether a (checked) expression has a condition on a field of the group. */
function names(call: Call, group: Group): boolean {
  const own = leafGroup(call)
  return own === undefined ? call.args.some((a) => 'call' in a && names(a.call, group)) : own === group
}

class Parser {
  #at = 0
  constructor(readonly text: string, readonly what: string) {}

  parse(): Call {
    const call = this.#call()
    this.#space()
    if (this.#at < this.text.length) this.#fail(`unexpected ${JSON.stringify(this.text.slice(this.#at, this.#at + 10))}`)
    return call
  }

  #fail(why: string): never {
    throw new RuleViolation(`Invalid ${this.what} ${JSON.stringify(this.text)}: ${why} at position ${this.#at}.`)
  }

  #space() {
    while (/\s/.test(this.text[this.#at] ?? '')) this.#at++
  }

  #word(): string {
    this.#space()
    const match = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(this.text.slice(this.#at))
    if (!match) this.#fail('expected a name')
    this.#at += match[0].length
    return match[0]
  }

  #call(): Call {
    const fn = this.#word()
    this.#space()
    if (this.text[this.#at] !== '(') this.#fail(`expected "(" after ${fn}`)
    this.#at++
    const args: Arg[] = []
    for (;;) {
      args.push(this.#arg())
      this.#space()
      const next = this.text[this.#at++]
      if (next === ')') return { fn, args }
      if (next !== ',') this.#fail('expected "," or ")"')
    }
  }

  #arg(): Arg {
    this.#space()
    const c = this.text[this.#at]
    if (c === '"' || c === "'") return { value: this.#string(c) }
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.#at))
    if (number) {
      this.#at += number[0].length
      return { value: Number(number[0]) }
    }
    const start = this.#at
    const word = this.#word()
    this.#space()
    if (this.text[this.#at] === '(') {
      this.#at = start
      return { call: this.#call() }
    }
    if (word === 'null' || word === 'None') return { value: null }
    if (word === 'true' || word === 'false') return { value: word === 'true' }
    return { field: word }
  }

  #string(quote: string): string {
    let out = ''
    for (this.#at++; this.#at < this.text.length; this.#at++) {
      const c = this.text[this.#at]
      if (c === quote) {
        this.#at++
        return out
      }
      if (c === '\\') this.#at++
      out += this.text[this.#at] ?? ''
    }
    this.#fail('unterminated string')
  }
}

/** Refuses, before anything is evaluated, what hangar does not implement. */
function check(call: Call, what: string): void {
  const refuse: (why: string) => never = (why) => { throw new RuleViolation(`Unsupported ${what}: ${why}.`) }
  if (call.fn === 'and' || call.fn === 'or' || call.fn === 'not') {
    if (call.fn === 'not' ? call.args.length !== 1 : call.args.length < 1) refuse(`${call.fn}() takes ${call.fn === 'not' ? 'one argument' : 'at least one argument'}`)
    for (const arg of call.args) {
      if (!('call' in arg)) refuse(`the arguments of ${call.fn}() are comparisons`)
      check(arg.call, what)
    }
    return
  }
  if (!(COMPARATORS as readonly string[]).includes(call.fn)) {
    refuse(`${call.fn}() is not one of and, or, not, ${COMPARATORS.join(', ')}`)
  }
  const [field, value] = call.args
  if (call.args.length !== 2 || !field || !('field' in field) || !value || !('value' in value)) refuse(`${call.fn}() takes a field and a value`)
  const known = (RUN_FIELDS as readonly string[]).includes(field.field) || groupOf(field.field) !== undefined
  if (!known) refuse(`the field ${field.field} is not one of ${[...RUN_FIELDS, ...GROUPS.feedback, ...GROUPS.metadata].join(', ')}`)
  if ((call.fn === 'has') !== (field.field === 'tags')) refuse(call.fn === 'has' ? 'has() applies to tags only' : 'tags takes has()')
  if (TIME_FIELDS.has(field.field) && value.value !== null && (typeof value.value !== 'string' || Number.isNaN(Date.parse(value.value)))) {
    refuse(`${field.field} compares with a date-time string`)
  }
}

type Bound = Partial<Record<Group, number>>

function evaluate(call: Call, subject: FilterSubject, bound: Bound): boolean {
  const children = call.args.map((a) => (a as { call: Call }).call)
  if (call.fn === 'not') return !evaluate(children[0]!, subject, bound)
  if (call.fn === 'or') return children.some((c) => evaluate(c, subject, bound))
  if (call.fn === 'and') {
    // The record groups this `and`'s own comparisons name, not yet bound by an enclosing `and`.
    const groups = [...new Set(children.map(leafGroup).filter((g): g is Group => g !== undefined && bound[g] === undefined))]
    return bindings(groups, subject, bound).some((b) => children.every((c) => evaluate(c, subject, b)))
  }
  const field = (call.args[0] as { field: string }).field
  const value = (call.args[1] as { value: Scalar }).value
  const group = groupOf(field)
  if (group === undefined) return compare(call.fn as Comparator, runField(subject, field), value, TIME_FIELDS.has(field))
  const records = group === 'feedback' ? subject.feedback.length : subject.metadata.length
  const indexes = bound[group] !== undefined ? [bound[group]] : Array.from({ length: records }, (_, i) => i)
  return indexes.some((i) => compare(call.fn as Comparator, groupField(subject, field, i), value, false))
}

const leafGroup = (call: Call): Group | undefined =>
  call.fn === 'and' || call.fn === 'or' || call.fn === 'not' ? undefined : groupOf((call.args[0] as { field: string }).field)

/** Every way of choosing one record per group (none when a group has no records). */
function bindings(groups: Group[], subject: FilterSubject, bound: Bound): Bound[] {
  let out: Bound[] = [bound]
  for (const group of groups) {
    const n = group === 'feedback' ? subject.feedback.length : subject.metadata.length
    out = out.flatMap((b) => Array.from({ length: n }, (_, i) => ({ ...b, [group]: i })))
  }
  return out
}

function runField(subject: FilterSubject, field: string): unknown {
  return subject[field as keyof FilterSubject]
}

function groupField(subject: FilterSubject, field: string, i: number): unknown {
  if (field === 'metadata_key') return subject.metadata[i]![0]
  if (field === 'metadata_value') return subject.metadata[i]![1]
  const record = subject.feedback[i]!
  const value = field === 'feedback_key' ? record.key : field === 'feedback_score' ? record.score : record.value
  return typeof value === 'boolean' && field === 'feedback_score' ? Number(value) : value
}

function compare(fn: Comparator, actual: unknown, expected: Scalar, time: boolean): boolean {
  if (fn === 'has') return Array.isArray(actual) && actual.includes(expected)
  const want = time && typeof expected === 'string' ? Date.parse(expected) : expected
  if (fn === 'eq') return loosely(actual, want)
  if (fn === 'neq') return !loosely(actual, want)
  if (typeof actual !== 'number' || typeof want !== 'number') {
    if (typeof actual === 'string' && typeof want === 'string') return order(fn, actual.localeCompare(want))
    return false
  }
  return order(fn, actual - want)
}

const order = (fn: Comparator, d: number) => (fn === 'gt' ? d > 0 : fn === 'gte' ? d >= 0 : fn === 'lt' ? d < 0 : d <= 0)

/** `eq(error, true)` means "has an error"; otherwise values compare as they are (numbers as numbers). */
function loosely(actual: unknown, expected: unknown): boolean {
  if (typeof expected === 'boolean' && typeof actual !== 'boolean') return (actual !== null && actual !== undefined) === expected
  if (expected === null) return actual === null || actual === undefined
  return actual === expected
}
