// pydantic's scalar types in lax mode: str (with its length and pattern constraints), UUID,
// datetime, int and float (with their bounds), bool. The error texts are pydantic-core's
// (docs/validation.md names the versions).

import type { TSchema } from '@sinclair/typebox'
import { err, fail, INVALID, plural, type Check } from './check.js'
import { readDatetime } from './datetime.js'
import { UnsupportedSchemaError } from './keywords.js'
import { isCanonicalUuid, parseUuid } from './uuid.js'

/** `str` with `min_length`, `max_length` and `pattern`, checked in pydantic-core's order. */
export function string(schema: TSchema, where: string): Check {
  const min = schema.minLength as number | undefined
  const max = schema.maxLength as number | undefined
  const pattern = schema.pattern as string | undefined
  const regex = pattern === undefined ? undefined : compilePattern(pattern, where)
  return (input, loc, errors) => {
    if (typeof input !== 'string') return fail(errors, err('string_type', loc, 'Input should be a valid string', input))
    if (!input.isWellFormed()) {
      return fail(errors, err('string_unicode', loc, 'Input should be a valid string, unable to parse raw data as a unicode string', input))
    }
    const length = min === undefined && max === undefined ? 0 : [...input].length
    if (min !== undefined && length < min) {
      return fail(errors, err('string_too_short', loc, `String should have at least ${plural(min, 'character')}`, input, { min_length: min }))
    }
    if (max !== undefined && length > max) {
      return fail(errors, err('string_too_long', loc, `String should have at most ${plural(max, 'character')}`, input, { max_length: max }))
    }
    if (regex && !regex.test(input)) {
      return fail(errors, err('string_pattern_mismatch', loc, `String should match pattern '${pattern}'`, input, { pattern }))
    }
    return input
  }
}

/**
 * pydantic matches a pattern with Rust's `regex` crate, searching anywhere in the string (anchor
 * with `^…$`). JavaScript's Unicode mode reads the patterns hangar's schemas use the same way; a
 * pattern it cannot compile fails its route's validator when compiled (at the route's first request).
 */
function compilePattern(pattern: string, where: string): RegExp {
  try {
    return new RegExp(pattern, 'u')
  } catch (error) {
    throw new UnsupportedSchemaError(`${where}: pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}`)
  }
}

export const uuid: Check = (input, loc, errors) => {
  if (typeof input !== 'string') return fail(errors, err('uuid_type', loc, 'UUID input should be a string, bytes or UUID object', input))
  // Every request naming a resource passes here, nearly always with the canonical form: nothing to parse.
  if (isCanonicalUuid(input)) return input
  const parsed = parseUuid(input)
  if (parsed.ok) return parsed.value
  return fail(errors, err('uuid_parsing', loc, `Input should be a valid UUID, ${parsed.error}`, input, { error: parsed.error }))
}

const DATETIME_MESSAGES = {
  datetime_parsing: 'Input should be a valid datetime',
  datetime_from_date_parsing: 'Input should be a valid datetime or date',
} as const

/** A datetime (text, or a Unix timestamp); passed on as ISO 8601 text in UTC. */
export const datetime: Check = (input, loc, errors) => {
  if (typeof input !== 'string' && typeof input !== 'number') {
    return fail(errors, err('datetime_type', loc, 'Input should be a valid datetime', input))
  }
  const parsed = readDatetime(input)
  if (parsed.ok) return parsed.iso
  return fail(errors, err(parsed.type, loc, `${DATETIME_MESSAGES[parsed.type]}, ${parsed.error}`, input, { error: parsed.error }))
}

const INT_STRING = /^[+-]?\d+(\.0*)?$/
const integer: Check = (input, loc, errors) => {
  if (typeof input === 'boolean') return input ? 1 : 0
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return fail(errors, err('finite_number', loc, 'Input should be a finite number', input))
    if (!Number.isInteger(input)) {
      return fail(errors, err('int_from_float', loc, 'Input should be a valid integer, got a number with a fractional part', input))
    }
    return input
  }
  if (typeof input === 'string') {
    const text = input.trim()
    if (INT_STRING.test(text)) return Number.parseInt(text, 10)
    return fail(errors, err('int_parsing', loc, 'Input should be a valid integer, unable to parse string as an integer', input))
  }
  return fail(errors, err('int_type', loc, 'Input should be a valid integer', input))
}

const FLOAT_STRING = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const SPECIAL_FLOATS: Record<string, number> = { inf: Infinity, infinity: Infinity, nan: NaN }
const float: Check = (input, loc, errors) => {
  if (typeof input === 'number') return input
  if (typeof input === 'boolean') return input ? 1 : 0
  if (typeof input === 'string') {
    const text = input.trim()
    if (FLOAT_STRING.test(text)) return Number(text)
    const sign = text.startsWith('-') ? -1 : 1
    const special = SPECIAL_FLOATS[text.replace(/^[+-]/, '').toLowerCase()]
    if (special !== undefined) return sign * special
    return fail(errors, err('float_parsing', loc, 'Input should be a valid number, unable to parse string as a number', input))
  }
  return fail(errors, err('float_type', loc, 'Input should be a valid number', input))
}

/** The bounds in the order pydantic-core checks them (le, lt, ge, gt): keyword, error type, words, ctx key, test. */
const BOUNDS: [string, string, string, string, (v: number, b: number) => boolean][] = [
  ['maximum', 'less_than_equal', 'less than or equal to', 'le', (v, b) => v <= b],
  ['exclusiveMaximum', 'less_than', 'less than', 'lt', (v, b) => v < b],
  ['minimum', 'greater_than_equal', 'greater than or equal to', 'ge', (v, b) => v >= b],
  ['exclusiveMinimum', 'greater_than', 'greater than', 'gt', (v, b) => v > b],
]

/** `int` or `float` with `ge`/`gt`/`le`/`lt`, checked after the number was parsed; the error echoes the original input. */
export function number(schema: TSchema): Check {
  const parse = schema.type === 'integer' ? integer : float
  const active = BOUNDS.filter(([keyword]) => typeof schema[keyword] === 'number')
  if (active.length === 0) return parse
  return (input, loc, errors) => {
    const value = parse(input, loc, errors)
    if (value === INVALID) return INVALID
    for (const [keyword, type, words, ctxKey, ok] of active) {
      const bound = schema[keyword] as number
      if (!ok(value as number, bound)) return fail(errors, err(type, loc, `Input should be ${words} ${bound}`, input, { [ctxKey]: bound }))
    }
    return value
  }
}

const TRUE_STRINGS: ReadonlySet<string> = new Set(['1', 'on', 't', 'true', 'y', 'yes'])
const FALSE_STRINGS: ReadonlySet<string> = new Set(['0', 'off', 'f', 'false', 'n', 'no'])
export const boolean: Check = (input, loc, errors) => {
  if (typeof input === 'boolean') return input
  if (typeof input === 'number' && (input === 0 || input === 1)) return input === 1
  if (typeof input === 'string') {
    const text = input.toLowerCase()
    if (TRUE_STRINGS.has(text)) return true
    if (FALSE_STRINGS.has(text)) return false
  }
  if (typeof input === 'number' || typeof input === 'string') {
    return fail(errors, err('bool_parsing', loc, 'Input should be a valid boolean, unable to interpret input', input))
  }
  return fail(errors, err('bool_type', loc, 'Input should be a valid boolean', input))
}
