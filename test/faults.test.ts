// Fault injection: injected statuses and latencies, how rules match, seeded replay, the admin API.

import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import type { FastifyPluginAsync } from 'fastify'
import type { App } from '../src/app.js'
import { Clock } from '../src/clock.js'
import { FaultInjector, type FaultInput } from '../src/admin/faults.js'
import { SseWriter } from '../src/sse/writer.js'
import { makeApp, serveApp, settlesWithin, START, TENANT_A, TENANT_B, until, type Client } from './helpers.js'

/** hangar (optionally with test-only routes that see its fault injector), optionally listening. */
async function faulted(t: Test, options: { routes?: (faults: FaultInjector) => FastifyPluginAsync; listen?: boolean } = {}) {
  const routes = options.routes && ((app: App) => options.routes!(app.emulator.faults))
  const { app, clock, api } = options.listen ? await serveApp(t, {}, { routes }) : await makeApp(t, { config: { heartbeatMs: 0 }, routes })
  const { faults, journal } = app.emulator
  const addFault = async (rule: Record<string, unknown>) => {
    const res = await api.post('/_hangar/faults', rule)
    if (res.status !== 201) throw new Error(`fault not added: ${res.status} ${res.text}`)
    return res.body
  }
  return { app, clock, faults, journal, api, addFault }
}

const statusOf = async (api: Client, method: string, url: string, headers?: Record<string, string>) =>
  (await api.request(method, url, { headers, ...(method === 'POST' ? { body: {} } : {}) })).status

t.test("a fault answers its status with FastAPI's body, the reason phrase as detail", async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', status: 503 })
  const res = await api.get('/v2/deployments')
  t.equal(res.status, 503)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.same(res.body, { detail: 'Service Unavailable' })
})

t.test('a fault answers its own detail when it has one', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', status: 429, detail: 'Rate limit exceeded' })
  t.same((await api.get('/v2/deployments')).body, { detail: 'Rate limit exceeded' })
})

t.test('a new fault is returned with every field, its defaults and the seed it uses', async (t) => {
  const { addFault } = await faulted(t)
  const fault = await addFault({ path: '/v2/**', status: 500 })
  t.match(fault.id, /^[0-9a-f-]{36}$/)
  t.type(fault.seed, 'number')
  const { id: _id, seed: _seed, ...rest } = fault
  t.same(rest, {
    method: '*', path: '/v2/**', workspace: null, latency: null, status: 500, detail: null, probability: 1,
    times: null, drop_after_events: null, created_at: new Date(START).toISOString(), matched: 0,
  })
})

t.test('a * in a glob matches within one path segment only', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments/*', status: 500 })
  const id = '33333333-3333-4333-8333-333333333333'
  t.equal(await statusOf(api, 'GET', `/v2/deployments/${id}`), 500)
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 200)
  t.equal(await statusOf(api, 'GET', `/v2/deployments/${id}/revisions`), 404, 'reached the route: no such deployment')
})

t.test('a ** in a glob matches any number of segments, none included', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/listeners/**', status: 500 })
  await addFault({ path: '**/deployments', status: 502 })
  t.equal(await statusOf(api, 'GET', '/v2/listeners'), 500)
  t.equal(await statusOf(api, 'GET', '/v2/listeners/l-1'), 500)
  t.equal(await statusOf(api, 'GET', '/api-host/v2/deployments'), 502)
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 502)
  t.equal(await statusOf(api, 'GET', '/v1/integrations/github/install'), 200)
})

t.test('a path written /…/ is a regular expression', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/^\\/v2\\/(deployments|listeners)$/', status: 500 })
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 500)
  t.equal(await statusOf(api, 'GET', '/v2/listeners'), 500)
  t.equal(await statusOf(api, 'GET', '/api-host/v2/listeners'), 200)
})

t.test('a fault applies only to its method', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ method: 'POST', path: '/threads', status: 500 })
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 200)
  t.equal(await statusOf(api, 'POST', '/threads'), 500)
})

t.test('a fault applies only to its workspace', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', workspace: TENANT_A.toUpperCase(), status: 500 })
  t.equal(await statusOf(api, 'GET', '/v2/deployments', { 'x-tenant-id': TENANT_A }), 500)
  t.equal(await statusOf(api, 'GET', '/v2/deployments', { 'x-tenant-id': TENANT_B }), 200)
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 200, 'the default workspace is another one')
})

t.test('a fault with times stops after that many applications, and counts them', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', status: 500, times: 2 })
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push(await statusOf(api, 'GET', '/v2/deployments'))
  t.same(statuses, [500, 500, 200])
  t.equal((await api.get('/_hangar/faults')).body.faults[0].matched, 2)
})

t.test('the same rule and seed give the same outcomes over 100 requests, another seed other ones', async (t) => {
  const outcomes = (seed: number) => {
    const faults = new FaultInjector(Clock.manual(START))
    faults.add({ path: '/**', status: 500, probability: 0.5, seed, latency: { min_ms: 0, max_ms: 1000 } })
    return Array.from({ length: 100 }, () => {
      const outcome = faults.match('GET', '/v2/deployments', null)
      return outcome ? outcome.latencyMs : -1
    })
  }
  const first = outcomes(42)
  t.same(outcomes(42), first, 'replayed identically')
  t.notSame(outcomes(43), first)
  const hits = first.filter((latency) => latency >= 0).length
  t.ok(hits > 25 && hits < 75, `about half of the requests are faulted (${hits})`)
})

t.test('a rule re-added with the seed it reported replays its outcomes', async (t) => {
  const rule: FaultInput = { path: '/**', status: 500, probability: 0.3 }
  const draw = (faults: FaultInjector) => Array.from({ length: 50 }, () => faults.match('GET', '/x', null) !== undefined)
  const original = new FaultInjector(Clock.manual(START))
  const { seed } = original.add(rule)
  const replay = new FaultInjector(Clock.manual(START))
  replay.add({ ...rule, seed })
  t.same(draw(replay), draw(original))
})

t.test('a latency holds the request until the manual clock reaches it, not before', async (t) => {
  const { api, clock, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', latency: { ms: 1000 } })
  const pending = api.get('/v2/deployments')
  t.equal(await settlesWithin(pending), false, 'held')
  clock.advance(999)
  t.equal(await settlesWithin(pending), false, 'still held a millisecond before')
  clock.advance(1)
  t.equal((await pending).status, 200, 'then answered by the route')
})

t.test("a latency range draws each wait from the rule's generator, within the range", async (t) => {
  const faults = new FaultInjector(Clock.manual(START))
  faults.add({ path: '/**', latency: { min_ms: 100, max_ms: 200 }, seed: 7 })
  const waits = Array.from({ length: 50 }, () => faults.match('GET', '/x', null)!.latencyMs)
  t.ok(waits.every((ms) => Number.isInteger(ms) && ms >= 100 && ms <= 200))
  t.ok(new Set(waits).size > 10, 'the waits vary')
})

t.test('a latency with a status answers the status once the wait is over', async (t) => {
  const { api, clock, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', latency: { ms: 500 }, status: 504 })
  const pending = api.get('/v2/deployments')
  t.equal(await settlesWithin(pending), false)
  clock.advance(500)
  const res = await pending
  t.equal(res.status, 504)
  t.same(res.body, { detail: 'Gateway Timeout' })
})

t.test("hangar's own paths are never faulted, so faults can always be removed", async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '**', status: 500 })
  await addFault({ path: '**', latency: { ms: 60_000 } })
  t.equal(await statusOf(api, 'GET', '/ok'), 200)
  t.equal(await statusOf(api, 'GET', '/openapi.json'), 200)
  t.equal(await statusOf(api, 'GET', '/_hangar/faults'), 200)
  t.equal(await statusOf(api, 'DELETE', '/_hangar/faults'), 204)
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 200)
})

t.test('a rule outside the schema is a 422 naming each field', async (t) => {
  const { api } = await faulted(t)
  const res = await api.post('/_hangar/faults', { method: 'get', status: 399, probability: 1.5, times: 0 })
  t.equal(res.status, 422)
  t.same(res.body.detail.map((e: any) => [e.loc.join('.'), e.type]), [
    ['body.method', 'literal_error'],
    ['body.path', 'missing'],
    ['body.status', 'greater_than_equal'],
    ['body.probability', 'less_than_equal'],
    ['body.times', 'greater_than_equal'],
  ])
  const latency = await api.post('/_hangar/faults', { path: '/x', latency: { ms: -1 } })
  t.equal(latency.status, 422)
  t.equal(latency.body.detail[0].loc.at(-1), 'ms')
})

t.test('a rule that cannot work as written is a 400 saying why', async (t) => {
  const { api } = await faulted(t)
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ path: '/x', latency: { min_ms: 500, max_ms: 100 } }, /min_ms \(500\) is greater than max_ms \(100\)/],
    [{ path: '/(unclosed/', status: 500 }, /not a valid regular expression/],
    [{ path: 'v2/deployments', status: 500 }, /must start with \/ or \*/],
    [{ path: '/v2/a**', status: 500 }, /\*\* must stand alone/],
    [{ path: '/x' }, /at least one of status, latency or drop_after_events/],
    [{ path: '/x', latency: { ms: 5 }, detail: 'why' }, /detail needs a status/],
    [{ path: '/x', status: 500, drop_after_events: 1 }, /drop_after_events cannot be combined with status/],
  ]
  for (const [rule, detail] of cases) {
    const res = await api.post('/_hangar/faults', rule)
    t.equal(res.status, 400, JSON.stringify(rule))
    t.match(res.body.detail, detail)
  }
  t.same((await api.get('/_hangar/faults')).body, { faults: [] }, 'none was added')
})

t.test('removing a fault lets requests through again; an unknown id is a 404', async (t) => {
  const { api, addFault } = await faulted(t)
  const fault = await addFault({ path: '/v2/deployments', status: 500 })
  t.equal((await api.delete(`/_hangar/faults/${fault.id}`)).status, 204)
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 200)
  const missing = await api.delete(`/_hangar/faults/${fault.id}`)
  t.equal(missing.status, 404)
  t.same(missing.body, { detail: `Fault ${fault.id} not found` })
})

t.test('removing every fault empties the list and lets every request through', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', status: 500 })
  await addFault({ path: '/v2/listeners', status: 500 })
  t.equal((await api.delete('/_hangar/faults')).status, 204)
  t.same((await api.get('/_hangar/faults')).body, { faults: [] })
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 200)
})

t.test('the faults are listed in the order they are tried, and the first that fires decides', async (t) => {
  const { api, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', status: 503 })
  await addFault({ path: '/v2/**', status: 500 })
  t.same((await api.get('/_hangar/faults')).body.faults.map((f: any) => f.status), [503, 500])
  t.equal(await statusOf(api, 'GET', '/v2/deployments'), 503)
  t.equal(await statusOf(api, 'GET', '/v2/listeners'), 500)
})

/** An event stream wired to faults the way the run streams should be: N events, then the drop. */
const droppingStream = (faults: FaultInjector): FastifyPluginAsync => async (app) => {
  app.get('/test/events', async (request, reply) => {
    reply.hijack()
    const writer = new SseWriter(reply.raw, { heartbeatMs: 0, headers: {} })
    const dropAfter = faults.dropAfter(request)
    if (dropAfter === 0) return drop(reply.raw)
    for (let i = 0; i < 5; i++) {
      if (!(await writer.send({ id: String(i), event: 'tick', data: i }))) break
      if (i + 1 === dropAfter) return drop(reply.raw)
    }
    writer.close()
  })
}
/** Cuts the connection like a network failure: what was written is flushed, the response never ends. */
function drop(raw: ServerResponse) {
  const socket = raw.socket as { destroySoon?: () => void } | null
  if (typeof socket?.destroySoon === 'function') socket.destroySoon()
  else raw.destroy()
}

/** GETs a stream; resolves with what arrived and whether the response ended cleanly. */
function readStream(port: number, path: string) {
  return new Promise<{ text: string; ended: boolean }>((resolve) => {
    let text = ''
    const req = httpRequest({ port, path, headers: { 'x-api-key': 'k' } }, (res: IncomingMessage) => {
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ text, ended: true }))
      res.on('error', () => resolve({ text, ended: false }))
    })
    req.on('error', () => resolve({ text, ended: false }))
    req.end()
  })
}

t.test('an event stream with drop_after_events is cut after that many events', async (t) => {
  const { app, addFault } = await faulted(t, { routes: droppingStream, listen: true })
  const port = (app.server.address() as { port: number }).port
  await addFault({ path: '/test/other', drop_after_events: 1 })
  const whole = await readStream(port, '/test/events')
  t.same([whole.text.split('\n\n').length - 1, whole.ended], [5, true], 'without a fault of its own: every event and a clean end')
  await addFault({ path: '/test/events', drop_after_events: 2 })
  const cut = await readStream(port, '/test/events')
  t.equal(cut.text, 'event: tick\ndata: 0\nid: 0\n\nevent: tick\ndata: 1\nid: 1\n\n')
  t.equal(cut.ended, false, 'the connection dropped')
})

t.test('a client that leaves during a latency ends the wait and is journaled as 499', async (t) => {
  const { app, clock, journal, addFault } = await faulted(t, { listen: true })
  await addFault({ path: '/v2/deployments', latency: { ms: 60_000 } })
  const port = (app.server.address() as { port: number }).port
  const before = clock.listenerCount('change')
  const req = httpRequest({ port, path: '/v2/deployments', headers: { 'x-api-key': 'k' } })
  req.on('error', () => {})
  req.end()
  await until(() => clock.listenerCount('change') > before, 'the request waits on the clock')
  t.equal(clock.listenerCount('change'), before + 1, 'the request waits on the clock')
  req.destroy()
  await until(() => clock.listenerCount('change') === before && journal.size > 0, 'the wait ends and the request is journaled')
  t.equal(clock.listenerCount('change'), before, 'the wait is over')
  t.match(journal.list()[0], { path: '/v2/deployments', status: 499 })
})

t.test('closing the app releases the requests a latency holds', async (t) => {
  const { app, addFault } = await faulted(t)
  await addFault({ path: '/v2/deployments', latency: { ms: 60_000 }, status: 503 })
  const pending = app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k' } })
  t.equal(await settlesWithin(pending), false)
  await app.close()
  t.equal((await pending).statusCode, 503)
})
