// Record a real agent once, replay it offline (issue 16): the official SDK drives the real JS agent
// server (test/fixtures/upstream, which requires an API key) through `hangar record` — a tool call,
// an interrupt and a resume into a subgraph, then a second turn on the same thread, a fork, and a
// stateless run — the recorder stops (reading the graph and the threads' histories from the
// upstream, compiling the replay file), the upstream is stopped, and hangar started with the
// recording answers the same calls with the same events, state and history, ids aside and fresh.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { Client as LangSmith } from 'langsmith'
import type { ReplayFile } from '../src/agent/replay-file.js'
import { buildRecorder } from '../src/record/proxy.js'
import type { Clock } from '../src/clock.js'
import { API_KEY, buildTestApp, serveApp, turn, until } from './helpers.js'
import { startUpstream } from './upstream-server.js'

const KEY = 'replay-upstream-secret-5d2e'
const MODES = ['values', 'updates', 'messages-tuple'] as const
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

/** A value with its ids numbered in order of appearance and its times blanked: what is left is what must match. */
function idsAside(value: unknown): unknown {
  const seen = new Map<string, string>()
  const text = JSON.stringify(value)
    .replace(UUID, (id) => {
      if (!seen.has(id.toLowerCase())) seen.set(id.toLowerCase(), `<id ${seen.size + 1}>`)
      return seen.get(id.toLowerCase())!
    })
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g, '<time>')
  return JSON.parse(text)
}

const idsIn = (value: unknown) => new Set((JSON.stringify(value).match(UUID) ?? []).map((id) => id.toLowerCase()))

interface Session {
  /** Each stream's parts, in the order the calls were made. */
  streams: { event: string; data: unknown }[][]
  states: unknown[]
  histories: unknown[]
  waited: unknown
}

/** What a client does with the agent: the same calls against the upstream (through the recorder) and against the replay. */
async function converse(client: Client): Promise<Session> {
  const session: Session = { streams: [], states: [], histories: [], waited: null }
  const stream = async (thread: string, body: Record<string, unknown>) => {
    const parts: { event: string; data: unknown }[] = []
    for await (const part of client.runs.stream(thread, 'recorded_agent', { ...body, streamMode: [...MODES], streamSubgraphs: true } as never)) parts.push({ event: part.event, data: part.data })
    session.streams.push(parts)
  }
  const thread = (await client.threads.create()).thread_id
  await stream(thread, { input: { messages: [{ role: 'human', content: 'Paris' }] } })
  await stream(thread, { command: { resume: 'yes' } })
  await stream(thread, { input: { messages: [{ role: 'human', content: 'Lyon' }] } })
  await stream(thread, { command: { resume: 'later' } })
  session.states.push(await client.threads.getState(thread))
  const history = await client.threads.getHistory(thread, { limit: 100 })
  session.histories.push(history)
  // A fork: the second turn asked again from where the first one ended, with another answer.
  const firstEnd = history.filter((s) => s.next.length === 0).at(-1)!
  await stream(thread, { input: { messages: [{ role: 'human', content: 'Lyon' }] }, checkpointId: firstEnd.checkpoint!.checkpoint_id })
  session.states.push(await client.threads.getState(thread))
  // A run without a thread (of another graph: one that stops at an interrupt needs a thread), waited for.
  session.waited = await client.runs.wait(null, 'slow_reply', { input: { messages: [{ role: 'human', content: 'Count' }] } })
  return session
}

/** The slow graph's stream: twenty words, 25 ms apart, recorded on their own thread (for timing). */
async function countSlowly(client: Client, thread: string) {
  const parts: { event: string; data: unknown }[] = []
  for await (const part of client.runs.stream(thread, 'slow_reply', { input: { messages: [{ role: 'human', content: 'Count' }] }, streamMode: ['messages-tuple'] })) parts.push({ event: part.event, data: part.data })
  return parts
}

interface Recorded {
  out: string
  session: Session
  slow: { event: string; data: unknown }[]
  replay: ReplayFile
}

/** Records once, from the real server, what every test below replays; the upstream is gone afterwards. */
async function record(t: Test): Promise<Recorded> {
  const upstream = await startUpstream(t, { apiKey: KEY })
  const out = mkdtempSync(join(tmpdir(), 'hangar-replay-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  const recorder = buildRecorder({ upstream: upstream.url, out, apiKey: KEY, logLevel: 'silent' })
  let closed = false
  t.teardown(() => (closed ? undefined : recorder.close()))
  await recorder.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client({ apiUrl: `http://127.0.0.1:${(recorder.server.address() as { port: number }).port}`, apiKey: null as never, callerOptions: { maxRetries: 0 } })
  const session = await converse(client)
  const slow = await countSlowly(client, (await client.threads.create()).thread_id)
  await recorder.close()
  closed = true
  await upstream.stop()
  return { out, session, slow, replay: JSON.parse(readFileSync(join(out, 'replay', 'recorded_agent.json'), 'utf8')) as ReplayFile }
}

let recorded: Recorded
t.before(async () => {
  recorded = await record(t)
})

const clientOf = (base: string) => new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } })

t.test('the recording: a replay file per graph, a turn per run, the drawing and schemas, no secret', async (t) => {
  const { out, replay } = recorded
  t.same(readdirSync(join(out, 'replay')), ['recorded_agent.json', 'slow_reply.json'], 'a replay file per graph, named after it')
  t.same(replay.turns.map((turn) => turn.input), [{ human: 'Paris' }, { resume: 'yes' }, { human: 'Lyon' }, { resume: 'later' }, { human: 'Lyon' }], 'a turn per run, keyed on what it was given')
  t.same(replay.turns.map((turn) => turn.status), ['interrupted', 'success', 'interrupted', 'success', 'interrupted'], 'and how each ended')
  t.same(replay.turns.map((turn) => turn.fork), [false, false, false, false, true], 'the fork is its own turn (from the checkpoint the second turn started from)')
  t.equal(replay.turns[4].from, replay.turns[2].from)
  t.ok((replay.graph?.nodes ?? []).some((n) => (n as { id: string }).id === 'confirm'), "the upstream's drawing is kept")
  t.same(JSON.parse(readFileSync(join(out, 'upstream.json'), 'utf8')).problems, [], 'every read of the upstream when recording stopped answered')
  t.ok(replay.schemas && 'state_schema' in replay.schemas, 'and its schemas')
  const written = readdirSync(out, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).map((f) => readFileSync(join(f.parentPath, f.name), 'utf8')).join('\n')
  t.notOk(written.includes(KEY), 'the key is written nowhere')
})

t.test('replayed with the upstream gone: the same events, state and history, ids aside and fresh', async (t) => {
  const { base } = await serveApp(t, { replay: recorded.out, replaySpeed: 'instant' })
  const client = clientOf(base)
  const first = await converse(client)
  const again = await converse(client)
  for (const [name, replayed] of [['replayed', first], ['replayed again', again]] as const) {
    t.equal(replayed.streams.length, recorded.session.streams.length)
    for (const [i, parts] of recorded.session.streams.entries()) {
      t.same(idsAside(replayed.streams[i]), idsAside(parts), `${name}, stream ${i + 1}: the same events, ids aside`)
    }
    // (hangar's ThreadState also has the document's `interrupts`, `checkpoint_id` and `parent_checkpoint_id`, which the JS server leaves out.)
    t.has(idsAside(replayed.states), idsAside(recorded.session.states), `${name}: the same states`)
    t.same((replayed.histories[0] as unknown[]).length, (recorded.session.histories[0] as unknown[]).length, 'as many checkpoints')
    t.has(idsAside(replayed.histories), idsAside(recorded.session.histories), `${name}: the same history, checkpoint for checkpoint`)
    t.same(idsAside(replayed.waited), idsAside(recorded.session.waited), `${name}: the same answer to a run waited for`)
  }
  const assistant = recorded.replay.turns[0].assistant_id
  const old = idsIn(recorded.session)
  t.same([...idsIn(first)].filter((id) => old.has(id) && id !== assistant), [], "no id of the recording comes back (the graph's assistant id is derived from its name, upstream as here)")
  const firstIds = idsIn(first)
  t.same([...idsIn(again)].filter((id) => firstIds.has(id) && id !== assistant), [], 'and the second replay has ids of its own')
})


type Part = { event: string; data: any }

const collect = async (stream: AsyncIterable<Part>) => {
  const parts: Part[] = []
  for await (const part of stream) parts.push({ event: part.event, data: part.data })
  return parts
}

const PARIS = { input: { messages: [{ role: 'human', content: 'Paris' }] }, streamMode: [...MODES], streamSubgraphs: true }

t.test("recorded time passes on hangar's clock: as recorded, or faster", async (t) => {
  const slowTurn = (JSON.parse(readFileSync(join(recorded.out, 'replay', 'slow_reply.json'), 'utf8')) as ReplayFile).turns.find((turn) => 'human' in turn.input && turn.streams.length > 0)!
  const times = slowTurn.streams[0].events.filter((e) => e.event === 'messages').map((e) => e.at_ms)
  t.equal(times.length, recorded.slow.filter((p) => p.event === 'messages').length, 'the recording has each chunk with the time it came')
  t.ok(times.at(-1)! - times[0] >= 19 * 20, 'twenty words, 25 ms apart, took about half a second')
  const middle = times[Math.floor(times.length / 2)]
  for (const [speed, factor] of [['realtime', 1], ['4', 4]] as const) {
    // (hangar's clock counts whole milliseconds)
    const advance = Math.floor(middle / factor)
    const expected = times.filter((at) => at <= advance * factor).length
    const { base, clock } = await serveApp(t, { replay: recorded.out, replaySpeed: speed })
    const client = clientOf(base)
    const parts: Part[] = []
    const done = (async () => {
      for await (const part of client.runs.stream((await client.threads.create()).thread_id, 'slow_reply', { input: { messages: [{ role: 'human', content: 'Count' }] }, streamMode: ['messages-tuple'] })) parts.push({ event: part.event, data: part.data })
    })()
    const chunks = () => parts.filter((p) => p.event === 'messages').length
    await until(() => waitsOnClock(clock), 'the replay waits on the clock')
    t.equal(chunks(), times.filter((at) => at <= 0).length, `${speed}: nothing recorded later has come while the clock stands still`)
    clock.advance(advance)
    await until(() => chunks() >= expected, `${speed}: the chunks up to the middle come`)
    for (let i = 0; i < 50; i++) await turn()
    t.equal(chunks(), expected, `${speed}: after ${advance} ms of the clock, exactly the chunks recorded in the first ${advance * factor} ms`)
    t.ok(expected > 1 && expected < times.length, 'some, not all')
    clock.advance(10_000)
    await done
    t.same(idsAside(parts), idsAside(recorded.slow), `${speed}: then the rest, the same as recorded`)
  }
})

const waitsOnClock = (clock: Clock) => clock.listenerCount('change') > 0

t.test('an input the recording has not seen ends the run with an error naming the closest one, and how to record it', async (t) => {
  const { base } = await serveApp(t, { replay: recorded.out, replaySpeed: 'instant' })
  const client = clientOf(base)
  const thread = (await client.threads.create()).thread_id
  const parts = await collect(client.runs.stream(thread, 'recorded_agent', { ...PARIS, input: { messages: [{ role: 'human', content: 'Paros' }] } }))
  t.same(parts.map((p) => p.event), ['metadata', 'error'], 'no silent empty answer: an error, at once')
  t.equal(parts[1].data.error, 'ReplayMissError')
  t.match(parts[1].data.message, /^The recording of recorded_agent has no run for "Paros" on a new thread\. The closest input recorded there is "Paris"\. To record it, run hangar record --upstream http:\/\/127\.0\.0\.1:\d+ --out <recording> and send it through; or start hangar with --replay-fallback <graph_id>/)
  t.equal((await client.threads.get(thread)).status, 'error', 'the thread shows the failed run')

  const other = (await client.threads.create()).thread_id
  await collect(client.runs.stream(other, 'recorded_agent', PARIS))
  const resumed = await collect(client.runs.stream(other, 'recorded_agent', { ...PARIS, input: undefined, command: { resume: 'maybe' } }))
  t.equal(resumed.at(-1)!.event, 'error')
  t.match(resumed.at(-1)!.data.message, /no run for resume "maybe" after checkpoint [0-9a-f-]{36}\. The closest input recorded there is resume "yes"\./, 'mid-conversation, the closest answer recorded at that point')
  await t.rejects(client.runs.wait(null, 'recorded_agent', { input: { messages: [{ role: 'human', content: 'Oslo' }] } }), /ReplayMissError: The recording of recorded_agent has no run for "Oslo"/, '/wait answers the miss as its error (the SDK raises it)')

  // A run of the session protocol, on an input recorded only as run streams: its client would read nothing.
  const protocolThread = (await client.threads.create()).thread_id
  const command = await fetch(`${base}/threads/${protocolThread}/commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify({ id: 1, method: 'run.start', params: { assistant_id: 'recorded_agent', input: { messages: [{ type: 'human', content: 'Paris' }] } } }),
  })
  const { result } = await command.json() as { result: { run_id: string } }
  t.match(await client.runs.join(protocolThread, result.run_id), { __error__: { error: 'ReplayMissError', message: /^The recording of recorded_agent has "Paris" only as run streams; this run came through the session protocol/ } }, 'a protocol run on an input recorded only as run streams is a miss too')

  const debug = await collect(client.runs.stream((await client.threads.create()).thread_id, 'recorded_agent', { ...PARIS, streamMode: ['debug'] }))
  t.equal(debug.at(-1)!.data.error, 'ReplayMissError')
  t.match(debug.at(-1)!.data.message, /has "Paris" streamed with stream_mode \[values, updates, messages-tuple\] with subgraphs; this run asks for \[debug\] with subgraphs\. Record it again streaming those modes/, 'modes it was never streamed with are a miss too, not a silent gap')
})

t.test('--replay-fallback answers unrecorded inputs with a scripted graph; recorded ones still replay', async (t) => {
  const { base } = await serveApp(t, { replay: recorded.out, replaySpeed: 'instant', replayFallback: 'agent' })
  const client = clientOf(base)
  const thread = (await client.threads.create()).thread_id
  const parts = await collect(client.runs.stream(thread, 'recorded_agent', { ...PARIS, input: { messages: [{ role: 'human', content: 'Berlin' }] } }))
  t.notOk(parts.some((p) => p.event === 'error'), 'no error')
  const state = await client.threads.getState(thread)
  const messages = (state.values as { messages: { type: string; content: string }[] }).messages
  t.same(messages.map((m) => m.type), ['human', 'ai'], "the scripted agent's answer")
  const replayed = await collect(client.runs.stream((await client.threads.create()).thread_id, 'recorded_agent', PARIS))
  t.same(idsAside(replayed), idsAside(recorded.session.streams[0]), 'a recorded input is still the recording')
  t.throws(() => buildTestApp({ config: { replay: recorded.out, replayFallback: 'nope' } }), { name: 'FixtureError', message: /^no scripted graph is called 'nope' \(there are agent, approval, / }, 'a fallback that is no graph stops start-up')
})

t.test('feedback keys work on replayed runs: URLs handed out, records read back by the tracing SDK', async (t) => {
  const { base } = await serveApp(t, { replay: recorded.out, replaySpeed: 'instant' })
  const client = clientOf(base)
  const parts = await collect(client.runs.stream((await client.threads.create()).thread_id, 'recorded_agent', { ...PARIS, feedbackKeys: ['thumbs'] }))
  t.equal(parts.at(-1)!.event, 'feedback', 'the feedback event comes last')
  const runId = parts[0].data.run_id as string
  const posted = await fetch(parts.at(-1)!.data.thumbs, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ score: 1, comment: 'as recorded' }) })
  t.equal(posted.status, 200)
  const saved = { endpoint: process.env.LANGSMITH_ENDPOINT, key: process.env.LANGSMITH_API_KEY }
  process.env.LANGSMITH_ENDPOINT = base
  process.env.LANGSMITH_API_KEY = API_KEY
  t.teardown(() => {
    for (const [name, value] of [['LANGSMITH_ENDPOINT', saved.endpoint], ['LANGSMITH_API_KEY', saved.key]] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  const tracing = new LangSmith()
  const listed = []
  for await (const f of tracing.listFeedback({ runIds: [runId] })) listed.push(f)
  t.same(listed.map((f) => [f.key, f.score, f.comment]), [['thumbs', 1, 'as recorded']])
})

t.test('a corrupted recording stops start-up with one line naming the file and the field', async (t) => {
  const dir = t.testdir({
    'recording.json': '{"format":"hangar-recording/1"}',
    replay: { 'recorded_agent.json': JSON.stringify({ ...recorded.replay, turns: [{ ...recorded.replay.turns[0], from: 5 }] }) },
  })
  t.throws(() => buildTestApp({ config: { replay: dir } }), { name: 'FixtureError', message: `recording ${join(dir, 'replay', 'recorded_agent.json')}: turns[0].from: Input should be a valid string` })
  writeFileSync(join(dir, 'replay', 'recorded_agent.json'), readFileSync(join(recorded.out, 'replay', 'recorded_agent.json'), 'utf8').slice(0, 500))
  t.throws(() => buildTestApp({ config: { replay: dir } }), { name: 'FixtureError', message: new RegExp(`^recording ${join(dir, 'replay', 'recorded_agent.json')}: \\(top level\\): .*JSON`) }, 'a file cut short')
  t.throws(() => buildTestApp({ config: { replay: join(dir, 'replay') } }), { message: /is not a recording: it has no recording\.json \(make one with hangar record/ })
})
