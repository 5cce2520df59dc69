import t from 'tap'
import { clientFor, githubDeployment, makeApp, someoneWaitsOn, START, TENANT_A, TENANT_B } from './helpers.js'
import { completeFlow } from './oauth-helpers.js'

t.test('the clock can be read, advanced, set, frozen and let run', async (t) => {
  const { api, clock } = await makeApp(t)
  t.same((await api.get('/_hangar/clock')).body, { now: '2025-01-01T00:00:00.000Z', now_ms: START, frozen: true })
  t.equal((await api.post('/_hangar/clock', { action: 'advance', ms: 90_000 })).body.now, '2025-01-01T00:01:30.000Z')
  t.equal((await api.post('/_hangar/clock', { action: 'set', to: '2030-06-01T12:00:00Z' })).body.now, '2030-06-01T12:00:00.000Z')
  t.equal((await api.post('/_hangar/clock', { action: 'set', to: START })).body.now_ms, START)
  t.equal((await api.post('/_hangar/clock', { action: 'unfreeze' })).body.frozen, false)
  t.equal((await api.post('/_hangar/clock', { action: 'freeze' })).body.frozen, true)
  t.equal(clock.frozen, true, 'the app\'s own clock moved')
  t.same((await api.post('/_hangar/clock', { action: 'advance' })).body, { detail: 'advance needs "ms": a number of milliseconds that keeps the clock between the years 1 and 9999.' })
  t.equal((await api.post('/_hangar/clock', { action: 'rewind' })).status, 422)
})

t.test('advancing the clock moves revisions, OAuth waits and token expiry together', async (t) => {
  const { app, api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const started = (await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body
  const waiting = someoneWaitsOn(clock)
  const wait = api.get(`/v2/auth/wait/${started.auth_id}?timeout=60`)
  await waiting
  await api.post('/_hangar/clock', { action: 'advance', ms: 60_000 })
  t.equal((await wait).body.status, 'timeout', 'the long-poll timed out on the moved clock')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.status, 'READY', 'the revision deployed')
  await completeFlow(app, api, 'github', { scopes: ['repo'] })
  await api.post('/_hangar/clock', { action: 'advance', ms: 3_600_000 })
  t.equal((await api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body.status, 'token_expired')
})

t.test('a deployment\'s speed can be set; a revision can be stepped or ended by hand', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  t.same((await api.post(`/_hangar/deployments/${d.id}/speed`, { speed: 'manual' })).body, { deployment_id: d.id, speed: 'manual' })
  clock.advance(3_600_000)
  const rev = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`
  t.equal((await api.get(rev)).body.status, 'CREATING', 'manual: time does not move it')
  const stepped = await api.post(`/_hangar/deployments/${d.id}/revisions/${d.latest_revision_id}/advance`)
  t.equal(stepped.status, 200)
  t.equal(stepped.body.status, 'QUEUED')
  const ended = await api.post(`/_hangar/deployments/${d.id}/revisions/${d.latest_revision_id}/status`, { status: 'DEPLOYED' })
  t.equal(ended.body.status, 'DEPLOYED')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.status, 'READY')
  const again = await api.post(`/_hangar/deployments/${d.id}/revisions/${d.latest_revision_id}/status`, { status: 'BUILD_FAILED' })
  t.equal(again.status, 409)
  t.same(again.body, { detail: `Revision ID ${d.latest_revision_id} has already finished.` })
  t.equal((await api.post(`/_hangar/deployments/${d.id}/revisions/${d.latest_revision_id}/status`, { status: 'QUEUED' })).status, 422)
  const ghost = 'abababab-0000-4000-8000-000000000000'
  t.equal((await api.post(`/_hangar/deployments/${ghost}/speed`, { speed: 'fast' })).status, 404)
})

t.test('setting a faster speed speeds up an in-progress revision from where it stands', async (t) => {
  const { api, clock } = await makeApp(t, { config: { revisionSpeed: 'realistic' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(15_000)
  const rev = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`
  t.equal((await api.get(rev)).body.status, 'QUEUED')
  await api.post(`/_hangar/deployments/${d.id}/speed`, { speed: 'fast' })
  clock.advance(5_000)
  t.equal((await api.get(rev)).body.status, 'DEPLOYED', 'the remaining steps took a second each')
})

t.test('setting instant speed ends an in-progress revision at once: DEPLOYED, and the deployment READY', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(2_500)
  await api.post(`/_hangar/deployments/${d.id}/speed`, { speed: 'instant' })
  t.equal((await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body.status, 'DEPLOYED', 'not left in the status it had')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.status, 'READY')
})

t.test('a speed change keeps when the steps taken before it happened (the build log\'s times)', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(2_500)
  // Nothing read the revision meanwhile: its steps were not written as they happened.
  await api.post(`/_hangar/deployments/${d.id}/speed`, { speed: 'realistic' })
  clock.advance(60_000)
  const logs = (await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=build&limit=1000`)).body.logs
  const at = (message: string) => logs.find((line: any) => line.message === message)?.timestamp
  t.equal(at(`Revision ${d.latest_revision_id} is queued`), START + 1_000, 'queued one second in, at the fast speed it had then')
  t.equal(at(`Revision ${d.latest_revision_id} is waiting for a builder`), START + 2_000)
})

t.test('reset with no body clears everything and seeds the fixtures again', async (t) => {
  const { api } = await makeApp(t)
  await api.post('/v2/deployments', githubDeployment())
  await api.post('/v2/auth/providers', { provider_id: 'extra', name: 'X', client_id: 'c', auth_url: 'a', token_url: 'b' })
  const thread = (await api.post('/threads', {})).body
  t.equal((await api.post('/_hangar/reset')).status, 204)
  t.same((await api.get('/v2/deployments')).body.resources, [])
  t.same((await api.get('/v2/auth/providers')).body.map((p: any) => p.provider_id), ['github', 'slack', 'google'], 'fixture providers are back')
  t.equal((await api.get(`/threads/${thread.thread_id}`)).status, 404)
  t.equal((await api.get('/assistants/agent')).status, 200, 'the graphs\' assistants are back')
})

t.test('reset of one workspace leaves the others alone', async (t) => {
  const { app } = await makeApp(t)
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const b = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_B })
  await a.post('/v2/deployments', githubDeployment())
  await b.post('/v2/deployments', githubDeployment())
  await a.delete('/v2/auth/providers/github')
  t.equal((await a.post('/_hangar/reset', { workspace: TENANT_A })).status, 204)
  t.same((await a.get('/v2/deployments')).body.resources, [])
  t.equal((await a.get('/v2/auth/providers/github')).status, 200, 'its fixtures were seeded again')
  t.equal((await b.get('/v2/deployments')).body.resources.length, 1)
})

t.test('state exports as JSON and imports back exactly', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  await api.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'c1', compute_config: { k8s_namespaces: ['x'] } })
  const thread = (await api.post('/threads', {})).body
  await api.post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } })
  clock.advance(2_500)
  const exported = (await api.get('/_hangar/state')).body
  t.equal(exported.hangar_state, 1)
  t.ok(exported.tables.deployments.length === 1 && exported.tables.run_events.length > 0)
  t.match(exported.tables.revisions, [{ status: 'AWAITING_BUILD', status_at: START + 2_000 }], 'the revision as it stands now, though nothing read it')

  await api.post('/_hangar/reset')
  t.equal((await api.put('/_hangar/state', exported)).status, 204)
  t.same((await api.get('/_hangar/state')).body, exported, 'round trip exact')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.id, d.id)
  t.equal((await api.get(`/threads/${thread.thread_id}/state`)).body.values.messages.length, 2)
})

t.test('a state document that does not fit is refused and changes nothing', async (t) => {
  const { api } = await makeApp(t)
  await api.post('/v2/deployments', githubDeployment())
  const exported = (await api.get('/_hangar/state')).body
  const refusals: [unknown, string][] = [
    [{ nope: 1 }, 'Not a hangar state document (expected hangar_state: 1 and tables).'],
    [{ ...exported, schema_version: 1 }, `The document has schema version 1; this hangar has ${exported.schema_version}.`],
    [{ ...exported, tables: { ...exported.tables, spaceships: [] } }, "Unknown table 'spaceships'."],
    [{ ...exported, tables: { ...exported.tables, deployments: [{ ...exported.tables.deployments[0], colour: 'red' }] } }, "A row of 'deployments' has an unknown column 'colour'."],
    [{ ...exported, tables: { ...exported.tables, deployments: [] } }, 'The document breaks 1 reference(s) between tables.'],
  ]
  for (const [doc, detail] of refusals) {
    const res = await api.put('/_hangar/state', doc)
    t.equal(res.status, 400, detail)
    t.same(res.body, { detail }, detail)
  }
  t.same((await api.get('/_hangar/state')).body, exported, 'nothing changed')
})

t.test('HANGAR_ADMIN_TOKEN guards the admin API, not the OAuth consent screen', async (t) => {
  const { app } = await makeApp(t, { config: { adminToken: 's3cret' } })
  const none = await app.inject({ method: 'GET', url: '/_hangar/clock' })
  t.equal(none.statusCode, 401)
  t.same(none.json(), { detail: 'Admin token required' })
  t.equal((await app.inject({ method: 'GET', url: '/_hangar/clock', headers: { 'x-hangar-admin-token': 's3cret' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/_hangar/clock', headers: { authorization: 'Bearer s3cret' } })).statusCode, 200)
  const consent = await app.inject({ method: 'GET', url: '/_hangar/oauth/authorize?response_type=code&client_id=x&redirect_uri=y&state=z' })
  t.equal(consent.statusCode, 400, 'the consent screen answers for itself (unknown state), not 401')
})
