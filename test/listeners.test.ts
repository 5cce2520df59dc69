import t from 'tap'
import { clientFor, dockerDeployment, makeApp, TENANT_A, TENANT_B } from './helpers.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const NOT_ENTERPRISE = '00000000-0000-4000-8000-00000000f403'
const GHOST = 'aaaaaaaa-0000-4000-8000-000000000000'
const DEFAULT_TENANT = '00000000-0000-4000-8000-68616e676172'

const k8s = (computeId = 'cluster-1', overrides: Record<string, unknown> = {}) => ({
  compute_type: 'k8s',
  compute_id: computeId,
  compute_config: { k8s_namespaces: ['agents', 'batch'] },
  ...overrides,
})

const forbidden = (workspace: string) => ({
  detail: `Listeners cannot be created for LangSmith workspace ID '${workspace}'. ` +
    'Creating listeners is only allowed for LangSmith organizations with self-hosted enterprise plans.',
})

t.test('creating a listener answers 201 with every field, in the real service\'s order', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/listeners', k8s('cluster-1', { version: '0.9.1' }))
  t.equal(res.status, 201)
  const l = res.body
  t.same(Object.keys(l), ['version', 'compute_type', 'compute_id', 'compute_config', 'id', 'created_at', 'updated_at'])
  t.match(l.id, UUID)
  t.equal(l.version, '0.9.1')
  t.equal(l.compute_type, 'k8s')
  t.equal(l.compute_id, 'cluster-1')
  t.same(l.compute_config, { k8s_namespaces: ['agents', 'batch'] })
  t.equal(l.created_at, '2025-01-01T00:00:00.000Z')
  t.equal(l.updated_at, '2025-01-01T00:00:00.000Z')
})

t.test('unset version and namespaces are sent as null', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'c', compute_config: {} })
  t.equal(res.status, 201)
  t.equal(res.body.version, null)
  t.same(res.body.compute_config, { k8s_namespaces: null })
  t.equal(res.text.indexOf('"version":null'), 1, 'version is the first key even when null')
})

t.test('a compute_type other than k8s is a 422 literal_error', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/listeners', k8s('c', { compute_type: 'ecs' }))
  t.equal(res.status, 422)
  t.same(res.body, {
    detail: [{ type: 'literal_error', loc: ['body', 'compute_type'], msg: "Input should be 'k8s'", input: 'ecs', ctx: { expected: "'k8s'" } }],
  })
})

t.test('a create without its required fields lists every missing one', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/listeners', { compute_type: 'k8s' })
  t.equal(res.status, 422)
  t.same(res.body.detail.map((e: any) => [e.type, e.loc]), [
    ['missing', ['body', 'compute_id']],
    ['missing', ['body', 'compute_config']],
  ])
  const namespaces = await api.post('/v2/listeners', k8s('c', { compute_config: { k8s_namespaces: 'agents' } }))
  t.equal(namespaces.status, 422)
  t.same(namespaces.body.detail[0].loc, ['body', 'compute_config', 'k8s_namespaces'])
  t.same((await api.get('/v2/listeners')).body.resources, [], 'nothing was written')
})

t.test('a second listener with the same compute_id in a workspace is a 409 with the spec\'s text', async (t) => {
  const { app, api } = await makeApp(t)
  t.equal((await api.post('/v2/listeners', k8s('cluster-1'))).status, 201)
  const again = await api.post('/v2/listeners', k8s('cluster-1', { compute_config: {} }))
  t.equal(again.status, 409)
  t.same(again.body, {
    detail: `Listener for LangSmith workspace ID '${DEFAULT_TENANT}' and compute ID 'cluster-1' already exists.`,
  })
  const other = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_B })
  t.equal((await other.post('/v2/listeners', k8s('cluster-1'))).status, 201, 'another workspace may reuse the compute id')
  t.equal((await api.get('/v2/listeners')).body.resources.length, 1)
})

t.test('a deleted listener\'s compute_id can be used again', async (t) => {
  const { api } = await makeApp(t)
  const first = (await api.post('/v2/listeners', k8s('cluster-1'))).body
  t.equal((await api.delete(`/v2/listeners/${first.id}`)).status, 204)
  t.equal((await api.post('/v2/listeners', k8s('cluster-1'))).status, 201)
})

t.test('get returns the listener as it was created', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/listeners', k8s())).body
  const res = await api.get(`/v2/listeners/${created.id}`)
  t.equal(res.status, 200)
  t.same(res.body, created)
  const upper = await api.get(`/v2/listeners/${created.id.toUpperCase()}`)
  t.equal(upper.status, 200, 'the path id may be in any UUID form')
})

t.test('an unknown listener id is a 404 on get, patch and delete', async (t) => {
  const { api } = await makeApp(t)
  const notFound = { detail: `Listener ID ${GHOST} not found.` }
  for (const res of [
    await api.get(`/v2/listeners/${GHOST}`),
    await api.patch(`/v2/listeners/${GHOST}`, { version: '1' }),
    await api.delete(`/v2/listeners/${GHOST}`),
  ]) {
    t.equal(res.status, 404)
    t.same(res.body, notFound)
  }
})

t.test('a listener id that is not a UUID is a 422 on the path', async (t) => {
  const { api } = await makeApp(t)
  for (const res of [
    await api.get('/v2/listeners/not-a-uuid'),
    await api.patch('/v2/listeners/not-a-uuid', {}),
    await api.delete('/v2/listeners/not-a-uuid'),
  ]) {
    t.equal(res.status, 422)
    t.same(res.body.detail, [{
      type: 'uuid_parsing', loc: ['path', 'listener_id'],
      msg: 'Input should be a valid UUID, invalid character: found `n` at 1', input: 'not-a-uuid',
      ctx: { error: 'invalid character: found `n` at 1' },
    }])
  }
})

t.test('patch replaces version and compute_config and moves updated_at', async (t) => {
  const { api, clock } = await makeApp(t)
  const created = (await api.post('/v2/listeners', k8s('cluster-1', { version: '1.0' }))).body
  clock.advance(60_000)
  const res = await api.patch(`/v2/listeners/${created.id}`, { version: '2.0', compute_config: { k8s_namespaces: ['prod'] } })
  t.equal(res.status, 200)
  t.equal(res.body.version, '2.0')
  t.same(res.body.compute_config, { k8s_namespaces: ['prod'] })
  t.equal(res.body.created_at, created.created_at)
  t.equal(res.body.updated_at, '2025-01-01T00:01:00.000Z')
  t.same((await api.get(`/v2/listeners/${created.id}`)).body, res.body, 'the change is stored')
})

t.test('patch leaves a field that is null or absent unchanged', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/listeners', k8s('cluster-1', { version: '1.0' }))).body
  const nulls = await api.patch(`/v2/listeners/${created.id}`, { version: null, compute_config: null })
  t.equal(nulls.status, 200)
  t.equal(nulls.body.version, '1.0')
  t.same(nulls.body.compute_config, created.compute_config)
  const onlyVersion = await api.patch(`/v2/listeners/${created.id}`, { version: '1.1' })
  t.same(onlyVersion.body.compute_config, created.compute_config)
  const emptyConfig = await api.patch(`/v2/listeners/${created.id}`, { compute_config: {} })
  t.same(emptyConfig.body.compute_config, { k8s_namespaces: null }, 'a given compute_config replaces the whole config')
  t.equal(emptyConfig.body.version, '1.1')
})

t.test('patch cannot change compute_type or compute_id', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/listeners', k8s('cluster-1'))).body
  const res = await api.patch(`/v2/listeners/${created.id}`, { compute_type: 'ecs', compute_id: 'cluster-2', version: '3' })
  t.equal(res.status, 200, 'fields outside the patch schema are ignored')
  t.equal(res.body.compute_type, 'k8s')
  t.equal(res.body.compute_id, 'cluster-1')
  t.equal(res.body.version, '3')
  t.equal((await api.post('/v2/listeners', k8s('cluster-2'))).status, 201, 'cluster-2 is still free')
})

t.test('a patch with a badly typed field is a 422 and changes nothing', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/listeners', k8s('cluster-1', { version: '1.0' }))).body
  const res = await api.patch(`/v2/listeners/${created.id}`, { version: 5 })
  t.equal(res.status, 422)
  t.same(res.body.detail, [{ type: 'string_type', loc: ['body', 'version'], msg: 'Input should be a valid string', input: 5 }])
  const missing = await api.request('PATCH', `/v2/listeners/${created.id}`)
  t.equal(missing.status, 422, 'a patch needs a body')
  t.same(missing.body.detail, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
  t.equal((await api.get(`/v2/listeners/${created.id}`)).body.version, '1.0')
})

t.test('delete answers 204 with no body, and the listener is gone', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/listeners', k8s())).body
  const res = await api.delete(`/v2/listeners/${created.id}`)
  t.equal(res.status, 204)
  t.equal(res.text, '')
  t.equal((await api.get(`/v2/listeners/${created.id}`)).status, 404)
  t.equal((await api.delete(`/v2/listeners/${created.id}`)).status, 404)
  t.same((await api.get('/v2/listeners')).body, { resources: [], offset: 0 })
})

t.test('list is newest first and its offset is the next page\'s offset', async (t) => {
  const { api, clock } = await makeApp(t)
  for (const id of ['c1', 'c2', 'c3', 'c4', 'c5']) {
    t.equal((await api.post('/v2/listeners', k8s(id))).status, 201)
    clock.advance(1000)
  }
  const all = await api.get('/v2/listeners')
  t.equal(all.status, 200)
  t.same(Object.keys(all.body), ['resources', 'offset'])
  t.same(all.body.resources.map((l: any) => l.compute_id), ['c5', 'c4', 'c3', 'c2', 'c1'])
  t.equal(all.body.offset, 5)
  const first = (await api.get('/v2/listeners?limit=2')).body
  t.same(first.resources.map((l: any) => l.compute_id), ['c5', 'c4'])
  t.equal(first.offset, 2)
  const second = (await api.get(`/v2/listeners?limit=2&offset=${first.offset}`)).body
  t.same(second.resources.map((l: any) => l.compute_id), ['c3', 'c2'])
  t.equal(second.offset, 4)
  const last = (await api.get(`/v2/listeners?limit=2&offset=${second.offset}`)).body
  t.same(last.resources.map((l: any) => l.compute_id), ['c1'])
  t.equal(last.offset, 5)
  t.same((await api.get('/v2/listeners?offset=50')).body, { resources: [], offset: 50 })
})

t.test('list rejects out-of-range limit and offset with 422', async (t) => {
  const { api } = await makeApp(t)
  const zero = await api.get('/v2/listeners?limit=0')
  t.equal(zero.status, 422)
  t.same(zero.body.detail, [{
    type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 },
  }])
  const big = await api.get('/v2/listeners?limit=101')
  t.equal(big.status, 422)
  t.equal(big.body.detail[0].type, 'less_than_equal')
  const negative = await api.get('/v2/listeners?offset=-1')
  t.equal(negative.status, 422)
  t.same(negative.body.detail[0].loc, ['query', 'offset'])
  t.equal((await api.get('/v2/listeners?limit=100')).status, 200)
})

t.test('another workspace sees a listener as 404, and lists never mix workspaces', async (t) => {
  const { app } = await makeApp(t)
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const b = clientFor(app, { 'x-api-key': 'k', 'X-Tenant-ID': TENANT_B })
  const l = (await a.post('/v2/listeners', k8s())).body
  const notFound = { detail: `Listener ID ${l.id} not found.` }
  for (const res of [
    await b.get(`/v2/listeners/${l.id}`),
    await b.patch(`/v2/listeners/${l.id}`, { version: 'stolen' }),
    await b.delete(`/v2/listeners/${l.id}`),
  ]) {
    t.equal(res.status, 404)
    t.same(res.body, notFound)
  }
  t.same((await b.get('/v2/listeners')).body, { resources: [], offset: 0 })
  t.same((await a.get('/v2/listeners')).body.resources, [l], 'A\'s listener is untouched')
})

t.test('a deployment can use its own workspace\'s listener but not another\'s', async (t) => {
  const { app } = await makeApp(t)
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const b = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_B })
  const l = (await a.post('/v2/listeners', k8s())).body
  const body = dockerDeployment({ source_config: { deployment_type: 'prod', listener_id: l.id, listener_config: { k8s_namespace: 'agents' } } })
  const mine = await a.post('/v2/deployments', body)
  t.equal(mine.status, 201)
  t.equal(mine.body.source_config.listener_id, l.id)
  const theirs = await b.post('/v2/deployments', body)
  t.equal(theirs.status, 400)
  t.same(theirs.body, { detail: `Listener ID ${l.id} not found.` })
})

t.test('every listener route is also served under /api-host, on the same data', async (t) => {
  const { api } = await makeApp(t)
  const created = await api.post('/api-host/v2/listeners', k8s())
  t.equal(created.status, 201)
  const id = created.body.id
  t.same((await api.get('/v2/listeners')).body.resources.map((l: any) => l.id), [id])
  t.same((await api.get('/api-host/v2/listeners')).body.resources.map((l: any) => l.id), [id])
  t.equal((await api.get(`/api-host/v2/listeners/${id}`)).status, 200)
  t.equal((await api.patch(`/api-host/v2/listeners/${id}`, { version: '2' })).body.version, '2')
  t.equal((await api.post('/api-host/v2/listeners', k8s())).status, 409)
  t.equal((await api.delete(`/api-host/v2/listeners/${id}`)).status, 204)
  t.equal((await api.get(`/v2/listeners/${id}`)).status, 404)
})

t.test('a workspace without a self-hosted enterprise plan gets 403 on every listener route', async (t) => {
  const { app, api } = await makeApp(t)
  const existing = (await api.post('/v2/listeners', k8s())).body
  const cloud = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': NOT_ENTERPRISE })
  const responses = {
    list: await cloud.get('/v2/listeners'),
    create: await cloud.post('/v2/listeners', k8s()),
    get: await cloud.get(`/v2/listeners/${existing.id}`),
    patch: await cloud.patch(`/v2/listeners/${existing.id}`, { version: '2' }),
    delete: await cloud.delete(`/v2/listeners/${existing.id}`),
    prefixed: await cloud.get('/api-host/v2/listeners'),
  }
  for (const [name, res] of Object.entries(responses)) {
    t.equal(res.status, 403, name)
    t.same(res.body, forbidden(NOT_ENTERPRISE), name)
  }
  t.equal((await api.get(`/v2/listeners/${existing.id}`)).body.version, null, 'nothing changed')
})

t.test('in a workspace without the plan, a 422 still comes before the 403', async (t) => {
  const { app } = await makeApp(t)
  const cloud = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': NOT_ENTERPRISE })
  const bad = await cloud.post('/v2/listeners', k8s('c', { compute_type: 'ecs' }))
  t.equal(bad.status, 422)
  t.equal(bad.body.detail[0].type, 'literal_error')
  t.equal((await cloud.get('/v2/listeners/nope')).status, 422)
  t.equal((await cloud.get('/v2/listeners?limit=0')).status, 422)
})

t.test('with selfHostedEnterprise off, unlisted workspaces get 403 while fixture-declared ones keep their plan', async (t) => {
  const { app, api } = await makeApp(t, { config: { selfHostedEnterprise: false } })
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const res = await a.post('/v2/listeners', k8s())
  t.equal(res.status, 403)
  t.same(res.body, forbidden(TENANT_A))
  t.equal((await a.get('/v2/listeners')).status, 403)
  t.equal((await api.post('/v2/listeners', k8s())).status, 201, 'the default workspace is declared self-hosted enterprise in the fixtures')
})
