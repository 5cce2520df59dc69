// Responses are serialized from a form of their schemas in which each "X or null" is X with
// `nullable: true` (src/serialization.ts): it must write exactly what the schema as documented
// writes, for any value the schema allows, and leave no `anyOf` of that kind behind (an `anyOf`
// makes fast-json-stringify validate the value against each member, which is what it saves).

import t from 'tap'
import fc from 'fast-check'
import fastJson from 'fast-json-stringify'
import { nullableForm } from '../src/serialization.js'
import { Assistant, Run, Thread } from '../src/schemas/agent.js'
import { Cron } from '../src/schemas/crons.js'
import { Deployment, DeploymentsList, Revision } from '../src/schemas/deployments.js'
import { Item } from '../src/schemas/store.js'
import { validArb } from './fuzz-arbitraries.js'
import { makeApp, dockerDeployment } from './helpers.js'

type Schema = Record<string, unknown>
const serializer = (schema: Schema) => fastJson(schema as never) as (value: unknown) => string
const SCHEMAS = { Deployment, DeploymentsList, Revision, Assistant, Thread, Run, Cron, Item } as Record<string, Schema>

/** Every `anyOf` of exactly one plain typed schema and `{type: 'null'}`, anywhere in `schema`. */
function orNulls(schema: unknown): number {
  if (Array.isArray(schema)) return schema.reduce((n: number, s) => n + orNulls(s), 0)
  if (schema === null || typeof schema !== 'object') return 0
  const s = schema as Schema
  const own = Array.isArray(s.anyOf) && s.anyOf.length === 2 && (s.anyOf as Schema[]).some((m) => m.type === 'null')
    && (s.anyOf as Schema[]).some((m) => typeof m.type === 'string' && m.type !== 'null') ? 1 : 0
  return own + Object.values(s).reduce((n: number, v) => n + orNulls(v), 0)
}

t.test('the nullable form writes what the documented schema writes, for any value it allows', async (t) => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const documented = serializer(schema)
    const nullable = serializer(nullableForm(schema))
    // A value the documented schema cannot write (it throws: hangar would answer 500) is left out.
    const written = (value: unknown) => {
      try {
        return documented(value)
      } catch {
        return undefined
      }
    }
    await fc.assert(fc.property(validArb(schema), (value) => {
      const expected = written(value)
      fc.pre(expected !== undefined)
      return nullable(value) === expected
    }), { numRuns: 150 })
    t.pass(`${name}: 150 values written alike`)
  }
})

t.test('no "X or null" is left for the serializer to validate, and the documented schema is untouched', async (t) => {
  t.ok(orNulls(Deployment) > 100, 'a Deployment has over a hundred nullable fields as documented')
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const before = JSON.stringify(schema)
    t.equal(orNulls(nullableForm(schema)), 0, `${name}: none left`)
    t.equal(JSON.stringify(schema), before, `${name} as documented is unchanged`)
  }
})

t.test('a null object and a null string are written as null, a value as its schema writes it', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      config: { anyOf: [{ type: 'object', properties: { a: { type: 'integer' } } }, { type: 'null' }] },
      name: { anyOf: [{ type: 'null' }, { type: 'string' }], description: 'either order' },
    },
  }
  const write = serializer(nullableForm(schema))
  t.equal(write({ config: null, name: null }), '{"config":null,"name":null}')
  t.equal(write({ config: { a: 1, extra: true }, name: 'n' }), '{"config":{"a":1},"name":"n"}')
  t.same(nullableForm(schema), {
    type: 'object',
    properties: {
      config: { type: 'object', properties: { a: { type: 'integer' } }, nullable: true },
      name: { type: 'string', description: 'either order', nullable: true },
    },
  })
})

t.test('unions that are more than "X or null" are left as they are', async (t) => {
  const schema = {
    anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }],
    default: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  }
  t.same(nullableForm(schema), schema, 'three members, and a default that only looks like a schema')
  const ref = { anyOf: [{ $ref: 'Other' }, { type: 'null' }] }
  t.same(nullableForm(ref), ref, 'a $ref member')
})

t.test('a deployment answered over HTTP is the same JSON as the documented schema writes', async (t) => {
  const { api } = await makeApp(t)
  const created = await api.post('/v2/deployments', dockerDeployment())
  t.equal(created.status, 201)
  const body = created.body as Record<string, unknown>
  t.equal(created.text, serializer(Deployment as Schema)(body))
  t.ok(Object.values(body).includes(null), 'some of its fields are null')
})
