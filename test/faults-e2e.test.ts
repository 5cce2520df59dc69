// Faults and the request journal where users meet them: real run streams read by the official SDK
// (which resumes a cut stream), deployed agents, reset, the admin token.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { startHangar, waitForRevision } from '../src/index.js'
import { githubDeployment, makeApp, serveApp, settlesWithin, TENANT_A, until, waitsOnClock } from './helpers.js'

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

t.test('a stream cut after 2 events: the SDK resumes it from the last event id and sees every event once', async (t) => {
  const { base } = await serveApp(t)
  const added = await (await post(base, '/_hangar/faults', { method: 'POST', path: '/threads/*/runs/stream', drop_after_events: 2, times: 1 })).json() as any
  const client = new Client({ apiUrl: base, apiKey: 'k' })
  const thread = await client.threads.create()
  const events: { event: string; data: any }[] = []
  const input = { messages: [{ role: 'user', content: 'one two three four five' }] }
  for await (const part of client.runs.stream(thread.thread_id, 'agent', { input, streamMode: ['values', 'updates', 'messages-tuple'] })) events.push(part)

  const faults = await (await fetch(`${base}/_hangar/faults`)).json() as any
  t.equal(faults.faults.find((f: any) => f.id === added.id).matched, 1, 'the fault cut the first stream')
  t.equal(events[0].event, 'metadata')
  t.equal(events.filter((e) => e.event === 'metadata').length, 1, 'no event twice: the resumed stream starts after the last id seen')
  const state = await client.threads.getState(thread.thread_id)
  t.same(events.filter((e) => e.event === 'values').at(-1)!.data, state.values, 'the last values event is the final state')

  const journal = await (await fetch(`${base}/_hangar/requests?path=**/stream`)).json() as any
  t.same(journal.requests.map((r: any) => r.method).reverse(), ['POST', 'GET'], 'the cut stream, then the SDK\'s reconnection')
  t.equal(journal.requests[0].request_headers['last-event-id'] !== undefined, true, 'the reconnection says where it stopped')
  t.equal(journal.requests[0].request_headers['x-api-key'], '[redacted]')
})

t.test('on_disconnect "cancel": a cut stream cancels its run, as a client that left would', async (t) => {
  const { base, clock } = await serveApp(t)
  await post(base, '/_hangar/faults', { path: '**/runs/stream', drop_after_events: 1 })
  const thread = await (await post(base, '/threads', {}, { 'x-api-key': 'k' })).json() as any
  const response = await post(base, `/threads/${thread.thread_id}/runs/stream`, {
    assistant_id: 'pipeline', input: { topic: 'slow' }, on_disconnect: 'cancel',
  }, { 'x-api-key': 'k' })
  await t.rejects(response.text(), 'the body breaks off: a network error, not a clean end')
  const client = new Client({ apiUrl: base, apiKey: 'k' })
  let runs = await client.runs.list(thread.thread_id)
  await until(async () => (runs = await client.runs.list(thread.thread_id))[0]?.status === 'interrupted', 'the run is interrupted', 200)
  t.equal(runs[0].status, 'interrupted')
  clock.advance(120_000)
  t.equal((await client.runs.get(thread.thread_id, runs[0].run_id)).status, 'interrupted', 'and it stays so')
})

t.test('a latency on runs/wait holds the answer until the clock has moved that far', async (t) => {
  const { base, clock } = await serveApp(t)
  await post(base, '/_hangar/faults', { path: '/runs/wait', latency: { ms: 30_000 } })
  const pending = post(base, '/runs/wait', { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } }, { 'x-api-key': 'k' })
  await until(() => waitsOnClock(clock), 'the latency waits on the clock', 500)
  clock.advance(29_999)
  t.equal(await settlesWithin(pending), false, 'one millisecond short: still held')
  clock.advance(1)
  const response = await pending
  t.equal(response.status, 200)
  t.equal(((await response.json()) as any).messages.at(-1).content, 'hi')
})

t.test('faults reach deployed agents too; a workspace rule does not (the agent server acts in no workspace)', async (t) => {
  const hangar = await startHangar()
  t.teardown(() => hangar.close())
  const created = await (await post(hangar.url, '/v2/deployments', githubDeployment(), { 'x-api-key': 'k' })).json() as any
  await waitForRevision(hangar, created.id, created.latest_revision_id)
  await post(hangar.url, '/_hangar/faults', { path: '/deployments/*/agent/threads', status: 500, workspace: TENANT_A })
  t.equal((await post(created.url, '/threads', {}, { 'x-api-key': 'k' })).status, 200, 'the workspace rule passes it by')
  await post(hangar.url, '/_hangar/faults', { path: '/deployments/*/agent/threads', status: 500 })
  const failed = await post(created.url, '/threads', {}, { 'x-api-key': 'k' })
  t.equal(failed.status, 500)
  t.same(await failed.json(), { detail: 'Internal Server Error' })
})

t.test('a full reset removes the faults and empties the journal; a workspace reset keeps them', async (t) => {
  const { app } = await makeApp(t)
  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => app.inject({ method, url, payload })
  await admin('POST', '/_hangar/faults', { path: '/v2/listeners', status: 418 })
  await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k' } })
  await admin('POST', '/_hangar/reset', { workspace: TENANT_A })
  t.equal((await admin('GET', '/_hangar/faults')).json().faults.length, 1)
  t.equal((await admin('GET', '/_hangar/requests')).json().requests.length, 1)
  await admin('POST', '/_hangar/reset')
  t.same((await admin('GET', '/_hangar/faults')).json().faults, [])
  t.same((await admin('GET', '/_hangar/requests')).json().requests, [])
})

t.test('with an admin token, the journal and the faults need it; the token never shows in the journal', async (t) => {
  const { app } = await makeApp(t, { config: { adminToken: 'sesame' } })
  for (const url of ['/_hangar/requests', '/_hangar/faults']) {
    const refused = await app.inject({ method: 'GET', url })
    t.equal(refused.statusCode, 401, url)
    t.same(refused.json(), { detail: 'Admin token required' })
  }
  await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k', 'x-hangar-admin-token': 'sesame' } })
  const journal = await app.inject({ method: 'GET', url: '/_hangar/requests', headers: { authorization: 'Bearer sesame' } })
  t.equal(journal.statusCode, 200)
  t.equal(journal.json().requests[0].request_headers['x-hangar-admin-token'], '[redacted]')
  t.notMatch(journal.body, /sesame/)
})

t.test('with HANGAR_JOURNAL_SIZE 0 nothing is kept', async (t) => {
  const { app } = await makeApp(t, { config: { journalSize: 0 } })
  await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k' } })
  const journal = (await app.inject({ method: 'GET', url: '/_hangar/requests' })).json()
  t.same(journal, { requests: [], size: 0, capacity: 0 })
})

t.test('the OpenAPI document lists the admin operations under the Emulator tag', async (t) => {
  const { app } = await makeApp(t)
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const emulator = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops).filter(([, op]) => op.tags?.includes('Emulator')).map(([method]) => `${method.toUpperCase()} ${path}`))
  for (const op of ['GET /_hangar/requests', 'DELETE /_hangar/requests', 'POST /_hangar/faults', 'GET /_hangar/faults',
    'DELETE /_hangar/faults', 'DELETE /_hangar/faults/{fault_id}', 'POST /_hangar/clock', 'POST /_hangar/reset', 'PUT /_hangar/state']) {
    t.ok(emulator.includes(op), op)
  }
})
