import t from 'tap'
import { githubDeployment, makeApp } from './helpers.js'

const SOURCES = "'github', 'external_docker', 'internal_docker', 'internal_source' or 'internal_template'"
const ID = '8d2c4f00-0000-4000-8000-000000000000'

/** Each case: a request and the exact body FastAPI answers it with (FACTS.md, "422 bodies"). */
const cases: { name: string; method: string; url: string; body?: unknown; raw?: string; detail: unknown[] }[] = [
  {
    name: 'a missing field lists the whole object as input',
    method: 'POST', url: '/v2/deployments',
    body: { source: 'github', source_config: {}, source_revision_config: {}, secrets: [] },
    detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required',
      input: { source: 'github', source_config: {}, source_revision_config: {}, secrets: [] } }],
  },
  {
    name: 'a bad literal names every accepted value',
    method: 'POST', url: '/v2/deployments', body: { ...githubDeployment(), source: 'gitlab' },
    detail: [{ type: 'literal_error', loc: ['body', 'source'], msg: `Input should be ${SOURCES}`, input: 'gitlab', ctx: { expected: SOURCES } }],
  },
  {
    name: 'a nested item error points into the list',
    method: 'POST', url: '/v2/deployments', body: { ...githubDeployment(), secrets: [{ name: 'A' }] },
    detail: [{ type: 'missing', loc: ['body', 'secrets', 0, 'value'], msg: 'Field required', input: { name: 'A' } }],
  },
  {
    name: 'a wrong type is string_type with the input',
    method: 'POST', url: '/v2/deployments', body: { ...githubDeployment(), name: 5 },
    detail: [{ type: 'string_type', loc: ['body', 'name'], msg: 'Input should be a valid string', input: 5 }],
  },
  {
    name: 'bad JSON is json_invalid at the character Python stops at',
    method: 'POST', url: '/v2/deployments', raw: '{"name": }',
    detail: [{ type: 'json_invalid', loc: ['body', 9], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }],
  },
  {
    name: 'a query bound reports the raw string and the bound',
    method: 'GET', url: '/v2/deployments?limit=0',
    detail: [{ type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } }],
  },
  {
    name: 'a query int that does not parse is int_parsing',
    method: 'GET', url: '/v2/deployments?limit=abc',
    detail: [{ type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' }],
  },
  {
    name: 'a non-UUID path id is uuid_parsing',
    method: 'GET', url: '/v2/deployments/not-a-uuid',
    detail: [{ type: 'uuid_parsing', loc: ['path', 'deployment_id'], msg: 'Input should be a valid UUID, invalid character: found `n` at 1',
      input: 'not-a-uuid', ctx: { error: 'invalid character: found `n` at 1' } }],
  },
]
t.test('422 bodies are exactly FastAPI\'s', async (t) => {
  const { api } = await makeApp(t)
  for (const c of cases) {
    const res = await api.request(c.method, c.url, {
      body: c.body, raw: c.raw, headers: c.raw !== undefined ? { 'content-type': 'application/json' } : undefined,
    })
    t.equal(res.status, 422, c.name)
    t.same(res.body, { detail: c.detail }, c.name)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', c.name)
  }
})

t.test('every error of a request is reported at once, path and query before body', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.request('PATCH', '/v2/deployments/xyz', {
    body: { revision_source: 'svn', secrets: 'all', source_config: { build_on_push: 'maybe', resource_spec: { cpu: 99, min_scale: 1.5 } } },
  })
  t.equal(res.status, 422)
  t.same(res.body.detail.map((e: any) => [e.type, e.loc.join('.')]), [
    ['uuid_parsing', 'path.deployment_id'],
    ['literal_error', 'body.revision_source'],
    ['bool_parsing', 'body.source_config.build_on_push'],
    ['int_from_float', 'body.source_config.resource_spec.min_scale'],
    ['less_than_equal', 'body.source_config.resource_spec.cpu'],
    ['list_type', 'body.secrets'],
  ])
  const cpu = res.body.detail.find((e: any) => e.type === 'less_than_equal')
  t.same(cpu, { type: 'less_than_equal', loc: ['body', 'source_config', 'resource_spec', 'cpu'], msg: 'Input should be less than or equal to 8', input: 99, ctx: { le: 8 } })
})

t.test('lax coercions are accepted as pydantic accepts them', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/deployments', githubDeployment({
    source_config: { ...githubDeployment().source_config, build_on_push: 'false', resource_spec: { min_scale: '2', cpu: '0.5', max_scale: 3.0 } },
  }))
  t.equal(res.status, 201)
  t.equal(res.body.source_config.build_on_push, false)
  t.equal(res.body.source_config.resource_spec.min_scale, 2)
  t.equal(res.body.source_config.resource_spec.cpu, 0.5)
  t.equal(res.body.source_config.resource_spec.max_scale, 3)
  const q = await api.get('/v2/deployments?limit=%205%20&remote_reconciled=yes')
  t.equal(q.status, 200, 'query strings are parsed leniently too')
})

t.test('unknown fields are ignored, as pydantic does by default', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/deployments', { ...githubDeployment(), colour: 'blue', source_config: { ...githubDeployment().source_config, extra: 1 } })
  t.equal(res.status, 201)
  t.notOk('colour' in res.body)
  t.notOk('extra' in res.body.source_config)
})

t.test('deployment_type outside the spec (e.g. "serverless") is refused', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/deployments', githubDeployment({ source_config: { ...githubDeployment().source_config, deployment_type: 'serverless' } }))
  t.equal(res.status, 422)
  t.equal(res.body.detail[0].type, 'literal_error')
  t.same(res.body.detail[0].loc, ['body', 'source_config', 'deployment_type'])
  const q = await api.get('/v2/deployments?deployment_type=serverless')
  t.equal(q.status, 422)
  t.same(q.body.detail[0].ctx, { expected: "'dev_free', 'dev', 'prod', 'dev_zero' or 'dev_free_zero'" })
})

t.test('malformed JSON in its many forms is a json_invalid 422 with Python\'s message', async (t) => {
  const { api } = await makeApp(t)
  const forms: [string, number, string][] = [
    ['{', 1, 'Expecting property name enclosed in double quotes'],
    ["{'name': 1}", 1, 'Expecting property name enclosed in double quotes'],
    ['{"name" 1}', 8, "Expecting ':' delimiter"],
    ['{"a": 1 "b": 2}', 8, "Expecting ',' delimiter"],
    ['{} trailing', 3, 'Extra data'],
    ['nope', 0, 'Expecting value'],
    ['{"a": "unterminated', 6, 'Unterminated string starting at'],
  ]
  for (const [raw, pos, error] of forms) {
    const res = await api.request('POST', '/v2/deployments', { raw, headers: { 'content-type': 'application/json' } })
    t.equal(res.status, 422, raw)
    t.same(res.body, { detail: [{ type: 'json_invalid', loc: ['body', pos], msg: 'JSON decode error', input: {}, ctx: { error } }] }, raw)
  }
})

t.test('bodies that are not JSON objects fail as FastAPI fails them', async (t) => {
  const { api } = await makeApp(t)
  const list = await api.request('POST', '/v2/deployments', { raw: '[1, 2]', headers: { 'content-type': 'application/json' } })
  t.same(list.body.detail, [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: [1, 2] }])
  const empty = await api.request('POST', '/v2/deployments', { raw: '', headers: { 'content-type': 'application/json' } })
  t.same(empty.body.detail, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
  const nul = await api.request('POST', '/v2/deployments', { raw: 'null', headers: { 'content-type': 'application/json' } })
  t.same(nul.body.detail, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
  const text = await api.request('POST', '/v2/deployments', { raw: 'name=x', headers: { 'content-type': 'text/plain' } })
  t.equal(text.status, 422)
  t.same(text.body.detail[0].input, 'name=x', 'a non-JSON content type is validated as raw text')
  const noType = await api.request('POST', '/v2/deployments', { raw: JSON.stringify(githubDeployment()) })
  t.equal(noType.status, 201, 'a body without Content-Type is read as JSON')
  const vendor = await api.request('POST', '/v2/deployments', {
    raw: JSON.stringify(githubDeployment({ name: 'vendor' })), headers: { 'content-type': 'application/vnd.acme+json; charset=utf-8' },
  })
  t.equal(vendor.status, 201, '+json media types are JSON')
})

t.test('undecodable or absurdly nested bodies are a 400, never a 5xx', async (t) => {
  const { app } = await makeApp(t)
  const bad = await app.inject({
    method: 'POST', url: '/v2/deployments', payload: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
  })
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { detail: 'There was an error parsing the body' })
  const deep = await app.inject({
    method: 'POST', url: '/v2/deployments', payload: '['.repeat(50_000),
    headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
  })
  t.equal(deep.statusCode, 400)
  t.same(deep.json(), { detail: 'There was an error parsing the body' })
})

t.test('a body on a route that declares none is ignored, even when malformed', async (t) => {
  const { api } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const res = await api.request('DELETE', `/v2/deployments/${d.id}`, { raw: '{oops', headers: { 'content-type': 'application/json' } })
  t.equal(res.status, 204)
})

t.test('an oversized body is 413 with a detail and writes nothing', async (t) => {
  const { api } = await makeApp(t, { config: { bodyLimit: 1024 } })
  const res = await api.post('/v2/deployments', githubDeployment({ name: 'x'.repeat(2000) }))
  t.equal(res.status, 413)
  t.same(res.body, { detail: 'Request Entity Too Large' })
  t.same((await api.get('/v2/deployments')).body.resources, [])
})

t.test('unknown routes are 404 Not Found, wrong methods 405 with Allow, before any auth', async (t) => {
  const { app } = await makeApp(t)
  const notFound = await app.inject({ method: 'GET', url: '/v3/nothing' })
  t.equal(notFound.statusCode, 404)
  t.same(notFound.json(), { detail: 'Not Found' })
  const method = await app.inject({ method: 'PUT', url: `/v2/deployments/${ID}` })
  t.equal(method.statusCode, 405)
  t.same(method.json(), { detail: 'Method Not Allowed' })
  t.equal(method.headers.allow, 'GET, PATCH, DELETE')
  const head = await app.inject({ method: 'HEAD', url: '/v2/deployments' })
  t.equal(head.statusCode, 405, 'HEAD is not served, as FastAPI does not serve it')
  const prefixed = await app.inject({ method: 'POST', url: `/api-host/v2/deployments/${ID}` })
  t.equal(prefixed.statusCode, 405)
})

t.test('a trailing slash redirects (307) to the route without it, keeping the query', async (t) => {
  const { app } = await makeApp(t)
  const res = await app.inject({ method: 'GET', url: '/v2/deployments/?limit=5' })
  t.equal(res.statusCode, 307)
  t.equal(res.headers.location, '/v2/deployments?limit=5')
  const unknown = await app.inject({ method: 'GET', url: '/v2/nothing/' })
  t.equal(unknown.statusCode, 404)
})

t.test('a path parameter longer than a UUID is still a 422, not a 404', async (t) => {
  const { api } = await makeApp(t)
  const long = 'a'.repeat(300)
  const res = await api.get(`/v2/deployments/${long}`)
  t.equal(res.status, 422)
  // uuid 1.23.0 (pydantic-core 2.46.4): a bare run of hex digits is a simple-format length error.
  t.equal(res.body.detail[0].msg, 'Input should be a valid UUID, invalid length: expected length 32 for simple format, found 300')
})
