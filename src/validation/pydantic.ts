// Validates values against hangar's (TypeBox / JSON Schema) schemas the way pydantic v2 validates
// a FastAPI request in lax mode: the same coercions (e.g. "5" → 5 for an int), the same error
// types, messages, locations and context, every error at once, and the same output — a "model"
// holding every declared field, absent optional ones set to their default (null unless stated).
// Unknown fields are ignored, as pydantic's default `extra="ignore"` does.

import type { TSchema } from '@sinclair/typebox'
import type { PydanticError } from '../errors.js'
import { parseUuid } from './uuid.js'
import { readDatetime } from './datetime.js'

export type Loc = (string | number)[]
/** Validates `input` at `loc`; pushes errors and returns INVALID on failure, else the validated value. */
export type Check = (input: unknown, loc: Loc, errors: PydanticError[]) => unknown
export const INVALID: unique symbol = Symbol('invalid')

/** An optional field that is neither nullable nor defaulted is left out of the output when absent. */
export const OMIT: unique symbol = Symbol('omit')
export const acceptsNull = (schema: TSchema) => (schema.anyOf as TSchema[] | undefined)?.some((m) => m.type === 'null') === true
/** What an absent optional field becomes: its default, else null when it is nullable, else nothing. */
export const absentValue = (schema: TSchema): unknown => ('default' in schema ? schema.default : acceptsNull(schema) ? null : OMIT)

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const err = (type: string, loc: Loc, msg: string, input: unknown, ctx?: Record<string, unknown>): PydanticError =>
  ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx }

/** Python's repr of a literal value, as pydantic prints it in `literal_error`. */
const repr = (v: unknown) => (typeof v === 'string' ? `'${v}'` : v === null ? 'None' : typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v))

/** "'a'", "'a' or 'b'", "'a', 'b' or 'c'" */
function expected(values: readonly unknown[]): string {
  const parts = values.map(repr)
  return parts.length < 2 ? parts.join('') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

export function compile(schema: TSchema): Check {
  if (Array.isArray(schema.anyOf)) return nullable(schema.anyOf as TSchema[])
  if (Array.isArray(schema.enum)) return literal(schema.enum)
  if ('const' in schema) return literal([schema.const])
  switch (schema.type) {
    case 'object':
      return schema.properties ? model(schema) : dict(schema)
    case 'array':
      return list(schema)
    case 'string':
      return schema.format === 'uuid' ? uuid : schema.format === 'date-time' ? datetime : string(schema)
    case 'integer':
      return bounded(integer, schema)
    case 'number':
      return bounded(float, schema)
    case 'boolean':
      return boolean
    case 'null':
      return (input, loc, errors) => (input === null ? null : fail(errors, err('none_required', loc, 'Input should be None', input)))
    case undefined:
      return (input) => input
    default:
      throw new Error(`schema type ${String(schema.type)} is not supported by the validator`)
  }
}

function fail(errors: PydanticError[], error: PydanticError): typeof INVALID {
  errors.push(error)
  return INVALID
}

/**
 * `Optional[T]` (null passes, anything else is validated as T, errors untagged), or a general
 * union: the first member that accepts the input wins; when none does, every member's errors are
 * reported with the member's tag in `loc`, as pydantic does.
 */
function nullable(members: TSchema[]): Check {
  const others = members.filter((m) => m.type !== 'null')
  const hasNull = others.length < members.length
  if (others.length === 1) {
    const inner = compile(others[0])
    return (input, loc, errors) => (hasNull && input === null ? null : inner(input, loc, errors))
  }
  const checks = others.map((member) => ({ tag: unionTag(member), check: compile(member), exact: exactType(member) }))
  return (input, loc, errors) => {
    if (hasNull && input === null) return null
    // Smart mode: a member whose type the input already has wins before any lax coercion
    // (so `true` stays a boolean in number | boolean, and "1" a string in number | string).
    const exact = checks.find((c) => c.exact(input))
    if (exact) {
      const value = exact.check(input, [...loc, exact.tag], [])
      if (value !== INVALID) return value
    }
    const collected: PydanticError[] = []
    for (const { tag, check } of checks) {
      const attempt: PydanticError[] = []
      const value = check(input, [...loc, tag], attempt)
      if (value !== INVALID) return value
      collected.push(...attempt)
    }
    errors.push(...collected)
    return INVALID
  }
}

/** Whether an input already has a member's type (no coercion needed). */
function exactType(schema: TSchema): (input: unknown) => boolean {
  switch (schema.type) {
    case 'string':
      return (v) => typeof v === 'string'
    case 'number':
      return (v) => typeof v === 'number'
    case 'integer':
      return (v) => typeof v === 'number' && Number.isInteger(v)
    case 'boolean':
      return (v) => typeof v === 'boolean'
    case 'array':
      return Array.isArray
    case 'object':
      return isObject
    default:
      return () => false
  }
}

/** How pydantic names a union member in `loc`. */
function unionTag(schema: TSchema): string {
  if ('const' in schema) return `literal[${repr(schema.const)}]`
  if (Array.isArray(schema.enum)) return `literal[${schema.enum.map(repr).join(',')}]`
  const names: Record<string, string> = { string: 'str', integer: 'int', number: 'float', boolean: 'bool' }
  if (schema.type === 'array') return `list[${unionTag((schema.items as TSchema) ?? {})}]`
  if (schema.type === 'object') return (schema.title as string | undefined) ?? 'dict[str,any]'
  if (schema.format === 'uuid') return 'uuid'
  if (schema.format === 'date-time') return 'datetime'
  return names[schema.type as string] ?? 'any'
}

function literal(values: readonly unknown[]): Check {
  const text = expected(values)
  return (input, loc, errors) =>
    values.includes(input) ? input : fail(errors, err('literal_error', loc, `Input should be ${text}`, input, { expected: text }))
}

function model(schema: TSchema): Check {
  const required = new Set<string>(schema.required ?? [])
  const fields = Object.entries(schema.properties as Record<string, TSchema>).map(([name, field]) => ({
    name,
    check: compile(field),
    required: required.has(name),
    fallback: absentValue(field),
  }))
  return (input, loc, errors) => {
    if (!isObject(input)) {
      return fail(errors, err('model_attributes_type', loc, 'Input should be a valid dictionary or object to extract fields from', input))
    }
    const out: Record<string, unknown> = {}
    let ok = true
    for (const field of fields) {
      if (!Object.hasOwn(input, field.name)) {
        if (field.required) {
          errors.push(err('missing', [...loc, field.name], 'Field required', input))
          ok = false
        } else if (field.fallback !== OMIT) out[field.name] = structuredClone(field.fallback)
        continue
      }
      const value = field.check(input[field.name], [...loc, field.name], errors)
      if (value === INVALID) ok = false
      else out[field.name] = value
    }
    return ok ? out : INVALID
  }
}

function dict(schema: TSchema): Check {
  const value = typeof schema.additionalProperties === 'object' ? compile(schema.additionalProperties as TSchema) : (v: unknown) => v
  return (input, loc, errors) => {
    if (!isObject(input)) return fail(errors, err('dict_type', loc, 'Input should be a valid dictionary', input))
    const out: Record<string, unknown> = {}
    let ok = true
    for (const [key, item] of Object.entries(input)) {
      const v = value(item, [...loc, key], errors)
      if (v === INVALID) ok = false
      else Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
    }
    return ok ? out : INVALID
  }
}

function list(schema: TSchema): Check {
  const item = compile((schema.items as TSchema) ?? {})
  const max = schema.maxItems as number | undefined
  return (input, loc, errors) => {
    if (!Array.isArray(input)) return fail(errors, err('list_type', loc, 'Input should be a valid list', input))
    if (max !== undefined && input.length > max) {
      return fail(
        errors,
        err('too_long', loc, `List should have at most ${plural(max, 'item')} after validation, not ${input.length}`, input, {
          field_type: 'List',
          max_length: max,
          actual_length: input.length,
        }),
      )
    }
    let ok = true
    const out = input.map((v, i) => {
      const r = item(v, [...loc, i], errors)
      if (r === INVALID) ok = false
      return r
    })
    return ok ? out : INVALID
  }
}

function string(schema: TSchema): Check {
  const min = schema.minLength as number | undefined
  const max = schema.maxLength as number | undefined
  return (input, loc, errors) => {
    if (typeof input !== 'string') return fail(errors, err('string_type', loc, 'Input should be a valid string', input))
    if (!input.isWellFormed()) {
      return fail(errors, err('string_unicode', loc, 'Input should be a valid string, unable to parse raw data as a unicode string', input))
    }
    const length = [...input].length
    if (min !== undefined && length < min) {
      return fail(errors, err('string_too_short', loc, `String should have at least ${plural(min, 'character')}`, input, { min_length: min }))
    }
    if (max !== undefined && length > max) {
      return fail(errors, err('string_too_long', loc, `String should have at most ${plural(max, 'character')}`, input, { max_length: max }))
    }
    return input
  }
}

const uuid: Check = (input, loc, errors) => {
  if (typeof input !== 'string') return fail(errors, err('uuid_type', loc, 'UUID input should be a string, bytes or UUID object', input))
  const parsed = parseUuid(input)
  if (parsed.ok) return parsed.value
  return fail(errors, err('uuid_parsing', loc, `Input should be a valid UUID, ${parsed.error}`, input, { error: parsed.error }))
}

const DATETIME_MESSAGES = {
  datetime_parsing: 'Input should be a valid datetime',
  datetime_from_date_parsing: 'Input should be a valid datetime or date',
} as const

/** A datetime (text, or a Unix timestamp); passed on as ISO 8601 text in UTC. */
const datetime: Check = (input, loc, errors) => {
  if (typeof input !== 'string' && typeof input !== 'number') return fail(errors, err('datetime_type', loc, 'Input should be a valid datetime', input))
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

/** ge/le/gt/lt checks after a number was parsed; the error echoes the original input. */
function bounded(parse: Check, schema: TSchema): Check {
  const bounds: [keyof TSchema, string, string, (v: number, b: number) => boolean][] = [
    ['minimum', 'greater_than_equal', 'greater than or equal to', (v, b) => v >= b],
    ['exclusiveMinimum', 'greater_than', 'greater than', (v, b) => v > b],
    ['maximum', 'less_than_equal', 'less than or equal to', (v, b) => v <= b],
    ['exclusiveMaximum', 'less_than', 'less than', (v, b) => v < b],
  ]
  const active = bounds.filter(([key]) => typeof schema[key] === 'number')
  if (active.length === 0) return parse
  const ctxKey: Record<string, string> = { minimum: 'ge', exclusiveMinimum: 'gt', maximum: 'le', exclusiveMaximum: 'lt' }
  return (input, loc, errors) => {
    const value = parse(input, loc, errors)
    if (value === INVALID) return INVALID
    for (const [key, type, words, ok] of active) {
      const bound = schema[key] as number
      if (!ok(value as number, bound)) {
        return fail(errors, err(type, loc, `Input should be ${words} ${bound}`, input, { [ctxKey[key as string]]: bound }))
      }
    }
    return value
  }
}

const TRUE_STRINGS = new Set(['1', 'on', 't', 'true', 'y', 'yes'])
const FALSE_STRINGS = new Set(['0', 'off', 'f', 'false', 'n', 'no'])
const boolean: Check = (input, loc, errors) => {
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
