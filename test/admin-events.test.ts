// GET /_hangar/events: what changes inside hangar, live, over a real socket. Nothing sleeps: the test
// waits for bytes to arrive and for the event loop to settle, and time moves with the manual clock.

import { createHook } from 'node:async_hooks'
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import t, { type Test } from 'tap'
import { dockerDeployment, serveApp, START, TENANT_A, turn, until } from './helpers.js'

const HEARTBEAT_MS = 15_000
const JSON_HEADERS = { 'content-type': 'application/json', 'x-api-key': 'k' }

interface Message {
  topic: string
  data: any
}


/** Follows the event stream: its messages as they arrive, and a way to wait for more. */
async function follow(t: Test, base: string, headers: Record<string, string> = {}) {
  const messages: Message[] = []
  let raw = ''
  let ended = false
  let request!: ClientRequest
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request = httpRequest(`${base}/_hangar/events`, { headers }, resolve)
    request.on('error', reject)
    request.end()
  })
  response.setEncoding('utf8')
  response.on('data', (chunk: string) => {
    raw += chunk
    let blank: number
    while ((blank = raw.indexOf('\n\n')) >= 0) {
      const block = raw.slice(0, blank)
      raw = raw.slice(blank + 2)
      const lines = block.split('\n')
      if (lines.every((line) => line.startsWith(':'))) continue
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2)
      messages.push({ topic: field('event')!, data: JSON.parse(field('data')!) })
    }
  })
  response.on('end', () => (ended = true))
  response.on('error', () => {})
  t.teardown(() => void request.destroy())
  return {
    response,
    messages,
    get ended() {
      return ended
    },
    /** Waits until `count` messages have arrived in all. */
    async count(count: number) {
      await until(() => messages.length >= count, `${count} messages (have ${messages.length}: ${messages.map((m) => m.topic).join(', ')})`)
      return messages
    },
    leave: () => request.destroy(),
  }
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method, headers: { ...JSON_HEADERS, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

t.test('the stream opens with the clock, then says what changed, in the order it changed', async (t) => {
  const { base, app } = await serveApp(t, { tickMs: 3_600_000 })
  const events = await follow(t, base)
  t.equal(events.response.statusCode, 200)
  t.equal(events.response.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(events.response.headers['cache-control'], 'no-cache')
  t.same(await events.count(1), [{ topic: 'clock', data: { now: new Date(START).toISOString(), now_ms: START, frozen: true } }])
  t.equal(app.emulator.bus.subscribers, 1)

  // A deployment: written, then its request recorded.
  const d = (await call(base, 'POST', '/v2/deployments', dockerDeployment(), { 'x-tenant-id': TENANT_A })).body
  // The clock moves (the admin API is not journaled), and a read persists the step that became due.
  await call(base, 'POST', '/_hangar/clock', { action: 'advance', ms: 1000 })
  await call(base, 'GET', `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`, undefined, { 'x-tenant-id': TENANT_A })
  t.same((await events.count(6)).slice(1), [
    { topic: 'deployments', data: { workspace: TENANT_A, deployment_id: d.id, revision_id: null, status: null } },
    { topic: 'request', data: { id: 1, method: 'POST', path: '/v2/deployments', status: 201, latency_ms: events.messages[2].data.latency_ms } },
    { topic: 'clock', data: { now: new Date(START + 1000).toISOString(), now_ms: START + 1000, frozen: true } },
    { topic: 'deployments', data: { workspace: TENANT_A, deployment_id: d.id, revision_id: d.latest_revision_id, status: 'QUEUED' } },
    { topic: 'request', data: { id: 2, method: 'GET', path: `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`, status: 200, latency_ms: events.messages[5].data.latency_ms } },
  ])

  // A run: its statuses and each event appended to its log (names and ids only), then its request.
  const thread = (await call(base, 'POST', '/threads', {})).body
  await events.count(7)
  const from = events.messages.length
  const wait = await call(base, 'POST', `/threads/${thread.thread_id}/runs/wait`, {
    assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hello there' }] }, feedback_keys: ['helpful'],
  })
  t.equal(wait.status, 200)
  const runs = (await call(base, 'GET', `/threads/${thread.thread_id}/runs`)).body
  const runId = runs[0].run_id
  // The run's own log, as its join stream replays it from the start.
  const replay = await (await fetch(`${base}/threads/${thread.thread_id}/runs/${runId}/stream`, { headers: { 'x-api-key': 'k', 'last-event-id': '-1' } })).text()
  const logged = [...replay.matchAll(/^event: (.+)\n.*\nid: (\d+)$/gm)].map(([, event, id]) => ({ event, id }))
  t.ok(logged.some((e) => e.event === 'feedback'), 'the run handed out feedback URLs')
  const seen = (await events.count(from + logged.length + 4)).slice(from, from + logged.length + 4)
  const ids = { run_id: runId, thread_id: thread.thread_id, scope: '' }
  t.same(seen, [
    { topic: 'run', data: { ...ids, status: 'pending', event: null, event_id: null } },
    { topic: 'run', data: { ...ids, status: 'running', event: null, event_id: null } },
    ...logged.map((e) => ({ topic: 'run', data: { ...ids, status: null, event: e.event, event_id: e.id } })),
    { topic: 'run', data: { ...ids, status: 'success', event: null, event_id: null } },
    { topic: 'request', data: { id: 4, method: 'POST', path: `/threads/${thread.thread_id}/runs/wait`, status: 200, latency_ms: seen.at(-1)!.data.latency_ms } },
  ], 'every event of the run\'s log, in order, between its statuses')
})

t.test('faults added and removed, resets and imports are announced', async (t) => {
  const { base } = await serveApp(t)
  const events = await follow(t, base)
  await events.count(1)
  const fault = (await call(base, 'POST', '/_hangar/faults', { path: '/nowhere', status: 503 })).body
  await call(base, 'DELETE', `/_hangar/faults/${fault.id}`)
  await call(base, 'DELETE', '/_hangar/faults/not-a-fault')
  await call(base, 'POST', '/_hangar/reset', { workspace: TENANT_A })
  const state = await (await fetch(`${base}/_hangar/state`)).text()
  await call(base, 'PUT', '/_hangar/state', JSON.parse(state))
  await call(base, 'POST', '/_hangar/reset')
  t.same((await events.count(7)).slice(1), [
    { topic: 'faults', data: { action: 'added', fault_id: fault.id } },
    { topic: 'faults', data: { action: 'removed', fault_id: fault.id } },
    { topic: 'state', data: { action: 'reset', workspace: TENANT_A } },
    { topic: 'state', data: { action: 'import', workspace: null } },
    { topic: 'faults', data: { action: 'cleared', fault_id: null } },
    { topic: 'state', data: { action: 'reset', workspace: null } },
  ], 'removing a fault that is not there announces nothing')
})

t.test('a client that leaves takes its subscription, its wait on the clock and its heartbeat timer with it', async (t) => {
  const timers = { created: 0, live: new Set<number>() }
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (type === 'Timeout' && (resource as { _repeat?: number | null })._repeat === HEARTBEAT_MS) {
        timers.created++
        timers.live.add(asyncId)
      }
    },
    destroy: (asyncId) => void timers.live.delete(asyncId),
  }).enable()
  t.teardown(() => void hook.disable())
  const { base, app, clock } = await serveApp(t)
  t.equal(clock.listenerCount('change'), 0, 'nobody listening: nothing waits on the clock')

  const first = await follow(t, base)
  const second = await follow(t, base)
  await first.count(1)
  await second.count(1)
  t.equal(app.emulator.bus.subscribers, 2)
  t.equal(clock.listenerCount('change'), 1, 'the bus follows the clock once, however many listen')
  t.equal(timers.created, 2, 'one heartbeat timer per stream')

  first.leave()
  await until(() => app.emulator.bus.subscribers === 1, 'the first subscription ends')
  clock.advance(5)
  await second.count(2)
  t.same(second.messages[1].data.now_ms, START + 5, 'the other client still hears the clock')
  t.equal(first.messages.length, 1)

  second.leave()
  await until(() => app.emulator.bus.subscribers === 0, 'the second subscription ends')
  t.equal(clock.listenerCount('change'), 0, 'nothing waits on the clock any more')
  await until(() => timers.live.size === 0, 'the heartbeat timers are cleared')
  t.pass('both heartbeat timers are gone')
})

t.test('shutdown ends open event streams cleanly rather than waiting for them', async (t) => {
  const { base, app } = await serveApp(t)
  const events = await follow(t, base)
  await events.count(1)
  await app.close()
  await until(() => events.ended, 'the stream ends')
  t.equal(events.response.complete, true, 'the response ended properly, not cut')
  t.equal(app.emulator.bus.subscribers, 0)
})

t.test('a client that stops reading is cut off once it is ten thousand messages behind; the others keep going', async (t) => {
  const { base, app } = await serveApp(t)
  const reader = await follow(t, base)
  const stalled = await follow(t, base)
  await reader.count(1)
  await stalled.count(1)
  stalled.response.pause()
  const bulky = 'x'.repeat(4096)
  let published = 0
  // Keep publishing while the stalled client is subscribed, giving the sockets a turn between batches.
  while (app.emulator.bus.subscribers === 2 && published < 200_000) {
    for (let i = 0; i < 100; i++, published++) app.emulator.bus.publish('state', { action: 'reset', workspace: bulky })
    await turn()
  }
  t.equal(app.emulator.bus.subscribers, 1, `cut off after ${published} messages`)
  await reader.count(published + 1)
  t.equal(reader.messages.length, published + 1, 'the reading client got every message')
})

t.test('with HANGAR_ADMIN_TOKEN, the stream needs it', async (t) => {
  const { base } = await serveApp(t, { adminToken: 's3cret' })
  const denied = await fetch(`${base}/_hangar/events`)
  t.equal(denied.status, 401)
  t.same(await denied.json(), { detail: 'Admin token required' })
  const events = await follow(t, base, { 'x-hangar-admin-token': 's3cret' })
  t.equal(events.response.statusCode, 200)
  t.equal((await events.count(1))[0].topic, 'clock')
})
