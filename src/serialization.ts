import type { FastifyInstance } from 'fastify'
import fastJson from 'fast-json-stringify'

/**
 * Response serializers compiled once per schema object, not once per route: the same schemas
 * (Deployment, Revision, the error bodies) serve many routes and both URL prefixes, and compiling
 * them is most of hangar's start-up time.
 */
export function installSerialization(app: FastifyInstance) {
  const compiled = new WeakMap<object, (data: unknown) => string>()
  app.setSerializerCompiler(({ schema }) => {
    let serialize = compiled.get(schema)
    if (!serialize) {
      serialize = fastJson(schema as Parameters<typeof fastJson>[0]) as (data: unknown) => string
      compiled.set(schema, serialize)
    }
    return serialize
  })
}
