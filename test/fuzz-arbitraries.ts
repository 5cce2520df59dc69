// Generators for test/fuzz.test.ts: the operations of hangar read from its own OpenAPI document
// (plus the copies the document leaves out), values made from the operations' schemas (valid,
// one field wrong, or noise), odd path ids, query strings, headers and bodies, and the check of
// an answer against the real service's error bodies.

import fc from 'fast-check'

/** A JSON Schema as the OpenAPI document writes it (TypeBox output: inline, no $ref). */
export type Schema = { [keyword: string]: any }

export interface Param {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  schema: Schema
}

export type Family = 'control-plane' | 'auth' | 'agent' | 'deployed-agent' | 'feedback' | 'admin' | 'system'

export interface Operation {
  method: string
  /** An OpenAPI path template: `/v2/deployments/{deployment_id}`. */
  path: string
  family: Family
  params: Param[]
  body?: Schema
  bodyRequired: boolean
  /** Whether the route refuses a request without credentials (401/403 `Missing authentication headers`). */
  gated: boolean
}

export const DEPLOYED_PREFIX = '/deployments/{deployment_id}/agent'
const DEPLOYED_PARAM: Param = { name: 'deployment_id', in: 'path', required: true, schema: { type: 'string' } }

const AGENT_PATH = /^\/(assistants|threads|info$|ok$|runs$|runs\/(stream|wait|batch)$)/
const familyOf = (path: string): Family => {
  if (path.startsWith('/_hangar/oauth/')) return 'auth'
  if (path.startsWith('/_hangar/')) return 'admin'
  if (path.startsWith('/v2/auth/')) return 'auth'
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) return 'control-plane'
  if (path.startsWith('/api/v1/') || path.startsWith('/api/v2/')) return 'feedback'
  if (AGENT_PATH.test(path)) return 'agent'
  return 'system'
}

/** Routes that take no credentials: health and info, the emulator's own, the OAuth browser steps, token submissions. */
function isGated(method: string, path: string): boolean {
  if (/(^|\/agent|^\/api\/v1)\/(ok|info)$/.test(path)) return false
  if (path.startsWith('/_hangar/')) return false
  if (method === 'GET' && /\/v2\/auth\/(callback|setup)\/\{provider_id\}$/.test(path)) return false
  if (/\/feedback\/tokens\/\{token\}$/.test(path)) return false
  return path !== '/openapi.json' && !path.startsWith('/docs')
}

/**
 * Documented paths whose answer never ends by itself (the admin events; a thread's join stream,
 * which waits for its next run; the session protocol's event stream, which follows the thread's log).
 */
const ENDLESS = ['/_hangar/events', '/threads/{thread_id}/stream', '/threads/{thread_id}/stream/events']

/**
 * Every operation hangar serves: those of `/openapi.json`, and the copies it leaves out — the
 * control plane and Auth Service under `/api-host`, the agent server under
 * `/deployments/{deployment_id}/agent`, and feedback without `/api/v1`.
 */
export function operationsFrom(doc: Schema): Operation[] {
  const ops: Operation[] = []
  const add = (method: string, path: string, family: Family, params: Param[], op: Schema) => {
    const content = op.requestBody?.content?.['application/json']
    ops.push({
      method, path, family, params,
      body: content?.schema,
      bodyRequired: op.requestBody?.required === true,
      gated: isGated(method, path),
    })
  }
  for (const [path, item] of Object.entries<Schema>(doc.paths)) {
    // An event stream that never ends by itself would hold its request forever (test/admin-events.test.ts, test/thread-stream.test.ts and test/protocol-*.test.ts cover them).
    if (ENDLESS.includes(path)) continue
    for (const [lower, op] of Object.entries<Schema>(item)) {
      const method = lower.toUpperCase()
      const params = (op.parameters ?? []) as Param[]
      const family = familyOf(path)
      add(method, path, family, params, op)
      if ((family === 'control-plane' || family === 'auth') && !path.startsWith('/_hangar/')) add(method, `/api-host${path}`, family, params, op)
      if (family === 'agent') add(method, DEPLOYED_PREFIX + path, 'deployed-agent', [DEPLOYED_PARAM, ...params], op)
      // The tracing service's routes without /api/v1 too, but for its /info: the root one is the agent server's.
      if (path.startsWith('/api/v1/') && path !== '/api/v1/info') add(method, path.slice('/api/v1'.length), 'feedback', params, op)
    }
  }
  // Served but not documented: the document itself and the page over it.
  for (const path of ['/openapi.json', '/docs', '/docs/json', '/docs/yaml', '/docs/static/{file}']) {
    const params: Param[] = path.includes('{file}') ? [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }] : []
    add('GET', path, 'system', params, {})
  }
  return ops
}

// ---------------------------------------------------------------------------------------------
// Values from schemas

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const members = (s: Schema): Schema[] => (Array.isArray(s.anyOf) ? s.anyOf.flatMap(members) : [s])
const isAny = (s: Schema) => !Array.isArray(s.anyOf) && s.type === undefined && s.enum === undefined && !('const' in s)
/** The object member of a schema (itself, or the first object member of a union). */
export const objectOf = (s: Schema): Schema | undefined => members(s).find((m) => m.type === 'object' && isObject(m.properties))
const arrayOf = (s: Schema): Schema | undefined => members(s).find((m) => m.type === 'array')

export const SAMPLE_UUID = '5f0c5d4e-8a47-4b7e-9d43-6f2b1e0a9c11'

/** The simplest value the schema accepts: required fields only, first enum member, lower bounds; a field named in `pools` gets its first real value. */
export function sample(s: Schema, pools: Pools = {}, name?: string): unknown {
  const pool = name === undefined ? undefined : pools[name]
  if (pool?.length) return pool[0]
  if (Array.isArray(s.anyOf)) {
    const first = s.anyOf.find((m: Schema) => m.type !== 'null')
    return first ? sample(first, pools) : null
  }
  if (Array.isArray(s.enum)) return s.enum[0]
  if ('const' in s) return s.const
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const key of (s.required ?? []) as string[]) out[key] = sample(s.properties?.[key] ?? {}, pools, key)
      return out
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items ?? {}, pools))
    case 'string':
      if (s.format === 'uuid') return SAMPLE_UUID
      if (s.format === 'date-time') return '2025-01-01T00:00:00Z'
      return 'x'.repeat(Math.max(1, s.minLength ?? 1))
    case 'integer':
    case 'number':
      return s.minimum ?? Math.min(1, s.maximum ?? 1)
    case 'boolean':
      return false
    default:
      return null
  }
}

/** A date and time as pydantic reads one (an ISO 8601 instant; the day must exist, the hour be < 24). */
function isDateTime(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/.exec(text)
  if (!m) return false
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1).map((part) => (part === undefined ? undefined : Number(part))) as number[]
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return month >= 1 && month <= 12 && day >= 1 && day <= days && hour < 24 && minute < 60 && second < 60
}

const BOOL_WORDS = ['0', '1', 'true', 'false', 'yes', 'no', 'on', 'off', 't', 'f', 'y', 'n']
const outOfBounds = (s: Schema, v: number) =>
  (s.minimum !== undefined && v < s.minimum) || (s.maximum !== undefined && v > s.maximum) ||
  (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) || (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum)

/**
 * Whether pydantic (lax mode, as FastAPI runs it) certainly refuses `v` for `s`. Conservative:
 * when a coercion might accept it (a bool for an int, a number for a date-time), the answer is no.
 */
export function surelyRejects(s: Schema, v: unknown): boolean {
  if (Array.isArray(s.anyOf)) return s.anyOf.every((m: Schema) => surelyRejects(m, v))
  if (isAny(s)) return false
  if (Array.isArray(s.enum)) return !s.enum.includes(v)
  if ('const' in s) return v !== s.const
  switch (s.type) {
    case 'null':
      return v !== null
    case 'string': {
      if (typeof v !== 'string') return !(s.format === 'date-time' && typeof v === 'number')
      if (s.format === 'uuid') return !/[0-9a-f]{8}/i.test(v)
      if (s.format === 'date-time' && !isDateTime(v)) return true
      const length = [...v].length
      return (s.minLength !== undefined && length < s.minLength) || (s.maxLength !== undefined && length > s.maxLength)
    }
    case 'integer':
      if (typeof v === 'number') return !Number.isInteger(v) || outOfBounds(s, v)
      if (typeof v === 'string') return !/^\s*[+-]?\d+\s*$/.test(v) || outOfBounds(s, Number(v))
      return typeof v !== 'boolean'
    case 'number':
      if (typeof v === 'number') return outOfBounds(s, v)
      if (typeof v === 'string') return Number.isNaN(Number(v)) && !/^\s*[+-]?(nan|inf|infinity)\s*$/i.test(v)
      return typeof v !== 'boolean'
    case 'boolean':
      if (typeof v === 'boolean') return false
      if (typeof v === 'number') return v !== 0 && v !== 1
      if (typeof v === 'string') return !BOOL_WORDS.includes(v.trim().toLowerCase())
      return true
    case 'object':
      if (!isObject(v)) return true
      if (!isObject(s.properties)) return false
      return ((s.required ?? []) as string[]).some((k) => !(k in v)) ||
        Object.entries<Schema>(s.properties as Record<string, Schema>).some(([k, sub]) => k in v && surelyRejects(sub, v[k]))
    case 'array':
      if (!Array.isArray(v)) return true
      return (s.minItems !== undefined && v.length < s.minItems) || (s.maxItems !== undefined && v.length > s.maxItems) ||
        v.some((item) => surelyRejects(s.items ?? {}, item))
    default:
      return false
  }
}

const WRONG_CANDIDATES: unknown[] = ['zz-not-valid', 'maybe', 5, 1.5, -1, true, {}, [], null, { a: 1 }, ['x'], 1e9, -1e9]

/** Values pydantic refuses for `s` (empty when it accepts anything). */
export function wrongValues(s: Schema): unknown[] {
  const bounds: unknown[] = []
  for (const m of members(s)) {
    if (typeof m.minimum === 'number') bounds.push(m.minimum - 1, m.minimum - 0.5)
    if (typeof m.maximum === 'number') bounds.push(m.maximum + 1)
    if (typeof m.minLength === 'number' && m.minLength > 0) bounds.push('')
    if (typeof m.maxLength === 'number') bounds.push('x'.repeat(m.maxLength + 1))
    if (m.type === 'array' && typeof m.minItems === 'number' && m.minItems > 0) bounds.push([])
    if (m.format === 'date-time') bounds.push('yesterday', '2025-02-30T00:00:00Z', '2025-13-01T00:00:00Z', '2025-01-01T25:61:00Z')
  }
  return [...WRONG_CANDIDATES, ...bounds].filter((v) => surelyRejects(s, v))
}

/** A few of `wrongValues` for a systematic sweep: the schema's own limits first (bounds, dates), then one wrong type. */
export function someWrongValues(s: Schema): unknown[] {
  const all = wrongValues(s)
  const specific = all.filter((v) => !WRONG_CANDIDATES.includes(v))
  const generic = all.filter((v) => WRONG_CANDIDATES.includes(v))
  return [...specific.slice(0, 2), ...generic.slice(0, 1)]
}

/** One place in a body: its path from the top, its schema, and whether its object requires it. */
export interface Point {
  path: (string | number)[]
  schema: Schema
  required: boolean
}

/** Every field of a body schema, nested objects and list items included (to a depth of 5). */
export function pointsOf(s: Schema, path: (string | number)[] = []): Point[] {
  if (path.length > 5) return []
  const object = objectOf(s)
  if (object) {
    return Object.entries<Schema>(object.properties).flatMap(([key, sub]) => [
      { path: [...path, key], schema: sub, required: ((object.required ?? []) as string[]).includes(key) },
      ...pointsOf(sub, [...path, key]),
    ])
  }
  const array = arrayOf(s)
  return array?.items ? pointsOf(array.items, [...path, 0]) : []
}

/** Marks a field to leave out. */
export const REMOVE = Symbol('remove')

/** The simplest valid value of `s`, except at `path`, which holds `leaf` (or is left out). */
export function withLeaf(s: Schema, path: (string | number)[], leaf: unknown, pools: Pools = {}): unknown {
  if (path.length === 0) return leaf
  const [head, ...rest] = path
  if (typeof head === 'number') {
    const array = arrayOf(s)!
    const item = withLeaf(array.items ?? {}, rest, leaf, pools)
    return item === REMOVE ? [] : [item]
  }
  const object = objectOf(s)!
  const out = sample(object, pools) as Record<string, unknown>
  const value = withLeaf(object.properties[head], rest, leaf, pools)
  if (value === REMOVE) delete out[head]
  else out[head] = value
  return out
}

/** Bodies that break `s` in exactly one place: a field of a wrong type or out of range, or a required field left out. */
export function oneFieldWrong(s: Schema, pools: Pools = {}): fc.Arbitrary<{ at: string; body: unknown }> | undefined {
  const choices: fc.Arbitrary<{ at: string; body: unknown }>[] = []
  for (const point of pointsOf(s)) {
    const at = point.path.join('.')
    const wrong = wrongValues(point.schema)
    if (wrong.length > 0) choices.push(fc.constantFrom(...wrong).map((v) => ({ at, body: withLeaf(s, point.path, v, pools) })))
    if (point.required) choices.push(fc.constant({ at: `-${at}`, body: withLeaf(s, point.path, REMOVE, pools) }))
  }
  const top = wrongValues(s)
  if (top.length > 0) choices.push(fc.constantFrom(...top).map((body) => ({ at: '(body)', body })))
  return choices.length > 0 ? fc.oneof(...choices) : undefined
}

/** Values at the edges of what `s` accepts: extreme numbers, empty and huge strings, odd spellings pydantic still takes. */
export function edgeValues(s: Schema): unknown[] {
  const out: unknown[] = []
  for (const m of members(s)) {
    if (m.type === 'integer') out.push(-1, 2 ** 31, 2 ** 53, -(2 ** 53), 8.64e15 + 1, ' 8 ', true)
    if (m.type === 'number') out.push(-0, 1e300, -1e300, 8.64e15 + 1, 5e-324, '1.5', 'inf')
    if (m.type === 'boolean') out.push('yes', 'off', 0, 1, 'TRUE')
    if (m.type === 'string' && m.format === 'uuid') out.push(SAMPLE_UUID.toUpperCase(), SAMPLE_UUID.replace(/-/g, ''), `{${SAMPLE_UUID}}`, `urn:uuid:${SAMPLE_UUID}`)
    else if (m.type === 'string' && m.format === 'date-time') out.push('0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '2025-01-01T00:00:00+14:00', '2025-01-01T00:00:00-23:59', '2025-01-01 00:00:00')
    else if (m.type === 'string' && !m.enum) out.push('', 'x'.repeat(20_000), ...NASTY.filter((x) => x.isWellFormed()))
    if (m.type === 'array') out.push(Array.from({ length: 200 }, () => sample(m.items ?? {})))
    if (m.type === 'object' && !isObject(m.properties)) out.push({}, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i])), { '': null, '\u0000': '\ud800', __proto__x: 1 })
    if (isAny(m)) out.push(null, -0, 1e308, '\ud800', [[[[[[]]]]]], JSON.parse('{"__proto__": {"polluted": 1}, "constructor": {"prototype": 1}}'))
  }
  return out.filter((v) => !surelyRejects(s, v))
}

/** At most `n` of `edgeValues` for a systematic sweep: every number edge, and a rotating few of the strings (`turn` picks which). */
export function someEdgeValues(s: Schema, n: number, turn: number): unknown[] {
  const all = edgeValues(s)
  const numbers = all.filter((v) => typeof v === 'number')
  const rest = all.filter((v) => typeof v !== 'number')
  const rotated = rest.map((_, i) => rest[(i + turn) % rest.length])
  return [...numbers, ...rotated].slice(0, Math.max(n, numbers.length))
}

/** Bodies valid but for one field at an edge of what its schema accepts. */
export function oneFieldEdge(s: Schema, pools: Pools = {}): fc.Arbitrary<{ at: string; body: unknown }> | undefined {
  const choices = pointsOf(s).flatMap((point) => {
    const edges = edgeValues(point.schema)
    const at = point.path.join('.')
    return edges.length > 0 ? [fc.constantFrom(...edges).map((v) => ({ at, body: withLeaf(s, point.path, v, pools) }))] : []
  })
  return choices.length > 0 ? fc.oneof(...choices) : undefined
}

/** Real values for fields, by field name (ids of things that exist, so that valid bodies reach deep). */
export type Pools = Record<string, string[]>

/** Values the schema accepts, with some variety (for the "anything goes" fuzzing); a field named in `pools` often gets a real value. */
export function validArb(s: Schema, pools: Pools = {}, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const pool = name === undefined ? undefined : pools[name]
  const own = schemaArb(s, pools, depth)
  return pool?.length ? fc.oneof(own, fc.constantFrom(...pool)) : own
}

function schemaArb(s: Schema, pools: Pools, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((m: Schema) => schemaArb(m, pools, depth)))
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
  if ('const' in s) return fc.constant(s.const)
  switch (s.type) {
    case 'object': {
      if (!isObject(s.properties) || depth > 3) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
      const fields = Object.fromEntries(Object.entries<Schema>(s.properties as Record<string, Schema>).map(([k, sub]) => [k, validArb(sub, pools, k, depth + 1)]))
      return fc.record(fields, { requiredKeys: (s.required ?? []) as string[] })
    }
    case 'array':
      return fc.array(schemaArb(s.items ?? {}, pools, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.max(s.minItems ?? 0, 2) })
    case 'string':
      if (s.format === 'uuid') return fc.oneof(fc.uuid(), fc.constant(SAMPLE_UUID))
      if (s.format === 'date-time') return fc.constantFrom('2025-01-01T00:00:00Z', '1970-01-01T00:00:00.000+00:00', '9999-12-31T23:59:59Z', '0001-01-01T00:00:00Z')
      return fc.oneof(fc.constant('x'.repeat(Math.max(1, s.minLength ?? 1))), wellFormedString(s.minLength ?? 0, s.maxLength ?? 40))
    case 'integer':
      return fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: s.minimum ?? -5, max: s.maximum ?? Math.max(1000, (s.minimum ?? 0) + 10) }) },
        { weight: 1, arbitrary: extremes(s, [2 ** 31, 2 ** 53, -(2 ** 53), 1e15, 8.64e15 + 1]) },
      )
    case 'number':
      return fc.oneof(
        { weight: 4, arbitrary: fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true }) },
        { weight: 1, arbitrary: extremes(s, [1e300, -1e300, 8.64e15 + 1, -8.64e15 - 1, 5e-324, Number.MAX_SAFE_INTEGER]) },
      )
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** Numbers at the edges of what JavaScript dates and integers hold, where the schema allows them. */
function extremes(s: Schema, values: number[]): fc.Arbitrary<number> {
  const allowed = values.filter((v) => !outOfBounds(s, v))
  return allowed.length > 0 ? fc.constantFrom(...allowed) : fc.constant(sample(s) as number)
}

// ---------------------------------------------------------------------------------------------
// Odd strings, ids, encodings

/** Strings that have broken parsers before: control characters, bidi overrides, emoji, look-alikes of syntax. */
export const NASTY = [
  '', ' ', '\u0000', 'a\u0000b', '\u202eevil\u202c', '\u200f\u05e9\u05dc\u05d5\u05dd', '👩‍👩‍👧‍👦🚀', 'e\u0301', '\uFEFF', '\uFFFF',
  '\ud800', '\udfff', 'a\ud83d', '..', '.', '../..', '%', '%00', '%ZZ', '%2F', '?', '#', '&', '=', '+', '\\', '/', '//',
  '\r\n', '\t', '"', "'", '<script>alert(1)</script>', "'; DROP TABLE deployments; --", 'null', 'true', 'NaN', '-0', '1e309',
  '{"a":1}', '[]', 'x'.repeat(300), 'ǅ'.repeat(50),
]
const wellFormed = (s: string) => s.isWellFormed()
export const wellFormedString = (minLength = 0, maxLength = 40) =>
  fc.oneof(
    fc.string({ unit: 'grapheme', minLength, maxLength }),
    fc.constantFrom(...NASTY.filter(wellFormed)).filter((s) => [...s].length >= minLength && [...s].length <= maxLength),
  )

/** Percent-encodes any JS string; a lone surrogate goes out as its (invalid) three UTF-8-style bytes. */
export function encode(text: string): string {
  let out = ''
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
    } else out += encodeURIComponent(ch)
  }
  return out
}

/** A path segment: `raw` goes into the URL as it is (may be malformed on purpose), else encoded. */
export interface Segment {
  raw: string
}
const seg = (value: string): Segment => ({ raw: encode(value) })

/** Path ids that are not what the route wants, or are but in odd spellings. */
export function oddIdArb(real: string[]): fc.Arbitrary<Segment> {
  const spellings = real.flatMap((id) => [id.toUpperCase(), id.replace(/-/g, ''), `{${id}}`, `urn:uuid:${id}`, ` ${id}`, `${id}x`])
  return fc.oneof(
    fc.uuid().map(seg),
    fc.uuid().map((id) => seg(id.toUpperCase())),
    ...(spellings.length > 0 ? [fc.constantFrom(...spellings).map(seg)] : []),
    fc.constantFrom(...NASTY).map(seg),
    wellFormedString(1, 60).map(seg),
    // Long: under, at and over the router's parameter limit (2048).
    fc.constantFrom(100, 2048, 2049, 5000).map((n) => seg('a'.repeat(n))),
    // Raw, not encoded: dot segments, empty segments, malformed escapes, an encoded slash.
    fc.constantFrom('', '.', '..', '%', '%ZZ', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%2F', '%2e%2e', '%00', 'a%20b').map((raw) => ({ raw })),
  )
}

export function fillPath(template: string, segments: Record<string, Segment>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => segments[name]?.raw ?? SAMPLE_UUID)
}

/** Query values that the parameter's schema refuses (query values are strings, so only what strings can break). */
export function wrongQueryValues(s: Schema): string[] {
  const out: string[] = []
  for (const m of members(s)) {
    if (m.type === 'integer') out.push('abc', '1.5', '', '0x10', ' ', '1e999', '99999999999999999999999')
    if (m.type === 'number') out.push('abc', '', '1..2')
    if (m.type === 'boolean') out.push('maybe', '2', '')
    if (Array.isArray(m.enum)) out.push('zz-not-a-member', m.enum[0].toUpperCase() + '!')
    if (m.format === 'uuid') out.push('nope', '1234', SAMPLE_UUID + '0')
    if (typeof m.minimum === 'number') out.push(String(m.minimum - 1))
    if (typeof m.maximum === 'number') out.push(String(m.maximum + 1))
  }
  return [...new Set(out)].filter((v) => {
    const coerced = v.trim() !== '' && !Number.isNaN(Number(v)) ? [v, Number(v)] : [v]
    return coerced.every((c) => surelyRejects(s, c))
  })
}

/** A query string: declared parameters (absent, valid, wrong, repeated, huge, odd) and strays. */
export function queryArb(params: Param[], pools: Pools = {}): fc.Arbitrary<string> {
  const pairs = params.filter((p) => p.in === 'query').map((p) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: validArb(p.schema, pools, p.name).map((v) => [`${p.name}=${encode(asQueryText(v))}`]) },
      { weight: 2, arbitrary: wrongQueryValues(p.schema).length > 0 ? fc.constantFrom(...wrongQueryValues(p.schema)).map((v) => [`${p.name}=${encode(v)}`]) : fc.constant<string[]>([]) },
      { weight: 1, arbitrary: fc.array(wellFormedString(0, 12), { minLength: 2, maxLength: 3 }).map((vs) => vs.map((v) => `${p.name}=${encode(v)}`)) },
      { weight: 1, arbitrary: fc.constantFrom(`${p.name}`, `${p.name}=`, `${p.name}[]=1`, `${p.name}[a]=b`, `${p.name}=%ZZ`, `${p.name}=%`, `${p.name}=${'9'.repeat(20000)}`, `${p.name}=${encode('\ud800')}`) },
    ))
  const strays = fc.array(fc.constantFrom('&', '&&', '=', '==x', 'a=1&a=2&a=3', '%ZZ=1', 'x=%E0%A4%A', `junk=${'z'.repeat(5000)}`, 'a[b][c]=d', '__proto__=1', 'constructor[prototype][x]=1', '+=+'), { maxLength: 2 })
  return fc.tuple(fc.tuple(...pairs), strays).map(([declared, extra]) => [...declared.flat(), ...extra].join('&'))
}

const asQueryText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))

// ---------------------------------------------------------------------------------------------
// Bodies

/** A body to send: its bytes (lazily: huge ones are built at send time) and how to describe it. */
export interface Body {
  describe: string
  bytes(): string | Buffer
}
export const jsonBody = (value: unknown, describe = 'json'): Body => ({ describe: `${describe} ${truncate(JSON.stringify(value) ?? 'undefined', 300)}`, bytes: () => JSON.stringify(value) ?? '' })
export const rawBody = (text: string | Buffer, describe = 'raw'): Body => ({
  describe: `${describe} ${truncate(Buffer.isBuffer(text) ? `<bytes ${text.toString('hex').slice(0, 80)}>` : JSON.stringify(text), 300)}`,
  bytes: () => text,
})
const truncate = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text)

/** Nesting `depth` levels deep: arrays or objects, alone or inside a field. */
export function deep(depth: number, shape: 'array' | 'object', inField?: string): Body {
  return {
    describe: `nested ${depth} levels of ${shape}s${inField ? ` in "${inField}"` : ''}`,
    bytes: () => {
      const core = shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
      return inField ? `{"${inField}": ${core}}` : core
    },
  }
}

/** A JSON text of exactly `size` bytes (a string field padded out). */
export function sized(size: number, field = 'name'): Body {
  return {
    describe: `${size} bytes of JSON`,
    bytes: () => {
      const head = `{"${field}": "`
      return head + 'x'.repeat(Math.max(0, size - head.length - 2)) + '"}'
    },
  }
}

/** Bodies Python's `json.loads` refuses (422 `json_invalid`), or FastAPI cannot read at all (400): bad syntax, bad bytes, too-long integers. */
export const UNPARSABLE: (string | Buffer)[] = [
  '{', '}', '[', '{"a": }', "{'a': 1}", '{"a": 1,}', '[1, 2,]', '{"a" 1}', '{"a": 1 "b": 2}', '{} {}', 'nul', 'tru', 'undefined',
  '{"a": "unterminated', '{"a": "\\x41"}', '{"a": "\\u00"}', '// comment\n{}', '/* */{}', '\u0000', ' ', '\n\n', '{"a": "tab\there"}',
  `{"a": ${'9'.repeat(5000)}}`, `{"a": -${'1'.repeat(4301)}}`,
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0x7b, 0x7d, 0x00]), Buffer.from('{"a": "\u00e9"}', 'latin1'),
]
/** JSON only Python reads (NaN, Infinity, lone surrogates, duplicate keys, a BOM), and JSON that is not an object. */
export const ODD_JSON: string[] = [
  '{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', 'NaN', '1e400', '{"a": 1e400}', '{"a": "\\ud800"}', '{"a": 1, "a": 2}', '\uFEFF{}',
  '{"\\u0000": 1}', '{"a": "\\u0000"}', '"just a string"', '42', 'true', 'null', '[]', '[{}]', '{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {}}}',
]
export const MALFORMED: (string | Buffer)[] = [...UNPARSABLE, ...ODD_JSON]

/** Random, odd and hostile bodies for an operation (or for none). */
export function noiseBodyArb(op: Operation, limit: number, pools: Pools = {}): fc.Arbitrary<Body | undefined> {
  const schema = op.body
  const choices: fc.WeightedArbitrary<Body | undefined>[] = [
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => jsonBody(v, 'random json')) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((s) => rawBody(s, 'random text')) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED).map((s) => rawBody(s, 'malformed')) },
    { weight: 1, arbitrary: fc.constantFrom(999, 1000, 1001, 5000).chain((d) => fc.constantFrom<'array' | 'object'>('array', 'object').chain((shape) => fc.constantFrom(undefined, 'metadata', 'input', 'name').map((f) => deep(d, shape, f)))) },
    { weight: 1, arbitrary: fc.constantFrom(limit - 64, limit, limit + 1, 2 * limit).map((n) => sized(n)) },
  ]
  if (schema) {
    choices.push({ weight: 4, arbitrary: validArb(schema, pools).map((v) => jsonBody(v, 'valid')) })
    const wrong = oneFieldWrong(schema, pools)
    if (wrong) choices.push({ weight: 4, arbitrary: wrong.map(({ at, body }) => jsonBody(body, `wrong at ${at}:`)) })
    const edge = oneFieldEdge(schema, pools)
    if (edge) choices.push({ weight: 3, arbitrary: edge.map(({ at, body }) => jsonBody(body, `edge at ${at}:`)) })
    choices.push({ weight: 1, arbitrary: fc.constantFrom(...NASTY).chain((nasty) => fc.constantFrom(...pointsOf(schema).map((p) => p.path), [] as (string | number)[]).map((path) => jsonBody(withLeaf(schema, path, nasty, pools), 'nasty string'))) })
  }
  return fc.oneof(...choices)
}

// ---------------------------------------------------------------------------------------------
// Headers

export const API_KEY_HEADER = 'x-api-key'
export const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.acme+json', 'application/json; charset=latin1',
  'text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'application/xml',
  'application/octet-stream', ';;;', 'application/', '*/*', 'application/json, text/plain', 'json',
]

// ---------------------------------------------------------------------------------------------
// The request and the answer

export interface FuzzRequest {
  kind: string
  method: string
  url: string
  headers: Record<string, string>
  body?: Body
}

/** A request as a reader can retype it (fast-check prints counterexamples with this). */
export function describe(request: FuzzRequest): string {
  const headers = Object.entries(request.headers).map(([k, v]) => `-H '${k}: ${truncate(v, 80)}'`).join(' ')
  return `[${request.kind}] ${request.method} ${truncate(request.url, 400)} ${headers}${request.body ? ` body: ${request.body.describe}` : ''}`
}

/** Attaches `describe` as fast-check's way of printing the request. */
export function printable(request: FuzzRequest): FuzzRequest {
  return Object.assign(request, { [fc.toStringMethod]: () => describe(request) })
}

export interface Answer {
  status: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

/**
 * The 5xx hangar answers on purpose, by status and detail: a deployment's agent server before a
 * revision of it is DEPLOYED (503), and the v2 run query's AI search, which is not available offline (501).
 */
const MEANT_5XX: readonly { status: number; detail: RegExp }[] = [
  { status: 503, detail: /^Deployment ID [^ ]+ is not serving yet: no revision of it is DEPLOYED\.$/ },
  { status: 501, detail: /^AI search \(`ai_search`\) is not available offline: / },
]

/** Whether an answer is one of the 5xx hangar means (MEANT_5XX). */
export function meant5xx(answer: Answer): boolean {
  let detail: unknown
  try {
    detail = (JSON.parse(answer.body) as { detail?: unknown }).detail
  } catch {
    return false
  }
  return typeof detail === 'string' && MEANT_5XX.some((m) => m.status === answer.status && m.detail.test(detail))
}
/** A 422 whose detail is a sentence (README: a busy thread under multitask_strategy "reject"). */
export const BUSY = 'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.'
/**
 * Every 422 whose detail is a sentence: a busy thread, the combinations `POST /runs/cancel` refuses
 * (README), the store's rules on namespaces and filter operators, and the webhooks a run may not
 * name (docs/agent-server-wire.md).
 */
const SENTENCE_422S: readonly (string | RegExp)[] = [
  BUSY,
  "Cannot specify 'thread_id' or 'run_ids' when using 'status'",
  "Must provide either a status or both 'thread_id' and 'run_ids'",
  /^Namespace labels cannot be empty or contain periods\. Received: /s,
  'Namespace is required',
  /^Root label for namespace cannot be "langgraph"\. Received: /s,
  /^Unsupported operator: /s,
  /^Invalid webhook hostname '/s,
  /^Webhook host blocked: /s,
  'Webhook URL too long',
  /^Loopback webhooks \(relative URLs and localhost\) are disabled by default\./,
]
const isSentence422 = (detail: unknown) => typeof detail === 'string' && SENTENCE_422S.some((sentence) => (typeof sentence === 'string' ? sentence === detail : sentence.test(detail)))
const LOCS = ['body', 'query', 'path', 'header']

/** What is wrong with an answer: a 5xx, or an error body that is not the real service's. Empty when fine. */
export function problemsOf(request: FuzzRequest, answer: Answer): string[] {
  const problems: string[] = []
  const { status } = answer
  let parsed: unknown
  const json = () => {
    try {
      parsed = JSON.parse(answer.body)
      return true
    } catch {
      return false
    }
  }
  if (status >= 500) {
    if (!meant5xx(answer)) problems.push(`answered ${status}: ${truncate(answer.body, 200)}`)
    return problems
  }
  if (status >= 300 && status < 400 && status !== 304 && !answer.headers.location) problems.push(`${status} without a Location header`)
  if (status < 400 || request.method === 'HEAD') return problems
  const type = String(answer.headers['content-type'] ?? '')
  // The session protocol's routes answer bad bodies and unknown ids as the real JS server does
  // (docs/session-protocol.md): a zod 400, a plain-text 400 or 404. Gates still answer {"detail"}.
  if (/\/threads\/[^/?]*\/(commands|stream\/events)(\?|$)/.test(request.url) && (status === 400 || (status === 404 && type.startsWith('text/plain')))) {
    if (type.startsWith('text/plain')) return answer.body.length > 0 ? problems : [...problems, `${status} with an empty text body`]
    const zod = json() && isObject(parsed) && parsed.success === false && isObject(parsed.error) && parsed.error.name === 'ZodError' && Array.isArray(parsed.error.issues) && parsed.error.issues.length > 0
    return zod ? problems : [...problems, `${status} is neither zod's nor plain text: ${truncate(answer.body, 200)}`]
  }
  // The A2A and MCP endpoints speak JSON-RPC 2.0: their refusals are JSON-RPC error bodies
  // (docs/agent-server-wire.md). Gates (auth, body limit) still answer {"detail"}.
  if (/\/(a2a|mcp)(\/|\?|$)/.test(request.url) && json() && isObject(parsed) && 'jsonrpc' in parsed) {
    const error = parsed.error
    const rpc = parsed.jsonrpc === '2.0' && 'id' in parsed && isObject(error) && Number.isInteger(error.code) && typeof error.message === 'string' && error.message !== ''
    return rpc ? problems : [...problems, `${status} is not a JSON-RPC error: ${truncate(answer.body, 200)}`]
  }
  if (!type.startsWith('application/json')) problems.push(`${status} with content-type "${type}": ${truncate(answer.body, 200)}`)
  if (!json()) return [...problems, `${status} with a body that is not JSON: ${truncate(answer.body, 200)}`]
  if (!isObject(parsed) || Object.keys(parsed).join() !== 'detail') return [...problems, `${status} body is not {"detail": …}: ${truncate(answer.body, 200)}`]
  const detail = parsed.detail
  if (status === 422 && !isSentence422(detail)) {
    if (!Array.isArray(detail) || detail.length === 0) problems.push(`422 detail is not a non-empty list: ${truncate(answer.body, 200)}`)
    else {
      for (const e of detail) {
        const ok = isObject(e) && typeof e.type === 'string' && typeof e.msg === 'string' && 'input' in e &&
          Array.isArray(e.loc) && e.loc.length > 0 && LOCS.includes(e.loc[0] as string) &&
          e.loc.every((part) => typeof part === 'string' || typeof part === 'number') && (!('ctx' in e) || isObject(e.ctx))
        if (!ok) problems.push(`422 error is not pydantic's {type, loc, msg, input, ctx?}: ${truncate(JSON.stringify(e), 200)}`)
      }
    }
  } else if (typeof detail !== 'string' || detail === '') {
    problems.push(`${status} detail is not a sentence: ${truncate(answer.body, 200)}`)
  }
  if (status === 405 && !answer.headers.allow) problems.push('405 without an Allow header')
  if (status === 413 && detail !== 'Request Entity Too Large') problems.push(`413 with detail ${JSON.stringify(detail)}`)
  return problems
}
