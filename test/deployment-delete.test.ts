// A deletion takes time, as the real service's does: DELETE answers 204, then the deployment reads
// AWAITING_DELETE, then AWAITING_FINAL_DELETE, then 404 — on the clock at the deployment's speed, one
// step per read at `poll`, when told at `manual`. The Terraform provider waits for that 404. Every
// request goes over real HTTP with the provider's headers; time moves on the manual clock.

import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { RevisionSpeed } from '../src/lifecycle/revisions.js'
import { buildTestApp, clientFor, dockerDeployment, fetchClient, serveApp, TENANT_A, type Client } from './helpers.js'

const TF_HEADERS = { 'X-Api-Key': 'lsv2_tf', 'X-Tenant-Id': TENANT_A }

async function serve(t: Test, speed: RevisionSpeed = 'fast', prefix = '') {
  const served = await serveApp(t, { revisionSpeed: speed })
  return { ...served, tf: fetchClient(`${served.base}${prefix}`, TF_HEADERS) }
}

const statusOf = async (api: Client, id: string) => {
  const res = await api.get(`/v2/deployments/${id}`)
  return res.status === 200 ? res.body.status : res.status
}

t.test('fast: 204, then AWAITING_DELETE for 2 s, AWAITING_FINAL_DELETE for 1 s, then 404', async (t) => {
  const { tf, clock } = await serve(t, 'fast', '/api-host')
  const d = (await tf.post('/v2/deployments', dockerDeployment())).body
  const deleted = await tf.delete(`/v2/deployments/${d.id}`)
  t.equal(deleted.status, 204)
  t.equal(deleted.text, '')
  const seen = []
  for (let ms = 0; ms <= 3500; ms += 500) {
    seen.push(await statusOf(tf, d.id))
    clock.advance(500)
  }
  t.same(seen, ['AWAITING_DELETE', 'AWAITING_DELETE', 'AWAITING_DELETE', 'AWAITING_DELETE', 'AWAITING_FINAL_DELETE', 'AWAITING_FINAL_DELETE', 404, 404])
  t.same((await tf.get(`/v2/deployments/${d.id}`)).body, { detail: `Deployment ID ${d.id} not found.` })
  t.equal((await tf.get(`/v2/deployments/${d.id}/revisions`)).status, 404, 'its revisions went with it')
})

t.test('realistic: minutes; instant: gone as DELETE answers', async (t) => {
  const slow = await serve(t, 'realistic')
  const d = (await slow.tf.post('/v2/deployments', dockerDeployment())).body
  await slow.tf.delete(`/v2/deployments/${d.id}`)
  slow.clock.advance(59_999)
  t.equal(await statusOf(slow.tf, d.id), 'AWAITING_DELETE')
  slow.clock.advance(1)
  t.equal(await statusOf(slow.tf, d.id), 'AWAITING_FINAL_DELETE')
  slow.clock.advance(120_000)
  t.equal(await statusOf(slow.tf, d.id), 404)

  const fast = await serve(t, 'instant')
  const e = (await fast.tf.post('/v2/deployments', dockerDeployment())).body
  t.equal((await fast.tf.delete(`/v2/deployments/${e.id}`)).status, 204)
  t.equal(await statusOf(fast.tf, e.id), 404)
})

t.test('the Terraform provider\'s delete: DELETE, then GET every 5 s until 404', async (t) => {
  const { tf, clock } = await serve(t)
  const d = (await tf.post('/v2/deployments', dockerDeployment())).body
  t.equal((await tf.delete(`/v2/deployments/${d.id}`)).status, 204)
  const polls: (string | number)[] = []
  for (let waited = 0; waited <= 30 * 60_000; waited += 5000) {
    const status = await statusOf(tf, d.id)
    polls.push(status)
    if (status === 404) break
    clock.advance(5000)
  }
  t.same(polls, ['AWAITING_DELETE', 404])
  t.equal((await tf.delete(`/v2/deployments/${d.id}`)).status, 404, 'a DELETE after it is gone: 404, which the provider counts as deleted')
})

t.test('poll: each read of the deployment shows its status and moves it one step', async (t) => {
  const { tf, clock } = await serve(t, 'poll')
  const d = (await tf.post('/v2/deployments', dockerDeployment())).body
  await tf.delete(`/v2/deployments/${d.id}`)
  clock.advance(3_600_000)
  t.same((await tf.get('/v2/deployments')).body.resources.map((x: { status: string }) => x.status), ['AWAITING_DELETE'], 'a list is no read of it')
  t.equal(await statusOf(tf, d.id), 'AWAITING_DELETE')
  t.equal(await statusOf(tf, d.id), 'AWAITING_FINAL_DELETE')
  t.equal(await statusOf(tf, d.id), 404)
})

t.test('manual: only the admin API moves a deletion on; it reports where it stands', async (t) => {
  const { tf, clock, api } = await serve(t, 'manual')
  const d = (await tf.post('/v2/deployments', dockerDeployment())).body
  const advance = () => api.post(`/_hangar/deployments/${d.id}/deletion/advance`)
  const early = await advance()
  t.equal(early.status, 409)
  t.same(early.body, { detail: `Deployment ID ${d.id} is not being deleted.` })
  t.equal((await api.get(`/_hangar/deployments/${d.id}/revisions`)).body.deletion, null)

  await tf.delete(`/v2/deployments/${d.id}`)
  clock.advance(3_600_000)
  t.equal(await statusOf(tf, d.id), 'AWAITING_DELETE')
  t.same((await api.get(`/_hangar/deployments/${d.id}/revisions`)).body.deletion,
    { status: 'AWAITING_DELETE', speed: 'manual', next_status: 'AWAITING_FINAL_DELETE', next_at: null, next_in_ms: null })
  t.same((await advance()).body, { deployment_id: d.id, status: 'AWAITING_FINAL_DELETE' })
  t.equal(await statusOf(tf, d.id), 'AWAITING_FINAL_DELETE')
  t.same((await advance()).body, { deployment_id: d.id, status: 'DELETED' })
  t.equal(await statusOf(tf, d.id), 404)
  t.equal((await advance()).status, 404)

  const e = (await tf.post('/v2/deployments', dockerDeployment({ name: 'sped-up' }))).body
  await tf.delete(`/v2/deployments/${e.id}`)
  await api.post(`/_hangar/deployments/${e.id}/speed`, { speed: 'fast' })
  t.match((await api.get(`/_hangar/deployments/${e.id}/revisions`)).body.deletion, { speed: 'fast', next_in_ms: 2000 }, 'a new speed applies to the deletion too')
  clock.advance(3000)
  t.equal(await statusOf(tf, e.id), 404)
})

t.test('while it is being deleted: listed with its status, its name taken, no changes, DELETE again is 204', async (t) => {
  const { tf, clock } = await serve(t)
  const d = (await tf.post('/v2/deployments', dockerDeployment({ name: 'bot' }))).body
  await tf.delete(`/v2/deployments/${d.id}`)
  const listed = (await tf.get('/v2/deployments?status=AWAITING_DELETE')).body.resources
  t.same(listed.map((x: { id: string }) => x.id), [d.id], 'listed, and found by its status')
  t.equal((await tf.get(`/v2/deployments/${d.id}/revisions`)).status, 200, 'its revisions still read')
  t.same((await tf.post('/v2/deployments', dockerDeployment({ name: 'bot' }))).body, { detail: "A deployment named 'bot' already exists." })
  const refused = { detail: `Deployment ID ${d.id} is being deleted.` }
  t.same((await tf.patch(`/v2/deployments/${d.id}`, { display_name: 'x' })).body, refused)
  t.same((await tf.post(`/v2/deployments/${d.id}/revisions`, {})).body, refused)
  t.same((await tf.post(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/redeploy`)).body, refused)
  clock.advance(1000)
  t.equal((await tf.delete(`/v2/deployments/${d.id}`)).status, 204, 'a second DELETE while deleting is fine')
  clock.advance(1000)
  t.equal(await statusOf(tf, d.id), 'AWAITING_FINAL_DELETE', 'and does not start it over')
  clock.advance(1000)
  t.equal((await tf.post('/v2/deployments', dockerDeployment({ name: 'bot' }))).status, 201, 'once gone, the name is free')
})

t.test('bulk delete starts each deletion; the ids read as deleted while they walk out', async (t) => {
  const { tf, clock } = await serve(t)
  const a = (await tf.post('/v2/deployments', dockerDeployment({ name: 'a' }))).body
  const b = (await tf.post('/v2/deployments', dockerDeployment({ name: 'b' }))).body
  const res = await tf.delete(`/v2/deployments?deployment_ids=${a.id}&deployment_ids=${b.id}`)
  t.equal(res.status, 200)
  t.same(res.body, { deleted_ids: [a.id, b.id], failed: [] })
  t.same(await Promise.all([statusOf(tf, a.id), statusOf(tf, b.id)]), ['AWAITING_DELETE', 'AWAITING_DELETE'])
  t.equal((await tf.delete(`/v2/deployments?deployment_ids=${a.id}`)).status, 200, 'again while deleting')
  clock.advance(3000)
  t.same(await Promise.all([statusOf(tf, a.id), statusOf(tf, b.id)]), [404, 404])
  t.same((await tf.get('/v2/deployments')).body.resources, [])
})

t.test('its agent server stops when the delete starts', async (t) => {
  const { tf, clock, base } = await serve(t)
  const d = (await tf.post('/v2/deployments', dockerDeployment())).body
  clock.advance(4000)
  const agent = fetchClient(`${base}/deployments/${d.id}/agent`, { 'x-api-key': 'k' })
  const thread = (await agent.post('/threads', {})).body
  t.equal((await agent.get(`/threads/${thread.thread_id}`)).status, 200)
  await tf.delete(`/v2/deployments/${d.id}`)
  t.equal(await statusOf(tf, d.id), 'AWAITING_DELETE')
  const gone = await agent.get(`/threads/${thread.thread_id}`)
  t.equal(gone.status, 404)
  t.same(gone.body, { detail: `Deployment ID ${d.id} not found.` })
})

t.test('a deletion survives a restart and finishes on the clock while hangar is down', async (t) => {
  const db = join(t.testdir(), 'hangar.db')
  const { app: first, clock } = buildTestApp({ config: { db } })
  await first.ready()
  const d = (await clientFor(first).post('/v2/deployments', dockerDeployment())).body
  await clientFor(first).delete(`/v2/deployments/${d.id}`)
  clock.advance(2500)
  t.equal(await statusOf(clientFor(first), d.id), 'AWAITING_FINAL_DELETE')
  await first.close()

  const { app: second } = buildTestApp({ clock, config: { db } })
  t.teardown(() => second.close())
  await second.ready()
  t.equal(await statusOf(clientFor(second), d.id), 'AWAITING_FINAL_DELETE', 'where it was')
  clock.advance(500)
  t.equal(await statusOf(clientFor(second), d.id), 404, 'and on to the end')
})
