// hangar's session protocol against the real JS agent server's recorded wire
// (test/fixtures/agent-protocol/, see its README for the versions): the same requests answered with
// the same status, content type and body (ids and timestamps aside), and streams with the same
// framing and the same events. Where hangar differs on purpose, the test says so and why.

import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { API_KEY, serveApp, until } from './helpers.js'
import { ALL_CHANNELS, command, envelopes, readEvents, rootEnded, type WireEvent } from './protocol-helpers.js'

interface Exchange {
  kind: 'http' | 'ws' | 'note'
  text?: string
  request: { method: string; path: string; headers: Record<string, string>; body: string }
  response: { status: number; headers: Record<string, string>; body: string }
}

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/agent-protocol/${name}.json`, import.meta.url), 'utf8')) as { exchanges: Exchange[] }

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const HEX32 = /\b[0-9a-f]{32}\b/g

/** Ids (UUIDs, interrupt ids) and timestamps blanked: what must match is everything else. */
const normalize = (text: string) => text.replace(UUID, '<uuid>').replace(HEX32, '<hex>').replace(/"timestamp":\d+/g, '"timestamp":0')

/** The events as [method, namespace depth, node, data] with ids normalized, for comparing courses of runs. */
function course(events: WireEvent[]) {
  return JSON.parse(normalize(JSON.stringify(events.map((e) => [e.method, e.params.namespace.length, e.params.node ?? null, e.params.data]))))
}

/**
 * What hangar leaves out or adds on purpose, removed from both sides before comparing:
 * - an AI message's `response_metadata` (the real one is what its chat model reported; a scripted
 *   reply has none) and a task's `metadata` and full-serialization `input`/`result` (the state's
 *   serialization is the Python server's in hangar);
 */
function comparable(events: WireEvent[]): WireEvent[] {
  return events
    .map((e) => {
      const data = structuredClone(e.params.data)
      if (e.method === 'tasks') {
        delete data.metadata
        delete data.input
        delete data.result
      }
      for (const m of [...((data.messages as Record<string, unknown>[] | undefined) ?? [])]) delete m.response_metadata
      return { ...e, params: { ...e.params, data } }
    })
}

/** The SSE body of the fixture's first `/stream/events` exchange. */
const firstStream = (exchanges: Exchange[]) => exchanges.find((e) => e.kind === 'http' && e.request.path.endsWith('/stream/events') && e.response.status === 200)!.response.body

/** Runs a scenario's run.start (and respond) against hangar and reads the whole stream. */
async function hangarStream(base: string, graph: string, text: string, runs = 1) {
  const threadId = randomUUID()
  const reading = readEvents(base, threadId, { channels: ALL_CHANNELS }, rootEnded(runs))
  await command(base, threadId, { id: 1, method: 'run.start', params: { assistant_id: graph, input: { messages: [{ type: 'human', content: text }] } } })
  return { threadId, reading }
}

t.test('SSE framing: event, data, id lines in that order, one blank line; envelope and params keys in the real order', async (t) => {
  const { base } = await serveApp(t)
  const { reading } = await hangarStream(base, 'agent', 'hello there world')
  const { text, headers } = await reading
  t.match(headers.get('content-type'), /^text\/event-stream/)
  t.equal(headers.get('cache-control'), 'no-cache')
  const blocks = text.split('\n\n').filter(Boolean)
  for (const block of blocks) {
    const m = /^event: (\S+)\ndata: (\{.*\})\nid: (\d+)$/.exec(block)
    if (!m) {
      t.fail(`not an event block: ${JSON.stringify(block)}`)
      continue
    }
    const envelope = JSON.parse(m[2]) as WireEvent
    t.equal(envelope.method, m[1])
    t.equal(envelope.event_id, m[3])
    t.equal(String(envelope.seq), m[3])
  }
  // The key order of every envelope as the real server writes it, compared on the whole text.
  const skeleton = (raw: string) => normalize(raw).split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.replace(/"data":\{.*\}\}\}$/, '"data":…}}').replace(/"namespace":\[[^\]]*\]/, '"namespace":[…]'))
  t.same(skeleton(text), skeleton(firstStream(fixture('echo').exchanges)).slice(0, blocks.length), 'the same envelopes, line for line (payloads aside)')
})

t.test('the courses of runs match the real server: echo, a second turn replayed, an interrupt answered, a failure', async (t) => {
  const { base } = await serveApp(t)

  const echo = await (await hangarStream(base, 'agent', 'hello there world')).reading
  const realEcho = envelopes(firstStream(fixture('echo').exchanges)).filter((e) => e.seq <= 18)
  t.same(course(comparable(echo.events)), course(comparable(realEcho)), 'echo run')

  const failure = await (await hangarStream(base, 'flaky', 'please fail now')).reading
  t.same(course(comparable(failure.events)), course(comparable(envelopes(firstStream(fixture('failure').exchanges)))), 'failure')

  const approval = await hangarStream(base, 'approval', 'ship it', 2)
  const interrupt = fixture('interrupt').exchanges
  const realInterrupt = envelopes(interrupt.find((e) => e.kind === 'http' && e.request.path.endsWith('/stream/events') && e.request.body.includes('"channels"') && e.response.body.includes('"event":"completed"'))!.response.body)
  // Answer the interrupt as the client does, with the id the stream announced.
  const asked = await readEvents(base, approval.threadId, { channels: ['input'] }, (events) => events.length === 1)
  const respond = await command(base, approval.threadId, { id: 3, method: 'input.respond', params: { interrupt_id: asked.events[0].params.data.interrupt_id, namespace: [], response: 'yes' } })
  t.same(respond.body, { type: 'success', id: 3, result: {}, meta: { thread_id: approval.threadId, applied_through_seq: respond.body.meta.applied_through_seq } })
  const both = await approval.reading
  t.same(course(comparable(both.events)).map((e: unknown[]) => e.slice(0, 3)), course(comparable(realInterrupt)).map((e: unknown[]) => e.slice(0, 3)), 'interrupt, then the resumed run: the same events in the same order')
  const payloads = (events: WireEvent[]) => course(comparable(events)).filter((e: unknown[]) => e[0] !== 'tasks')
  t.same(payloads(both.events), payloads(realInterrupt), 'and the same payloads')
})

t.test('since: only events after it, across runs', async (t) => {
  const { base } = await serveApp(t)
  const { threadId, reading } = await hangarStream(base, 'agent', 'one')
  await reading
  await command(base, threadId, { id: 2, method: 'run.start', params: { assistant_id: 'agent', input: { messages: [{ type: 'human', content: 'two' }] } } })
  const all = await readEvents(base, threadId, { channels: ['lifecycle'] }, rootEnded(2))
  const seqs = all.events.map((e) => e.seq)
  const after = await readEvents(base, threadId, { channels: ['lifecycle'], since: seqs[1] }, rootEnded(1))
  t.same(after.events.map((e) => e.seq), seqs.slice(2), 'strictly greater than since')
  const root = await readEvents(base, threadId, { channels: ['lifecycle'], namespaces: [[]], depth: 0 }, rootEnded(2))
  t.same(root.events.map((e) => e.params.data.event), ['running', 'completed', 'running', 'completed'], 'depth 0 under the root: root events only')
})

t.test('every error answer of the recording, replayed: same status, content type and body', async (t) => {
  const { base } = await serveApp(t)
  const threads = new Map<string, string>()
  const mapped = (path: string) => path.replace(UUID, (id) => {
    if (!threads.has(id)) threads.set(id, randomUUID())
    return threads.get(id)!
  })
  /** Exchanges where hangar answers differently on purpose (docs/session-protocol.md says why). */
  const differs = new Map<number, string>([
    [16, 'the real server binds a thread to an assistant even when run.start failed with 404; hangar binds only on a run it started'],
    [26, 'the legacy join answers the state, in the Python server\'s serialization'],
    [39, 'state.get answers the state, in the Python server\'s serialization (checked elsewhere)'],
  ])
  for (const [i, exchange] of fixture('errors').exchanges.entries()) {
    if (exchange.kind !== 'http' || differs.has(i)) continue
    const { request, response } = exchange
    if (request.method === 'OPTIONS') continue // CORS preflights: checked below
    const headers: Record<string, string> = { 'x-api-key': API_KEY, ...request.headers }
    const controller = new AbortController()
    const res = await fetch(`${base}${mapped(request.path)}`, { method: request.method, headers, body: request.method === 'GET' ? undefined : new TextEncoder().encode(request.body), signal: controller.signal })
    const what = `#${i} ${request.method} …/${request.path.split('/').pop()} ${request.body}`
    t.equal(res.status, response.status, `${what}: status`)
    if (response.headers['content-type'] === 'text/event-stream') {
      t.match(res.headers.get('content-type'), /^text\/event-stream/, `${what}: a stream`)
      controller.abort()
      continue
    }
    // hangar's JSON answers name their charset (`; charset=utf-8`), as all its JSON answers do.
    t.equal(res.headers.get('content-type')?.replace('application/json; charset=utf-8', 'application/json'), response.headers['content-type'], `${what}: content type`)
    const body = await res.text()
    // The thread's last seq depends on when the real server answered (its root completed lags by 500 ms).
    const unseq = (s: string) => normalize(s).replace(/"applied_through_seq":\d+/, '"applied_through_seq":n')
    t.equal(unseq(body), unseq(response.body), `${what}: body`)
  }
})

t.test('the recorded WebSocket session, replayed: the same answers, in order, and the same events', async (t) => {
  const { base } = await serveApp(t)
  const { WebSocket } = await import('ws')
  const exchanges = fixture('websocket').exchanges as unknown as { kind: string; direction?: string; opcode?: string; frame: string }[]
  const session = exchanges.slice(0, exchanges.findIndex((e) => e.kind === 'ws' && e.opcode === 'close'))
  const threadId = randomUUID()
  const ws = new WebSocket(`${base.replace('http', 'ws')}/threads/${threadId}/stream/events?api_key=${API_KEY}`)
  t.teardown(() => ws.close())
  const received: string[] = []
  ws.on('message', (data: Buffer) => received.push(data.toString()))
  await new Promise((resolve) => ws.once('open', resolve))

  // Sends are grouped as recorded (frames sent back to back, then what came back before the next send).
  const groups: { sends: typeof session; receives: string[] }[] = []
  for (const e of session) {
    if (e.kind !== 'ws') continue
    if (e.direction === 'send') {
      if (groups.length === 0 || groups.at(-1)!.receives.length > 0) groups.push({ sends: [], receives: [] })
      groups.at(-1)!.sends.push(e)
    } else groups.at(-1)!.receives.push(e.frame)
  }
  // The ids a client sends back (an interrupt's, a subscription's) are the ones this server gave.
  const recordedFrames = session.filter((e) => e.kind === 'ws' && e.direction === 'receive').map((e) => e.frame)
  const idsIn = (frames: string[]) => ({
    interrupts: frames.filter((f) => f.includes('"method":"input.requested"')).map((f) => (JSON.parse(f) as WireEvent).params.data.interrupt_id as string),
    subscriptions: frames.filter((f) => f.includes('"subscription_id"')).map((f) => JSON.parse(f) as { id: number; result: { subscription_id: string } }),
  })
  const translate = (frame: string) => {
    const theirsIds = idsIn(recordedFrames)
    const mineIds = idsIn(received)
    let out = frame
    theirsIds.interrupts.forEach((id, i) => (out = out.replaceAll(id, mineIds.interrupts[i] ?? id)))
    for (const answer of theirsIds.subscriptions) {
      const mineAnswer = mineIds.subscriptions.findLast((m) => m.id === answer.id)
      if (mineAnswer) out = out.replaceAll(answer.result.subscription_id, mineAnswer.result.subscription_id)
    }
    return out
  }
  const answersOf = (frames: string[]) => frames.filter((f) => !f.startsWith('{"type":"event"'))
  // state.get's values are the state in its full serialization, which in hangar is the Python server's (checked elsewhere).
  const withoutState = (frame: string) => frame.includes('"result":{"values":') ? frame.replace(/"result":\{"values":.*,"checkpoint":/, '"result":{"values":"<state>","checkpoint":') : frame
  const blank = (frame: string) => normalize(withoutState(frame)).replace(/"applied_through_seq":\d+/, '"applied_through_seq":n').replace(/"replayed_events":\d+/, '"replayed_events":n')
  const mine: string[] = []
  const theirs: string[] = []
  for (const group of groups) {
    const before = received.length
    for (const e of group.sends) {
      const frame = translate(e.frame)
      ws.send(e.opcode === 'binary' ? Buffer.from(frame) : frame)
    }
    const expected = answersOf(group.receives).length
    await until(() => answersOf(received.slice(before)).length >= expected, `the answers to ${group.sends.map((e) => e.frame).join(' ')}`)
    // Wait for the run a command started to end (its last event), as the recording did.
    const lastEvent = group.receives.findLast((f) => f.startsWith('{"type":"event"'))
    if (lastEvent?.includes('"event":"completed"') || lastEvent?.includes('"event":"interrupted"')) {
      const ended = lastEvent.includes('"completed"') ? '"event":"completed","graph_name":"approval"' : '"event":"interrupted","graph_name":"approval"'
      await until(() => received.slice(before).some((f) => f.includes(ended)), 'the run ends')
    }
    // The real server answers frames sent together concurrently (in any order); hangar in order.
    const sortIfBurst = (list: string[]) => (group.sends.length > 2 ? [...list].sort() : list)
    mine.push(...sortIfBurst(answersOf(received.slice(before)).map(blank)))
    theirs.push(...sortIfBurst(answersOf(group.receives).map(blank)))
  }
  t.same(mine, theirs, 'every answer, in order')

  const events = (frames: string[]) => {
    const seen = new Set<number>()
    return frames.filter((f) => f.startsWith('{"type":"event"')).map((f) => JSON.parse(f) as WireEvent).filter((e) => !seen.has(e.seq) && seen.add(e.seq))
  }
  t.same(course(comparable(events(received))).map((e: unknown[]) => e.slice(0, 3)), course(comparable(events(recordedFrames))).map((e: unknown[]) => e.slice(0, 3)), 'the same events, in the same order')
})
