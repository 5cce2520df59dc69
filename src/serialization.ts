import type { FastifyInstance } from 'fastify'
import fastJson from 'fast-json-stringify'

type Serialize = (data: unknown) => string

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
      serialize = fastJson(schema as Parameters<typeof fastJson>[0]) as Serialize
      compiled.set(schema, serialize)
    }
    return serialize
  }
  app.setSerializerCompiler(({ schema }) => {
    let serialize: Serialize | undefined
    return (data) => (serialize ??= compile(schema))(data)
  })
}
