// Record a real agent once, replay it offline (issue 16): the official SDK drives the real JS agent
// server (test/fixtures/upstream, which requires an API key) through `hangar record` — a tool call,
// an interrupt and a resume into a subgraph, then a second turn on the same thread, a fork, and a
// stateless run — the recorder stops (reading the graph and the threads' histories from the
// upstream, compiling the replay file), the upstream is stopped, and hangar started with the
// recording answers the same calls with the same events, state and history, ids aside and fresh.

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { ReplayFile } from '../src/agent/replay-file.js'
import { buildRecorder } from '../src/record/proxy.js'
import { API_KEY, serveApp } from './helpers.js'
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

t.test('a recording of the real agent server replays offline, event for event', async (t) => {
  const upstream = await startUpstream(t, { apiKey: KEY })
  const out = mkdtempSync(join(tmpdir(), 'hangar-replay-'))
  const recorder = buildRecorder({ upstream: upstream.url, out, apiKey: KEY, logLevel: 'silent' })
  let closed = false
  t.teardown(() => (closed ? undefined : recorder.close()))
  await recorder.listen({ port: 0, host: '127.0.0.1' })
  const recorded = await converse(new Client({ apiUrl: `http://127.0.0.1:${(recorder.server.address() as { port: number }).port}`, apiKey: null as never, callerOptions: { maxRetries: 0 } }))
  await recorder.close()
  closed = true
  await upstream.stop()

  const files = readdirSync(join(out, 'replay'))
  t.same(files, ['recorded_agent.json', 'slow_reply.json'], 'a replay file per graph, named after it')
  const replay = JSON.parse(readFileSync(join(out, 'replay', 'recorded_agent.json'), 'utf8')) as ReplayFile
  t.same(replay.turns.map((turn) => turn.input), [{ human: 'Paris' }, { resume: 'yes' }, { human: 'Lyon' }, { resume: 'later' }, { human: 'Lyon' }], 'a turn per run, keyed on what it was given')
  t.same(replay.turns.map((turn) => turn.status), ['interrupted', 'success', 'interrupted', 'success', 'interrupted'], 'and how each ended')
  t.same(replay.turns.map((turn) => turn.fork), [false, false, false, false, true], 'the fork is its own turn (from the checkpoint the second turn started from)')
  t.equal(replay.turns[4].from, replay.turns[2].from)
  t.ok((replay.graph?.nodes ?? []).some((n) => (n as { id: string }).id === 'confirm'), "the upstream's drawing is kept")
  t.ok(replay.schemas && 'state_schema' in replay.schemas, 'and its schemas')
  const written = readdirSync(out).filter((f) => f !== 'replay').map((f) => readFileSync(join(out, f), 'utf8')).join('\n') + JSON.stringify(replay)
  t.notOk(written.includes(KEY), 'the key is written nowhere')

  const { base } = await serveApp(t, { replay: out, replaySpeed: 'instant' })
  const replayed = await converse(new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } }))
  if (process.env.REPLAY_DEBUG) (await import('node:fs')).writeFileSync('/tmp/replay-debug.json', JSON.stringify({ recorded, replayed, out }))
  t.equal(replayed.streams.length, recorded.streams.length)
  for (const [i, parts] of recorded.streams.entries()) {
    t.same(idsAside(replayed.streams[i]), idsAside(parts), `stream ${i + 1}: the same events, ids aside`)
  }
  // (hangar's ThreadState also has the document's `interrupts`, `checkpoint_id` and `parent_checkpoint_id`, which the JS server leaves out.)
  t.has(idsAside(replayed.states), idsAside(recorded.states), 'the same states')
  t.same((replayed.histories[0] as unknown[]).length, (recorded.histories[0] as unknown[]).length, 'as many checkpoints')
  t.has(idsAside(replayed.histories), idsAside(recorded.histories), 'the same history, checkpoint for checkpoint')
  t.same(idsAside(replayed.waited), idsAside(recorded.waited), 'the same answer to a run waited for')
  const old = idsIn(recorded)
  const fresh = [...idsIn(replayed)].filter((id) => old.has(id) && !id.startsWith('5e0f'))
  t.same(fresh.filter((id) => id !== replayAssistant(replay)), [], 'no id of the recording comes back: threads, runs, checkpoints, messages are new')
})

/** The recorded graph's system assistant id, the same upstream and here (derived from the graph's name). */
const replayAssistant = (replay: ReplayFile) => replay.turns.find((turn) => turn.assistant_id)?.assistant_id
