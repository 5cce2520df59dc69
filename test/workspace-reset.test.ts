// A workspace reset leaves nothing of the workspace behind, in any table. The same scenario runs in
// two workspaces and writes rows to every table hangar has; resetting one must leave exactly the
// other's rows (and what boot seeded), and resetting both exactly what boot seeded. A table added
// later that the scenario does not reach fails the first assertion, so it cannot be forgotten.

import { gzipSync } from 'node:zlib'
import t from 'tap'
import type { App } from '../src/app.js'
import { clientFor, dockerDeployment, makeApp, TENANT_A, TENANT_B, type Client } from './helpers.js'
import { completeFlow } from './oauth-helpers.js'

type Rows = Record<string, string[]>

/** Every row of every table, each as its JSON text, sorted: what the admin export sees. */
async function snapshot(app: App): Promise<Rows> {
  const doc = (await app.inject({ method: 'GET', url: '/_hangar/state' })).json() as { tables: Record<string, object[]> }
  return Object.fromEntries(Object.entries(doc.tables).map(([table, rows]) => [table, rows.map((row) => JSON.stringify(row)).sort()]))
}

/**
 * What a workspace's users do: a deployment whose agent server keeps assistants, threads and runs
 * with feedback, store items, crons, a listener, OAuth; a remote build with an uploaded source whose
 * revision moves a step (a recorded status change).
 */
async function useWorkspace(app: App, tenant: string) {
  const api: Client = clientFor(app, { 'x-api-key': `key-of-${tenant}`, 'x-tenant-id': tenant })
  const deployment = (await api.post('/v2/deployments', dockerDeployment({ name: 'bot' }))).body
  const leaving = (await api.post('/v2/deployments', dockerDeployment({ name: 'leaving' }))).body
  t.equal((await app.inject({ method: 'POST', url: `/_hangar/deployments/${leaving.id}/speed`, payload: { speed: 'manual' } })).statusCode, 200)
  t.equal((await api.delete(`/v2/deployments/${leaving.id}`)).status, 204, 'a deployment being deleted (manual: it stays so)')
  const agent = `/deployments/${deployment.id}/agent`
  const assistant = (await api.post(`${agent}/assistants`, { graph_id: 'agent', name: 'mine' })).body
  t.equal((await api.patch(`${agent}/assistants/${assistant.assistant_id}`, { name: 'renamed' })).status, 200)
  const thread = (await api.post(`${agent}/threads`, {})).body
  t.equal((await api.put(`${agent}/store/items`, { namespace: ['memories', tenant], key: 'k', value: { note: tenant } })).status, 204, 'an item in its store')
  t.equal((await api.post(`${agent}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *', input: { messages: [] } })).status, 200, 'a cron')
  const streamed = await app.inject({
    method: 'POST', url: `${agent}/threads/${thread.thread_id}/runs/stream`, headers: { 'x-api-key': 'k', 'x-tenant-id': tenant },
    payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hello' }] }, feedback_keys: ['helpful'] },
  })
  const feedbackEvent = /event: feedback\ndata: (.*)\n/.exec(streamed.body)
  if (!feedbackEvent) throw new Error(`no feedback event in ${streamed.body}`)
  const url = new URL(JSON.parse(feedbackEvent[1]).helpful)
  t.equal((await api.post(url.pathname, { score: 1 })).status, 200, 'feedback with the run\'s token')
  t.equal((await api.post('/api/v1/feedback', { key: 'note', comment: 'on no run' })).status, 200, 'feedback on no run')
  t.equal((await api.post('/v2/listeners', { compute_type: 'k8s', compute_id: `cluster-${tenant}`, compute_config: { k8s_namespaces: ['default'] } })).status, 201)
  await completeFlow(app, api, 'github', { agentId: 'my-agent' })

  const remote = (await api.post('/v2/deployments', { name: 'remote', source: 'internal_source', source_config: { deployment_type: 'dev' }, source_revision_config: { langgraph_config_path: 'langgraph.json' }, secrets: [] })).body
  t.equal((await app.inject({ method: 'POST', url: `/_hangar/deployments/${remote.id}/speed`, payload: { speed: 'manual' } })).statusCode, 200)
  const target = (await api.post(`/v2/deployments/${remote.id}/upload-url`)).body
  const signed = new URL(target.upload_url)
  const put = await app.inject({ method: 'PUT', url: signed.pathname + signed.search, headers: { 'content-type': 'application/gzip', 'x-goog-content-length-range': '0,209715200' }, payload: gzipSync(tenant) })
  t.equal(put.statusCode, 200, 'a source uploaded')
  const built = (await api.patch(`/v2/deployments/${remote.id}`, { revision_source: 'internal_source', source_revision_config: { source_tarball_path: target.object_path } })).body
  t.equal((await app.inject({ method: 'POST', url: `/_hangar/deployments/${remote.id}/revisions/${built.latest_revision_id}/advance` })).statusCode, 200, 'its revision moved a step')
}

t.test('a workspace reset removes every row of that workspace, in every table, and nothing else', async (t) => {
  const { app } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const booted = await snapshot(app)

  await useWorkspace(app, TENANT_A)
  await useWorkspace(app, TENANT_B)
  const used = await snapshot(app)
  for (const [table, rows] of Object.entries(used)) {
    t.ok(rows.length > booted[table].length, `the scenario writes to ${table} (a new table must be added to it)`)
  }

  t.equal((await app.inject({ method: 'POST', url: '/_hangar/reset', payload: { workspace: TENANT_A } })).statusCode, 204)
  const afterA = await snapshot(app)
  for (const [table, rows] of Object.entries(used)) {
    const written = rows.length - booted[table].length
    t.equal(afterA[table].length, booted[table].length + written / 2, `${table}: only workspace B's rows are left`)
    t.notOk(afterA[table].some((row) => row.includes(TENANT_A)), `${table}: no row names workspace A`)
  }

  t.equal((await app.inject({ method: 'POST', url: '/_hangar/reset', payload: { workspace: TENANT_B } })).statusCode, 204)
  t.same(await snapshot(app), booted, 'with both reset, every table is as boot left it')
})

t.test('deleting a deployment stops its runs and removes its agent server\'s data with it', async (t) => {
  const { app, clock } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const api = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const booted = await snapshot(app)
  const deployment = (await api.post('/v2/deployments', dockerDeployment({ name: 'bot' }))).body
  const agent = `/deployments/${deployment.id}/agent`
  const thread = (await api.post(`${agent}/threads`, {})).body
  t.equal((await api.put(`${agent}/store/items`, { namespace: ['notes'], key: 'k', value: { a: 1 } })).status, 204)
  t.equal((await api.post(`${agent}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *' })).status, 200)
  // The pipeline graph waits on the clock between nodes: this run is in flight when the deployment goes.
  const run = (await api.post(`${agent}/threads/${thread.thread_id}/runs`, { assistant_id: 'pipeline', input: { messages: [{ role: 'user', content: 'go' }] } })).body
  t.equal(run.status, 'pending')
  const inFlight = await snapshot(app)
  t.ok(inFlight.runs.length > booted.runs.length && inFlight.assistants.length > booted.assistants.length)
  t.equal(inFlight.store_items.length, booted.store_items.length + 1, 'its store holds an item')
  t.equal(inFlight.crons.length, booted.crons.length + 1, 'it has a cron')

  t.equal((await api.delete(`/v2/deployments/${deployment.id}`)).status, 204)
  clock.advance(60_000)
  const after = await snapshot(app)
  for (const [table, rows] of Object.entries(after)) {
    t.notOk(rows.some((row) => row.includes(deployment.id)), `${table}: nothing of the deployment is left`)
  }
  t.equal((await api.get(`${agent}/threads/${thread.thread_id}`)).status, 404)
})

t.test('feedback written on no run is seen only by the workspace that wrote it', async (t) => {
  const { app } = await makeApp(t)
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  const b = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_B })
  const written = (await a.post('/api/v1/feedback', { key: 'note', comment: 'mine' })).body
  t.equal((await a.get(`/api/v1/feedback/${written.id}`)).status, 200)
  t.same((await a.get('/api/v1/feedback')).body.map((f: { id: string }) => f.id), [written.id])
  t.equal((await b.get(`/api/v1/feedback/${written.id}`)).status, 404)
  t.same((await b.get('/api/v1/feedback')).body, [])
})
