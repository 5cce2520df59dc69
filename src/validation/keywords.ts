// Which JSON Schema keywords the pydantic-style validator implements. A schema that carries any
// other keyword is refused when it is compiled (at start-up: every route's request schemas are
// compiled as the route is registered), so no constraint a schema states is ever silently skipped.

import type { TSchema } from '@sinclair/typebox'

/**
 * Keywords that describe a schema without constraining what it accepts (documentation for the
 * OpenAPI document). `default` is not only an annotation: an absent optional field takes it.
 */
export const ANNOTATIONS: readonly string[] = [
  'title', 'description', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', '$id', '$schema', '$comment',
]

/** The formats a `type: "string"` schema may name; each has its own pydantic type (`UUID`, `datetime`). */
export const FORMATS: readonly string[] = ['uuid', 'date-time']

/** What kind of pydantic type a schema compiles to, which decides the keywords it may carry. */
export type SchemaKind =
  | 'union' | 'literal' | 'model' | 'dict' | 'list' | 'string' | 'formatted-string' | 'integer' | 'number' | 'boolean' | 'null' | 'any'

/** The constraining keywords each kind implements (annotations are allowed everywhere). */
export const IMPLEMENTED: Readonly<Record<SchemaKind, readonly string[]>> = {
  union: ['anyOf'],
  literal: ['type', 'enum', 'const'],
  model: ['type', 'properties', 'required', 'additionalProperties'],
  dict: ['type', 'additionalProperties'],
  list: ['type', 'items', 'minItems', 'maxItems'],
  string: ['type', 'minLength', 'maxLength', 'pattern'],
  'formatted-string': ['type', 'format'],
  integer: ['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  number: ['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  boolean: ['type'],
  null: ['type'],
  any: [],
}

/** A schema the validator cannot honour in full: a programming error, reported at start-up. */
export class UnsupportedSchemaError extends Error {
  override name = 'UnsupportedSchemaError'
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isLength = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0
const JSON_TYPE_OF: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === 'number',
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
}

/** The kind of a schema, refusing shapes no kind covers (a `type` list, an unknown type or format). */
export function kindOf(schema: TSchema, where: string): SchemaKind {
  if ('anyOf' in schema) return 'union'
  if ('enum' in schema || 'const' in schema) return 'literal'
  switch (schema.type) {
    case 'object':
      return 'properties' in schema ? 'model' : 'dict'
    case 'array':
      return 'list'
    case 'string':
      if (!('format' in schema)) return 'string'
      if (!FORMATS.includes(schema.format as string)) {
        throw new UnsupportedSchemaError(`${where}: format ${JSON.stringify(schema.format)} is not implemented by the validator (it implements ${FORMATS.join(', ')})`)
      }
      return 'formatted-string'
    case 'integer':
    case 'number':
    case 'boolean':
    case 'null':
      return schema.type
    case undefined:
      return 'any'
    default:
      throw new UnsupportedSchemaError(`${where}: type ${JSON.stringify(schema.type)} is not implemented by the validator`)
  }
}

/**
 * Refuses a schema node carrying a keyword its kind does not implement, or an implemented keyword
 * with a value the validator cannot use. `where` names the schema and the node, e.g.
 * `POST /runs/batch body#/items/properties/limit`.
 */
export function checkKeywords(schema: TSchema, kind: SchemaKind, where: string): void {
  const implemented = IMPLEMENTED[kind]
  const unknown = Object.keys(schema).filter((key) => !implemented.includes(key) && !ANNOTATIONS.includes(key))
  if (unknown.length > 0) {
    const keywords = unknown.map((key) => `'${key}'`).join(', ')
    const accepted = implemented.length > 0 ? implemented.join(', ') : 'none'
    throw new UnsupportedSchemaError(
      `${where}: schema keyword${unknown.length > 1 ? 's' : ''} ${keywords} ${unknown.length > 1 ? 'are' : 'is'} not implemented by the validator ` +
        `(a ${kind} schema implements: ${accepted}); implement ${unknown.length > 1 ? 'them' : 'it'} in src/validation or leave ${unknown.length > 1 ? 'them' : 'it'} out`,
    )
  }
  const bad = (keyword: string, expected: string) =>
    new UnsupportedSchemaError(`${where}: schema keyword '${keyword}' must be ${expected}, got ${JSON.stringify(schema[keyword])}`)
  for (const keyword of ['minLength', 'maxLength', 'minItems', 'maxItems']) {
    if (keyword in schema && !isLength(schema[keyword])) throw bad(keyword, 'a non-negative integer')
  }
  for (const keyword of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
    if (keyword in schema && !Number.isFinite(schema[keyword])) throw bad(keyword, 'a finite number')
  }
  if ('pattern' in schema && typeof schema.pattern !== 'string') throw bad('pattern', 'a string')
  if ('required' in schema && !(Array.isArray(schema.required) && schema.required.every((k: unknown) => typeof k === 'string'))) {
    throw bad('required', 'a list of property names')
  }
  if ('properties' in schema && !isObject(schema.properties)) throw bad('properties', 'an object of schemas')
  if ('items' in schema && !isObject(schema.items)) throw bad('items', 'one schema (tuple forms are not implemented)')
  if (kind === 'model' && 'additionalProperties' in schema && schema.additionalProperties !== false) {
    throw bad('additionalProperties', 'false on a model (extra="forbid"); typed extra fields are not implemented')
  }
  if (kind === 'dict' && 'additionalProperties' in schema && !isObject(schema.additionalProperties) && schema.additionalProperties !== true) {
    throw bad('additionalProperties', 'a schema or true')
  }
  if ('anyOf' in schema && !(Array.isArray(schema.anyOf) && schema.anyOf.length > 0 && schema.anyOf.every(isObject))) {
    throw bad('anyOf', 'a non-empty list of schemas')
  }
  if ('enum' in schema && !(Array.isArray(schema.enum) && schema.enum.length > 0)) throw bad('enum', 'a non-empty list')
  if ('enum' in schema && 'const' in schema) throw bad('const', 'absent when enum is present')
  if (kind === 'literal' && 'type' in schema) {
    const values: unknown[] = 'enum' in schema ? schema.enum : [schema.const]
    const matches = JSON_TYPE_OF[schema.type as string]
    if (!matches || !values.every(matches)) throw bad('type', `the JSON type of every literal value (${JSON.stringify(values)})`)
  }
}
