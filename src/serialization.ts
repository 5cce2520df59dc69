import type { FastifyInstance } from 'fastify'
import fastJson from 'fast-json-stringify'

type Serialize = (data: unknown) => string
type Schema = Record<string, unknown>

/**
 * Response serializers compiled once per schema object, not once per route (the same schemas —
 * Deployment, Revision, the error bodies — serve many routes and both URL prefixes), and only when
 * a route first answers with that schema. Compiling every serializer up front was over a third of
 * hangar's start-up, and most runs of hangar in CI touch a handful of routes.
 */
export function installSerialization(app: FastifyInstance) {
  const compiled = new WeakMap<object, Serialize>()
  const compile = (schema: object): Serialize => {
    let serialize = compiled.get(schema)
    if (!serialize) {
      serialize = fastJson(nullableForm(schema as Schema) as unknown as Parameters<typeof fastJson>[0]) as Serialize
      compiled.set(schema, serialize)
    }
    return serialize
  }
  app.setSerializerCompiler(({ schema }) => {
    let serialize: Serialize | undefined
    return (data) => (serialize ??= compile(schema))(data)
  })
}

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS: readonly string[] = ['const', 'default', 'enum', 'examples']

/**
 * The schema with each "this or null" (`anyOf: [X, {type: 'null'}]`, as a nullable field is written
 * in the OpenAPI documents) turned into X with `nullable: true`, which serializes the same JSON.
 * fast-json-stringify serializes an `anyOf` by validating the value against each member in turn:
 * a Deployment, with 111 nullable fields, took ~12–17 µs to serialize that way and ~2 µs this way
 * (about a fifth of the CPU of a `POST /v2/deployments`). Only serializing sees this form: the routes' schemas, and
 * the OpenAPI documents made from them, keep theirs.
 */
export function nullableForm(schema: Schema): Schema {
  const orNull = Array.isArray(schema.anyOf) && schema.anyOf.length === 2 ? nonNullMember(schema.anyOf as Schema[]) : undefined
  if (orNull) {
    const { anyOf: _anyOf, ...siblings } = schema
    return nullableForm({ ...siblings, ...orNull, nullable: true })
  }
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) out[key] = DATA_KEYWORDS.includes(key) ? value : nested(value)
  return out
}

function nested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nested)
  return value !== null && typeof value === 'object' ? nullableForm(value as Schema) : value
}

/** Of `[X, {type: 'null'}]` (either order), X when it names one plain type (no `$ref`, no union of its own). */
function nonNullMember(members: Schema[]): Schema | undefined {
  const nullAt = members.findIndex((m) => m.type === 'null' && Object.keys(m).length === 1)
  if (nullAt < 0) return undefined
  const other = members[1 - nullAt]
  const plain = typeof other.type === 'string' && other.type !== 'null' && other.$ref === undefined && other.anyOf === undefined && other.oneOf === undefined
  return plain ? other : undefined
}
