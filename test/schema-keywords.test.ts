// Every keyword a schema states is enforced with pydantic's error, and a keyword the validator does
// not implement stops start-up. Error texts: pydantic-core 2.46.4 src/errors/types.rs (templates),
// src/validators/list.rs and src/input/return_enums.rs (list lengths), src/validators/string.rs
// (string constraints; patterns are searched, not anchored, with the Rust `regex` crate).
import t from 'tap'
import { Type, type TSchema } from '@sinclair/typebox'
import type { PydanticError } from '../src/validation/pydantic-error.js'
import { UnsupportedSchemaError } from '../src/validation/keywords.js'
import { compile, INVALID } from '../src/validation/pydantic.js'
import { compileRequest } from '../src/validation/request.js'
import { buildTestApp, makeApp } from './helpers.js'

/** What validating `input` against `schema` yields: the value, or pydantic's errors. */
function validate(schema: TSchema, input: unknown): { value: unknown } | { errors: PydanticError[] } {
  const errors: PydanticError[] = []
  const value = compile(schema)(input, ['body'], errors)
  return value === INVALID ? { errors } : { value }
}

t.test('POST /runs/batch with an empty list is a 422 too_short, not 200 []', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/runs/batch', [])
  t.equal(res.status, 422)
  t.same(res.body, {
    detail: [{
      type: 'too_short', loc: ['body'], msg: 'List should have at least 1 item after validation, not 0', input: [],
      ctx: { field_type: 'List', min_length: 1, actual_length: 0 },
    }],
  })
  const one = await api.post('/runs/batch', [{ assistant_id: 'agent', input: { messages: [] } }])
  t.equal(one.status, 200, 'one run is enough')
  t.equal(one.body.length, 1)
})

t.test('a bulk delete naming more than 100 deployments is a 422 too_long echoing the whole list', async (t) => {
  const { api } = await makeApp(t)
  const ids = Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
  const res = await api.delete(`/v2/deployments?${ids.map((id) => `deployment_ids=${id}`).join('&')}`)
  t.equal(res.status, 422)
  t.same(res.body, {
    detail: [{
      type: 'too_long', loc: ['query', 'deployment_ids'], msg: 'List should have at most 100 items after validation, not 101', input: ids,
      ctx: { field_type: 'List', max_length: 100, actual_length: 101 },
    }],
  })
})

t.test('the journal status filter answers pydantic\'s pattern error from the schema alone', async (t) => {
  const { api } = await makeApp(t)
  const pattern = '^[1-5]([0-9]{2}|xx)$'
  for (const status of ['oops', '600', '4x', '404 ', '4XX']) {
    const res = await api.get(`/_hangar/requests?status=${encodeURIComponent(status)}`)
    t.equal(res.status, 422, status)
    t.same(res.body, {
      detail: [{ type: 'string_pattern_mismatch', loc: ['query', 'status'], msg: `String should match pattern '${pattern}'`, input: status, ctx: { pattern } }],
    }, status)
  }
  for (const status of ['404', '4xx', '2xx']) t.equal((await api.get(`/_hangar/requests?status=${status}`)).status, 200, status)
})

t.test('list lengths: item errors come before the minimum, the maximum refuses the list whole', async (t) => {
  const schema = Type.Array(Type.Integer(), { minItems: 2, maxItems: 3 })
  t.same(validate(schema, [1, 2]), { value: [1, 2] })
  t.same(validate(schema, ['x']), {
    errors: [{ type: 'int_parsing', loc: ['body', 0], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' }],
  }, 'an invalid item is reported; the length is not checked')
  t.same(validate(schema, [1]), {
    errors: [{ type: 'too_short', loc: ['body'], msg: 'List should have at least 2 items after validation, not 1', input: [1], ctx: { field_type: 'List', min_length: 2, actual_length: 1 } }],
  })
  t.same(validate(schema, ['a', 'b', 'c', 'd']), {
    errors: [{ type: 'too_long', loc: ['body'], msg: 'List should have at most 3 items after validation, not 4', input: ['a', 'b', 'c', 'd'], ctx: { field_type: 'List', max_length: 3, actual_length: 4 } }],
  }, 'too long: the items\' own errors are dropped')
  t.same(validate(Type.Array(Type.String(), { maxItems: 1 }), ['a', 'b']), {
    errors: [{ type: 'too_long', loc: ['body'], msg: 'List should have at most 1 item after validation, not 2', input: ['a', 'b'], ctx: { field_type: 'List', max_length: 1, actual_length: 2 } }],
  }, 'one item, singular')
})

t.test('a pattern is searched anywhere in the string, after the length checks', async (t) => {
  const schema = Type.String({ pattern: '[0-9]{3}', maxLength: 5 })
  t.same(validate(schema, 'ab123'), { value: 'ab123' }, 'not anchored: a match inside the string passes')
  t.same(validate(schema, 'ab12'), {
    errors: [{ type: 'string_pattern_mismatch', loc: ['body'], msg: "String should match pattern '[0-9]{3}'", input: 'ab12', ctx: { pattern: '[0-9]{3}' } }],
  })
  t.same(validate(schema, 'abc1234'), {
    errors: [{ type: 'string_too_long', loc: ['body'], msg: 'String should have at most 5 characters', input: 'abc1234', ctx: { max_length: 5 } }],
  }, 'the length is checked first')
  t.same(validate(Type.String({ pattern: '^\\p{Lu}' }), 'Émile'), { value: 'Émile' }, 'Unicode classes, as Rust regex reads them')
})

t.test('bounds are checked in pydantic-core\'s order, each with its own error', async (t) => {
  const cases: [TSchema, unknown, string, string, Record<string, number>][] = [
    [Type.Integer({ exclusiveMinimum: 0 }), 0, 'greater_than', 'Input should be greater than 0', { gt: 0 }],
    [Type.Number({ exclusiveMaximum: 1 }), '1', 'less_than', 'Input should be less than 1', { lt: 1 }],
    [Type.Number({ minimum: 0.5 }), 0.25, 'greater_than_equal', 'Input should be greater than or equal to 0.5', { ge: 0.5 }],
    [Type.Integer({ maximum: 3 }), '4', 'less_than_equal', 'Input should be less than or equal to 3', { le: 3 }],
    // An impossible range shows the order: le before ge.
    [Type.Integer({ minimum: 10, maximum: 1 }), 5, 'less_than_equal', 'Input should be less than or equal to 1', { le: 1 }],
  ]
  for (const [schema, input, type, msg, ctx] of cases) {
    t.same(validate(schema, input), { errors: [{ type, loc: ['body'], msg, input, ctx }] }, msg)
  }
})

t.test('a model with additionalProperties false refuses unknown fields with extra_forbidden, after its fields\' errors', async (t) => {
  const schema = Type.Object({ a: Type.Integer(), b: Type.Optional(Type.String()) }, { additionalProperties: false })
  t.same(validate(schema, { a: 1 }), { value: { a: 1 } })
  t.same(validate(schema, { z: [1], a: 'x', y: null }), {
    errors: [
      { type: 'int_parsing', loc: ['body', 'a'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
      { type: 'extra_forbidden', loc: ['body', 'z'], msg: 'Extra inputs are not permitted', input: [1] },
      { type: 'extra_forbidden', loc: ['body', 'y'], msg: 'Extra inputs are not permitted', input: null },
    ],
  }, 'declared fields first, then each extra key in the input\'s order')
  t.same(validate(Type.Object({ a: Type.Integer() }), { a: 1, z: 2 }), { value: { a: 1 } }, 'without it, extras are ignored')
})

t.test('a keyword the validator does not implement fails to compile, naming the keyword and where it is', async (t) => {
  const cases: [TSchema, RegExp][] = [
    [Type.Object({ limit: Type.Integer({ multipleOf: 5 }) }), /GET \/x querystring#\/properties\/limit: schema keyword 'multipleOf' is not implemented/],
    [Type.Array(Type.String(), { uniqueItems: true }), /GET \/x querystring#: schema keyword 'uniqueItems' is not implemented/],
    [Type.Object({ a: Type.Array(Type.Object({ b: Type.String({ maximun: 3 } as object) })) }), /#\/properties\/a\/items\/properties\/b: schema keyword 'maximun'/],
    [Type.Object({ a: Type.String() }, { additionalProperties: Type.Integer() }), /#: schema keyword 'additionalProperties' must be false on a model/],
    [Type.Object({ a: Type.String({ format: 'email' }) }), /#\/properties\/a: format "email" is not implemented/],
    [Type.Union([Type.String({ minLength: 1 }), Type.Integer()], { minProperties: 1 }), /#: schema keyword 'minProperties'/],
    [Type.Object({ a: Type.Union([Type.String(), Type.Integer({ multipleOf: 2 })]) }), /#\/properties\/a\/anyOf\/1: schema keyword 'multipleOf'/],
    [Type.String({ format: 'uuid', pattern: '^[0-9a-f-]+$' }), /#: schema keyword 'pattern' is not implemented by the validator \(a formatted-string schema implements: type, format\)/],
    [Type.String({ pattern: '(' }), /#: pattern "\(" is not a valid regular expression/],
  ]
  for (const [schema, message] of cases) {
    t.throws(() => compile(schema, 'GET /x querystring'), { name: 'UnsupportedSchemaError', message }, message.source)
  }
  t.doesNotThrow(() => compile(Type.Object({ a: Type.Integer({ minimum: 1, title: 'A', description: 'd', examples: [1], default: 1 }) }, { title: 'M', $id: 'M' })),
    'annotations are not constraints: they compile')
})

t.test('a route whose schema says something the validator does not implement fails at its first request, naming the route', async (t) => {
  // Validators are compiled when a route is first called, not at start-up; every real route's
  // schemas are compiled by the last test of this file, so hangar's own cannot fail this way.
  const { app } = buildTestApp()
  t.teardown(() => app.close())
  let handled = false
  let failure: unknown
  app.register(async (scope) => {
    scope.addHook('onError', async (_request, _reply, error) => { failure = error })
    scope.post('/bad', { schema: { body: Type.Object({ tags: Type.Array(Type.String(), { uniqueItems: true }) }) } }, async () => {
      handled = true
      return {}
    })
  })
  await app.ready()
  const res = await app.inject({ method: 'POST', url: '/bad', payload: { tags: ['a'] } })
  t.equal(res.statusCode, 500, 'a bug of hangar\'s, not the caller\'s')
  t.equal(handled, false, 'the handler never runs without its validator')
  t.same(failure, new UnsupportedSchemaError(
    "POST /bad body#/properties/tags: schema keyword 'uniqueItems' is not implemented by the validator (a list schema implements: type, items, minItems, maxItems); implement it in src/validation or leave it out",
  ))
})

t.test('a schema that failed to compile fails again in the next app, naming that app\'s route', async (t) => {
  const body = Type.Object({ tags: Type.Array(Type.String(), { uniqueItems: true }) })
  for (const path of ['/first', '/second']) {
    t.throws(() => compileRequest({ body }, `POST ${path}`), { name: 'UnsupportedSchemaError', message: new RegExp(`^POST ${path} body#/properties/tags: `) })
  }
})

t.test('a schema compiled once validates the same way in every app that uses it', async (t) => {
  const body = Type.Object({ name: Type.String({ minLength: 2 }), size: Type.Optional(Type.Integer({ default: 3 })) })
  const answers = []
  for (const path of ['/one', '/two']) {
    const validate = compileRequest({ body }, `POST ${path}`)
    const valid = { body: { name: 'ok' } } as unknown as Parameters<typeof validate>[0]
    validate(valid)
    const invalid = { body: { name: 'x', size: 'many' } } as unknown as Parameters<typeof validate>[0]
    answers.push({ valid: valid.body, invalid: (() => { try { validate(invalid); return 'accepted' } catch (error) { return (error as { body?: unknown }).body ?? String(error) } })() })
  }
  t.same(answers[0].valid, { name: 'ok', size: 3 })
  t.not(answers[0].invalid, 'accepted')
  t.same(answers[1], answers[0])
  // Defaults are copies: changing one request's value leaves the next request's default alone.
  ;(answers[0].valid as { size: number }).size = 99
  const again = { body: { name: 'ok' } } as unknown as Parameters<ReturnType<typeof compileRequest>>[0]
  compileRequest({ body }, 'POST /three')(again)
  t.same(again.body, { name: 'ok', size: 3 })
})

t.test('hangar builds with every real schema: each route\'s request schemas compile under the strict rules', async (t) => {
  const { app } = buildTestApp()
  t.teardown(() => app.close())
  const routes: { name: string; schema: object }[] = []
  app.addHook('onRoute', (route) => {
    if (route.schema) routes.push({ name: `${route.method} ${route.url}`, schema: route.schema })
  })
  await app.ready()
  t.ok(routes.length > 100, `${routes.length} routes with schemas`)
  for (const { name, schema } of routes) t.doesNotThrow(() => compileRequest(schema, name), name)
})
