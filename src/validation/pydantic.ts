// Validates values against hangar's (TypeBox / JSON Schema) schemas the way pydantic v2 validates
// a FastAPI request in lax mode: the same coercions (e.g. "5" → 5 for an int), the same error
// types, messages, locations and context, every error at once, and the same output — a "model"
// holding every declared field, absent optional ones set to their default (null unless stated).
// Unknown fields are ignored, as pydantic's default `extra="ignore"` does; a model schema with
// `additionalProperties: false` refuses them (`extra="forbid"`), after its fields' own errors.
//
// A schema is compiled once (for routes, when the route is registered, so at start-up). Compiling
// refuses any keyword the validator does not implement (see keywords.ts): a constraint a schema
// states is enforced, or start-up stops naming it.

import type { TSchema } from '@sinclair/typebox'
import type { PydanticError } from './pydantic-error.js'
import { err, fail, INVALID, plural, type Check, type Loc } from './check.js'
import { checkKeywords, kindOf } from './keywords.js'
import { boolean, datetime, number, string, uuid } from './scalars.js'

export { INVALID, type Check, type Loc } from './check.js'

/** An optional field that is neither nullable nor defaulted is left out of the output when absent. */
export const OMIT: unique symbol = Symbol('omit')
export const acceptsNull = (schema: TSchema) => (schema.anyOf as TSchema[] | undefined)?.some((m) => m.type === 'null') === true
/** What an absent optional field becomes: its default, else null when it is nullable, else nothing. */
export const absentValue = (schema: TSchema): unknown => ('default' in schema ? schema.default : acceptsNull(schema) ? null : OMIT)

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Python's repr of a literal value, as pydantic prints it in `literal_error`. */
const repr = (v: unknown) => (typeof v === 'string' ? `'${v}'` : v === null ? 'None' : typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v))

/** "'a'", "'a' or 'b'", "'a', 'b' or 'c'" */
function expected(values: readonly unknown[]): string {
  const parts = values.map(repr)
  return parts.length < 2 ? parts.join('') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`
}

/**
 * Compiles a schema into its validator. `where` names the schema in the error a keyword the
 * validator does not implement raises (e.g. `POST /runs/batch body`); nodes below it are named by
 * JSON pointer (`POST /runs/batch body#/items/properties/limit`).
 */
export function compile(schema: TSchema, where = 'schema'): Check {
  return compileAt(schema, where.includes('#') ? where : `${where}#`)
}

function compileAt(schema: TSchema, where: string): Check {
  const kind = kindOf(schema, where)
  checkKeywords(schema, kind, where)
  switch (kind) {
    case 'union':
      return union(schema.anyOf as TSchema[], where)
    case 'literal':
      return literal('enum' in schema ? (schema.enum as unknown[]) : [schema.const])
    case 'model':
      return model(schema, where)
    case 'dict':
      return dict(schema, where)
    case 'list':
      return list(schema, where)
    case 'string':
      return string(schema, where)
    case 'formatted-string':
      return schema.format === 'uuid' ? uuid : datetime
    case 'integer':
    case 'number':
      return number(schema)
    case 'boolean':
      return boolean
    case 'null':
      return (input, loc, errors) => (input === null ? null : fail(errors, err('none_required', loc, 'Input should be None', input)))
    case 'any':
      return (input) => input
  }
}

/**
 * `Optional[T]` (null passes, anything else is validated as T, errors untagged), or a general
 * union: the first member that accepts the input wins; when none does, every member's errors are
 * reported with the member's tag in `loc`, as pydantic does.
 */
function union(members: TSchema[], where: string): Check {
  const compiled = members.map((member, i) => ({ member, check: compileAt(member, `${where}/anyOf/${i}`) }))
  const others = compiled.filter(({ member }) => member.type !== 'null')
  const hasNull = others.length < members.length
  if (others.length === 1) {
    const inner = others[0].check
    return (input, loc, errors) => (hasNull && input === null ? null : inner(input, loc, errors))
  }
  const checks = others.map(({ member, check }) => ({ tag: unionTag(member), check, exact: exactType(member) }))
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

function model(schema: TSchema, where: string): Check {
  const required = new Set<string>(schema.required ?? [])
  const fields = Object.entries(schema.properties as Record<string, TSchema>).map(([name, field]) => ({
    name,
    check: compileAt(field, `${where}/properties/${name}`),
    required: required.has(name),
    fallback: absentValue(field),
  }))
  const forbidExtra = schema.additionalProperties === false
  const declared = new Set(fields.map((field) => field.name))
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
        } else if (field.fallback !== OMIT) {
          // Each input gets its own copy of a default object or list; a scalar is its own copy.
          out[field.name] = typeof field.fallback === 'object' && field.fallback !== null ? structuredClone(field.fallback) : field.fallback
        }
        continue
      }
      const value = field.check(input[field.name], [...loc, field.name], errors)
      if (value === INVALID) ok = false
      else out[field.name] = value
    }
    if (forbidExtra) {
      for (const key of Object.keys(input).filter((key) => !declared.has(key))) {
        errors.push(err('extra_forbidden', [...loc, key], 'Extra inputs are not permitted', input[key]))
        ok = false
      }
    }
    return ok ? out : INVALID
  }
}

function dict(schema: TSchema, where: string): Check {
  const value = typeof schema.additionalProperties === 'object'
    ? compileAt(schema.additionalProperties as TSchema, `${where}/additionalProperties`)
    : (v: unknown) => v
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

/**
 * `list[T]` with `min_length` / `max_length`, as pydantic-core checks them: a list longer than the
 * maximum is refused as a whole (its items' errors are dropped), the minimum is checked once every
 * item is valid. Both count the input's items and echo the whole list.
 */
function list(schema: TSchema, where: string): Check {
  const item = 'items' in schema ? compileAt(schema.items as TSchema, `${where}/items`) : (v: unknown) => v
  const min = schema.minItems as number | undefined
  const max = schema.maxItems as number | undefined
  const length = (type: string, bound: string, n: number, actual: number, input: unknown, loc: Loc) =>
    err(type, loc, `List should have ${bound} ${plural(n, 'item')} after validation, not ${actual}`, input, {
      field_type: 'List', [type === 'too_short' ? 'min_length' : 'max_length']: n, actual_length: actual,
    })
  return (input, loc, errors) => {
    if (!Array.isArray(input)) return fail(errors, err('list_type', loc, 'Input should be a valid list', input))
    if (max !== undefined && input.length > max) return fail(errors, length('too_long', 'at most', max, input.length, input, loc))
    let ok = true
    const out = input.map((v, i) => {
      const r = item(v, [...loc, i], errors)
      if (r === INVALID) ok = false
      return r
    })
    if (!ok) return INVALID
    if (min !== undefined && out.length < min) return fail(errors, length('too_short', 'at least', min, out.length, input, loc))
    return out
  }
}
