// The thread join stream (`GET /threads/{thread_id}/stream`) over real sockets, read with the official
// SDK's `client.threads.joinStream` and with raw HTTP: every run of a thread in order, the same
// events as each run's own stream, resumable with Last-Event-ID across runs, and the modes
// `run_modes`, `lifecycle` and `state_update`. Time moves with the manual clock; nothing sleeps.

import { getEventListeners } from 'node:events'
import { request as httpRequest, type ClientRequest } from 'node:http'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { Clock } from '../src/clock.js'
import { Clock as ManualClock } from '../src/clock.js'
import { defaultConfig } from '../src/config.js'
import { buildServices } from '../src/services.js'
import { threadEvents, threadStreamModes } from '../src/agent/thread-stream.js'
import { runClockUntil, serveApp, START, turns, until } from './helpers.js'

type Part = { event: string; data: any; id?: string }

const ECHO = (content: string) => ({ input: { messages: [{ role: 'user', content }] } })

async function serve(t: Test) {
  const served = await serveApp(t)
  const client = new Client({ apiUrl: served.base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  return { ...served, client }
}

/** Lets clock time pass (100 ms whenever something waits on it) until `done()` holds. */
const drive = (clock: Clock, done: () => boolean | Promise<boolean>, what: string) => runClockUntil(clock, done, what, { stepMs: 100, maxTurns: 20_000 })

/** Reads an SDK stream in the background into `parts`, until `stop()` (which aborts the request). */
function reader(open: (signal: AbortSignal) => AsyncIterable<unknown>) {
  const controller = new AbortController()
  const parts: Part[] = []
  const state = { parts, error: undefined as unknown, done: false, stop: () => controller.abort() }
  void (async () => {
    try {
      for await (const part of open(controller.signal)) parts.push(part as Part)
    } catch (error) {
      if (!controller.signal.aborted) state.error = error
    } finally {
      state.done = true
    }
  })()
  return state
}

/**
 * One raw SSE request on its own socket, parsed block by block: `event:`, one `data:` line, `id:`.
 * A block of any other form is kept in `malformed`.
 */
class RawStream {
  readonly frames: Part[] = []
  readonly malformed: string[] = []
  status = 0
  headers: Record<string, unknown> = {}
  body = ''
  ended = false
  failed = false
  readonly req: ClientRequest
  #buffer = ''

  constructor(port: number, path: string, headers: Record<string, string> = {}) {
    this.req = httpRequest({ port, host: '127.0.0.1', path, headers: { 'x-api-key': 'k', ...headers }, agent: false })
    this.req.on('error', () => (this.failed = true))
    this.req.on('response', (res) => {
      this.status = res.statusCode!
      this.headers = res.headers
      res.on('aborted', () => (this.failed = true))
      res.on('error', () => (this.failed = true))
      res.on('end', () => (this.ended = true))
      res.setEncoding('utf8').on('data', (chunk: string) => this.#parse(chunk))
    })
    this.req.end()
  }

  close(): void {
    this.req.destroy()
  }

  #parse(chunk: string): void {
    this.body += chunk
    if (this.status !== 200) return
    this.#buffer += chunk
    let end: number
    while ((end = this.#buffer.indexOf('\n\n')) >= 0) {
      const block = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 2)
      if (block.startsWith(':')) continue
      const m = /^event: ([^\n]+)\ndata: ([^\n]+)\nid: ([^\n]+)$/.exec(block)
      if (m) this.frames.push({ event: m[1], data: JSON.parse(m[2]), id: m[3] })
      else this.malformed.push(block)
    }
  }
}

/** Creates a run and waits for its end (the run's own stream modes decide what its log holds). */
async function runToEnd(client: Client, threadId: string, graph: string, payload: Parameters<Client['runs']['create']>[2]) {
  const run = await client.runs.create(threadId, graph, payload)
  await client.runs.join(threadId, run.run_id)
  return run
}

const runDoneCount = (parts: Part[]) => parts.filter((p) => p.event === 'run_done').length

/** A run's events as its own join stream replays them (ids 0, 1, …). */
async function runLog(client: Client, threadId: string, runId: string): Promise<Part[]> {
  const parts: Part[] = []
  for await (const part of client.runs.joinStream(threadId, runId, { lastEventId: '-1' })) parts.push(part as Part)
  return parts
}

/** The thread stream's events of one run, with their ids reduced to the position within the run. */
const ofRun = (parts: Part[], runId: string) => {
  const metadata = parts.find((p) => p.event === 'metadata' && p.data.run_id === runId)!
  const seq = metadata.id!.split('-')[0]
  return parts.filter((p) => p.id!.split('-')[0] === seq).map((p) => ({ ...p, id: p.id!.split('-')[1] }))
}

t.test('one join stream shows each run of the thread in order, with the very events of its own run stream, then run_done; it follows the next run', async (t) => {
  const { client, clock } = await serve(t)
  const { thread_id } = await client.threads.create()
  // the first run waits on the clock, so the stream (opened after it) joins it from its start
  const first = await client.runs.create(thread_id, 'pipeline', { ...ECHO('topic'), streamMode: ['custom', 'values'] })
  const joined = reader((signal) => client.threads.joinStream(thread_id, { signal }))
  await until(() => joined.parts.length > 0, 'the stream shows the first run\'s start')
  const second = await client.runs.create(thread_id, 'agent', { ...ECHO('second run'), streamMode: ['updates'], multitaskStrategy: 'enqueue' })
  await drive(clock, () => runDoneCount(joined.parts) === 2, 'both runs are done')
  // the stream waits for the thread's next run and follows it
  const third = await client.runs.create(thread_id, 'agent', { ...ECHO('third run'), streamMode: ['messages-tuple'] })
  await until(() => runDoneCount(joined.parts) === 3, 'the third run is done')
  t.equal(joined.done, false, 'the stream stays open after the runs')
  joined.stop()
  await until(() => joined.done, 'the SDK stream ends when aborted')
  t.equal(joined.error, undefined)

  const parts = joined.parts
  t.same(parts.filter((p) => p.event === 'metadata').map((p) => p.data.run_id), [first.run_id, second.run_id, third.run_id], 'runs in the order they were created')
  for (const run of [first, second, third]) {
    const logged = await runLog(client, thread_id, run.run_id)
    const seen = ofRun(parts, run.run_id)
    t.same(seen.slice(0, -1), logged, `run ${run.run_id}: the same events, data and positions as its own stream`)
    t.same(seen.at(-1), { event: 'run_done', data: { run_id: run.run_id, status: 'success' }, id: String(logged.length + 1) }, 'then run_done, after the state_update position')
  }
  const seqs = parts.map((p) => Number(p.id!.split('-')[0]))
  t.same(seqs, [...seqs].sort((a, b) => a - b), 'ids grow from run to run')
  t.equal(new Set(parts.map((p) => p.id)).size, parts.length, 'every id is unique')
})

t.test('Last-Event-ID: "-" replays every run from the first; after any id, exactly what followed it, across runs', async (t) => {
  const { client, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  await runToEnd(client, thread_id, 'agent', { ...ECHO('one two'), streamMode: ['updates', 'values'] })
  await runToEnd(client, thread_id, 'flaky', { ...ECHO('please fail'), streamMode: ['values'] })
  await runToEnd(client, thread_id, 'agent', { ...ECHO('three'), streamMode: ['messages-tuple'] })
  const path = `/threads/${thread_id}/stream?stream_mode=run_modes&stream_mode=state_update`

  const all = new RawStream(port, path, { 'last-event-id': '-' })
  await until(() => runDoneCount(all.frames) === 3, 'the replay reaches the third run\'s end')
  await turns(20)
  all.close()
  t.same(all.malformed, [])
  const N = all.frames.length
  t.same(all.frames.filter((p) => p.event === 'run_done').map((p) => p.data.status), ['success', 'error', 'success'])
  const position = (p: Part) => Number(p.id!.split('-')[1])
  t.same(
    all.frames.flatMap((p, i) => (p.event === 'run_done' ? [[all.frames[i - 1].event, position(all.frames[i - 1]) + 1 === position(p)]] : [])),
    [['values', true], ['values', true], ['values', true]],
    'state_update: the thread\'s values just before each run_done, at the position before it',
  )

  for (let k = 0; k < N; k++) {
    const resumed = new RawStream(port, path, { 'last-event-id': all.frames[k].id! })
    await until(() => resumed.frames.length >= N - k - 1, `k=${k}: the resumed stream has what followed`)
    await turns(20)
    resumed.close()
    t.same(resumed.frames, all.frames.slice(k + 1), `k=${k}: after ${all.frames[k].id}, no gap and no duplicate`)
  }

  // the SDK sends the same header, and its stream_mode parameter
  const sdk = reader((signal) => client.threads.joinStream(thread_id, { lastEventId: all.frames[4].id, streamMode: ['run_modes', 'state_update'], signal }))
  await until(() => sdk.parts.length >= N - 5, 'the SDK resumes')
  await turns(20)
  sdk.stop()
  t.same(sdk.parts, all.frames.slice(5), 'joinStream(lastEventId) resumes at the same place')
})

t.test('a reader that leaves mid-run resumes with its last id: what it read, then what it resumed, is the whole thread', async (t) => {
  const { client, clock, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  const run = await client.runs.create(thread_id, 'pipeline', { ...ECHO('topic'), streamMode: ['custom', 'updates'] })
  const path = `/threads/${thread_id}/stream`
  const first = new RawStream(port, path)
  await drive(clock, () => first.frames.length >= 3, 'the first reader gets three events')
  first.close()
  const last = first.frames.at(-1)!.id!
  await client.runs.create(thread_id, 'agent', { ...ECHO('next'), multitaskStrategy: 'enqueue' })
  const again = new RawStream(port, path, { 'last-event-id': last })
  await drive(clock, () => runDoneCount(again.frames) === 2, 'the resumed reader sees both runs end')
  again.close()
  const whole = new RawStream(port, path, { 'last-event-id': '-' })
  await until(() => runDoneCount(whole.frames) === 2, 'the replay has both runs')
  whole.close()
  t.same([...first.frames, ...again.frames], whole.frames, 'no gap, no duplicate')
  t.equal(ofRun(whole.frames, run.run_id).length, (await runLog(client, thread_id, run.run_id)).length + 1)
})

t.test('lifecycle mode sends each run\'s start (metadata) and end (run_done with its status) only; state_update the thread\'s values after each run', async (t) => {
  const { client, clock, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  // from the beginning ("-"): whenever the streams connect, they start with the thread's first run
  const lifecycle = reader((signal) => client.threads.joinStream(thread_id, { streamMode: 'lifecycle', lastEventId: '-', signal }))
  // the spec's parameter name works as well
  const states = new RawStream(port, `/threads/${thread_id}/stream?stream_modes=state_update`, { 'last-event-id': '-' })

  await runToEnd(client, thread_id, 'agent', { ...ECHO('hello'), streamMode: ['values', 'messages-tuple'] })
  await until(() => states.frames.length === 1, 'the state after the first run')
  t.same(states.frames[0].data, (await client.threads.getState(thread_id)).values, 'state_update: the thread\'s state after the run')
  await runToEnd(client, thread_id, 'flaky', ECHO('please fail'))
  const cancelled = await client.runs.create(thread_id, 'pipeline', ECHO('topic'))
  await until(() => lifecycle.parts.length === 5, 'the third run has started')
  await client.runs.cancel(thread_id, cancelled.run_id, true)
  await drive(clock, () => runDoneCount(lifecycle.parts) === 3, 'three runs are done')
  await until(() => states.frames.length === 3, 'a state after each run')
  lifecycle.stop()
  states.close()

  const runs = (await client.runs.list(thread_id)).reverse()
  t.same(lifecycle.parts.map((p) => [p.event, p.data]), runs.flatMap((run, i) => [
    ['metadata', { run_id: run.run_id, attempt: 1 }],
    ['run_done', { run_id: run.run_id, status: ['success', 'error', 'interrupted'][i] }],
  ]), 'start and end of each run, nothing else')
  t.same(states.frames.map((p) => p.event), ['values', 'values', 'values'])
  t.same(states.frames.at(-1)!.data, (await client.threads.getState(thread_id)).values, 'the last state is the thread\'s')
})

t.test('an unknown thread is the real 404; a bad mode, id or Last-Event-ID the real 422', async (t) => {
  const { client, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  const answer = async (path: string, headers: Record<string, string> = {}) => {
    const raw = new RawStream(port, path, headers)
    await until(() => raw.ended || raw.failed, `${path} is answered`)
    return { status: raw.status, body: JSON.parse(raw.body) }
  }
  const unknown = '00000000-0000-4000-8000-000000000001'
  t.same(await answer(`/threads/${unknown}/stream`), { status: 404, body: { detail: `Thread with ID ${unknown} not found` } })
  const literal = (loc: unknown[], input: string) => ({
    type: 'literal_error', loc, msg: "Input should be 'lifecycle', 'run_modes' or 'state_update'", input,
    ctx: { expected: "'lifecycle', 'run_modes' or 'state_update'" },
  })
  t.same(await answer(`/threads/${thread_id}/stream?stream_mode=values`), { status: 422, body: { detail: [literal(['query', 'stream_mode', 0], 'values')] } })
  t.same(await answer(`/threads/${thread_id}/stream?stream_modes=lifecycle&stream_modes=nope`), { status: 422, body: { detail: [literal(['query', 'stream_modes', 1], 'nope')] } })
  const badId = await answer(`/threads/${thread_id}/stream`, { 'last-event-id': '7' })
  t.equal(badId.status, 422)
  t.match(badId.body.detail, [{ type: 'string_pattern_mismatch', loc: ['header', 'last-event-id'], input: '7' }])
  const notUuid = await answer('/threads/nope/stream')
  t.equal(notUuid.status, 422)
  t.match(notUuid.body.detail, [{ type: 'uuid_parsing', loc: ['path', 'thread_id'] }])
  await t.rejects(async () => {
    for await (const _ of client.threads.joinStream(unknown)) break
  }, /404/, 'the SDK sees the 404')
})

t.test('the stream has the run stream\'s headers and a Location to reconnect to', async (t) => {
  const { client, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  const raw = new RawStream(port, `/threads/${thread_id}/stream`)
  await until(() => raw.status === 200, 'the stream is open')
  raw.close()
  t.equal(raw.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(raw.headers.location, `/threads/${thread_id}/stream`)
})

t.test('shutdown ends an idle thread stream cleanly, without waiting for a next run', async (t) => {
  const { app, client, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  const raw = new RawStream(port, `/threads/${thread_id}/stream`)
  await until(() => raw.status === 200, 'the stream is open')
  await app.close()
  await until(() => raw.ended || raw.failed, 'the stream ends')
  t.equal(raw.ended, true, 'the response ended properly')
  t.equal(raw.failed, false, 'it was not cut')
})

t.test('a reader that leaves, idle or mid-run, leaves nothing waiting on the executor or on shutdown', async (t) => {
  const clock = ManualClock.manual(START)
  const services = buildServices({ ...defaultConfig(), db: ':memory:', logLevel: 'silent' }, clock)
  t.teardown(async () => {
    await services.stateful.shutdown()
    services.stateful.close()
  })
  const { executor, threads, runRequests, openStreams } = services
  const thread = threads.create('', '33333333-3333-4333-8333-333333333333', {})
  const context = { scope: '', headers: {}, publicBase: 'http://hangar.test' }
  const abortListeners = () => getEventListeners(openStreams.closing, 'abort').length
  const follow = () => {
    const controller = new AbortController()
    const parts: Part[] = []
    const done = (async () => {
      for await (const event of threadEvents(services, thread, { start: { from: 'now' }, modes: threadStreamModes(), signal: controller.signal, closing: openStreams.closing })) {
        parts.push(event as Part)
      }
    })()
    return { parts, done, leave: () => controller.abort(), signal: controller.signal }
  }

  // idle: waiting for the thread's next run
  const idle = Array.from({ length: 3 }, follow)
  await until(() => executor.threadFollowers === 3, 'three readers wait for a run')
  t.equal(abortListeners(), 3, 'each listens for shutdown while it waits')
  for (const reader of idle) reader.leave()
  await Promise.all(idle.map((reader) => reader.done))
  t.equal(executor.threadFollowers, 0, 'no reader waits for a run any more')
  t.equal(abortListeners(), 0, 'none listens for shutdown')
  t.ok(idle.every((reader) => getEventListeners(reader.signal, 'abort').length === 0), 'nor on its own signal')

  // mid-run: following a run that waits on the clock
  const midRun = follow()
  await until(() => executor.threadFollowers === 1, 'the reader waits for a run')
  const run = runRequests.create(context, thread.thread_id, { assistant_id: 'pipeline', ...ECHO('topic'), stream_mode: ['custom'] } as never)
  await until(() => midRun.parts.length >= 1, 'the reader follows the run')
  t.equal(executor.threadFollowers, 0, 'following a run, it no longer waits for one')
  midRun.leave()
  await midRun.done
  t.equal(abortListeners(), 0)
  t.equal(getEventListeners(midRun.signal, 'abort').length, 0, 'the run\'s reader let go of its signal')
  const ended = executor.join(run).then(() => true)
  let finished = false
  void ended.then(() => (finished = true))
  await runClockUntil(clock, () => finished, 'the run ends without its reader')
  t.equal(executor.threadFollowers, 0, 'nothing is left waiting')
})
