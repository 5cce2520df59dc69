import t from 'tap'
import { clientFor, githubDeployment, makeApp, TENANT_A, TENANT_B } from './helpers.js'

t.test('without credentials the control plane answers 401 with a detail', async (t) => {
  const { app } = await makeApp(t)
  for (const url of ['/v2/deployments', '/api-host/v2/deployments']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 401, url)
    t.same(res.json(), { detail: 'Missing authentication headers' })
  }
  const blank = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': '  ' } })
  t.equal(blank.statusCode, 401, 'a blank key is no key')
  const basic = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { authorization: 'Basic dTpw' } })
  t.equal(basic.statusCode, 401, 'only Bearer tokens count')
})

t.test('any non-empty key is accepted by default, as X-Api-Key in any casing or as a Bearer token', async (t) => {
  const { app } = await makeApp(t)
  for (const headers of [{ 'X-Api-Key': 'anything' }, { 'X-API-KEY': 'x' }, { Authorization: 'Bearer some.jwt.token' }, { authorization: 'bearer t' }]) {
    const res = await app.inject({ method: 'GET', url: '/v2/deployments', headers })
    t.equal(res.statusCode, 200, JSON.stringify(headers))
  }
})

t.test('HANGAR_API_KEYS restricts the accepted keys and tokens', async (t) => {
  const { app } = await makeApp(t, { config: { apiKeys: ['k1', 'k2'] } })
  const ok = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k2' } })
  t.equal(ok.statusCode, 200)
  const bearer = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { authorization: 'Bearer k1' } })
  t.equal(bearer.statusCode, 200)
  const wrong = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k3' } })
  t.equal(wrong.statusCode, 401)
  t.same(wrong.json(), { detail: 'Invalid token' })
})

t.test('credentials are checked before the body is validated', async (t) => {
  const { app } = await makeApp(t)
  const res = await app.inject({ method: 'POST', url: '/v2/deployments', payload: '{bad', headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 401)
})

t.test('the health check needs no credentials', async (t) => {
  const { app } = await makeApp(t, { config: { apiKeys: ['secret'], requireTenant: true } })
  const res = await app.inject({ method: 'GET', url: '/ok' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ok: true })
})

t.test('another workspace sees a deployment as 404, and lists never mix workspaces', async (t) => {
  const { app } = await makeApp(t)
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const b = clientFor(app, { 'x-api-key': 'k', 'X-Tenant-ID': TENANT_B })
  const d = (await a.post('/v2/deployments', githubDeployment())).body
  t.equal(d.tenant_id, TENANT_A)
  const notFound = { detail: `Deployment ID ${d.id} not found.` }
  t.same((await b.get(`/v2/deployments/${d.id}`)).body, notFound)
  t.same((await b.patch(`/v2/deployments/${d.id}`, { source_config: { build_on_push: true } })).body, notFound)
  t.same((await b.get(`/v2/deployments/${d.id}/revisions`)).body, notFound)
  t.same((await b.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body, notFound)
  t.same((await b.post(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/redeploy`)).body, notFound)
  t.same((await b.post(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`)).body, notFound)
  t.same((await b.post(`/v2/deployments/${d.id}/revisions`)).body, notFound)
  t.same((await b.delete(`/v2/deployments/${d.id}`)).body, notFound)
  t.equal((await b.delete(`/v2/deployments?deployment_ids=${d.id}`)).status, 404)
  t.same((await b.get('/v2/deployments')).body.resources, [])
  t.equal((await b.post('/v2/deployments', githubDeployment())).status, 201, 'names are unique per workspace only')
  const own = (await a.get(`/v2/deployments/${d.id}`)).body
  t.equal(own.source_config.build_on_push, false, 'untouched by the other workspace')
  t.equal((await a.get('/v2/deployments')).body.resources.length, 1)
})

t.test('without X-Tenant-Id the default workspace is used; the header may be any UUID form', async (t) => {
  const { app } = await makeApp(t, { config: { defaultTenant: TENANT_A } })
  const noHeader = clientFor(app, { 'x-api-key': 'k' })
  const upper = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A.toUpperCase() })
  const d = (await noHeader.post('/v2/deployments', githubDeployment())).body
  t.equal(d.tenant_id, TENANT_A)
  t.equal((await upper.get(`/v2/deployments/${d.id}`)).status, 200)
})

t.test('HANGAR_REQUIRE_TENANT answers 403 "requires workspace specification" without the header', async (t) => {
  const { app } = await makeApp(t, { config: { requireTenant: true } })
  const res = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k' } })
  t.equal(res.statusCode, 403)
  t.same(res.json(), { detail: 'requires workspace specification' })
  const withTenant = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k', 'x-tenant-id': TENANT_B } })
  t.equal(withTenant.statusCode, 200)
})

t.test('a tenant header that is not a UUID is a 422 on the header', async (t) => {
  const { app } = await makeApp(t)
  const res = await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k', 'x-tenant-id': 'acme' } })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    detail: [{
      type: 'uuid_parsing', loc: ['header', 'x-tenant-id'], msg: 'Input should be a valid UUID, invalid character: found `m` at 3',
      input: 'acme', ctx: { error: 'invalid character: found `m` at 3' },
    }],
  })
})

t.test('every control-plane route is also served under /api-host, on the same data', async (t) => {
  const { api } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const d = (await api.post('/api-host/v2/deployments', githubDeployment())).body
  t.equal((await api.get(`/v2/deployments/${d.id}`)).status, 200)
  t.equal((await api.get(`/api-host/v2/deployments/${d.id}/revisions`)).body.resources.length, 1)
  t.equal((await api.delete(`/api-host/v2/deployments/${d.id}`)).status, 204)
  t.equal((await api.get(`/v2/deployments/${d.id}`)).status, 404)
})
