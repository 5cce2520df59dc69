// Run streams under hostile clients (issue 7): clients that leave after any number of events,
// readers too slow to keep up, reconnections with Last-Event-ID at every point, and many of these at
// once. Streams go over real sockets to a listening hangar on a manual clock; nothing sleeps: time
// moves with the clock, and the test waits for sockets to close and data to arrive.

import { createHook } from 'node:async_hooks'
import { request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { Clock } from '../src/clock.js'
import type { Config } from '../src/config.js'
import { runClockUntil, serveApp, turn, turns, until } from './helpers.js'

/** Every run is created with the same headers: they are copied into its config, hence into its events. */
const HEADERS = { 'x-api-key': 'k', 'user-agent': 'stream-robustness' }
/** A heartbeat interval no other timer of the process has, so the test can tell heartbeat timers apart. */
const HEARTBEAT_MS = 7_777_777
/** The pipeline graph: three nodes of 1000 ms each, then a reply streamed 100 ms a word; every mode that has events. */
const PIPELINE = { assistant_id: 'pipeline', input: { messages: [{ role: 'user', content: 'go' }] }, stream_mode: ['values', 'updates', 'custom', 'messages-tuple'] }

interface Frame {
  event: string
  data: unknown
  id?: string
  /** The block as it came, without its blank line. */
  raw: string
}


/** Lets clock time pass (100 ms whenever something waits on the clock, a word of the reply) until `done()` holds. */
const drive = (clock: Clock, done: () => boolean, what: string) => runClockUntil(clock, done, what, { stepMs: 100, maxTurns: 20_000 })

/** A promise whose settlement can be read synchronously. */
function tracked<T>(promise: Promise<T>) {
  const state = { settled: false, promise }
  const settle = () => void (state.settled = true)
  promise.then(settle, settle)
  return state
}

/**
 * One SSE request over its own socket (no keep-alive agent), parsed block by block. Every block must
 * be `event:`, one `data:` line of JSON and optionally `id:`, or a heartbeat comment; anything else
 * is kept in `malformed`. With `paused`, nothing is read until `resume()`.
 */
class SseClient {
  readonly frames: Frame[] = []
  readonly malformed: string[] = []
  ended = false
  socketClosed = false
  /** This end's port (what the server sees as the remote port), once connected. */
  localPort: number | undefined
  res: IncomingMessage | undefined
  readonly req: ClientRequest
  readonly response: Promise<IncomingMessage>
  #buffer = ''

  constructor(port: number, method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; paused?: boolean } = {}) {
    const headers: Record<string, string> = { ...HEADERS, ...options.headers }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    this.req = httpRequest({ port, host: '127.0.0.1', method, path, headers, agent: false })
    this.req.on('error', () => {})
    this.req.on('socket', (socket) => {
      socket.once('connect', () => (this.localPort = socket.localPort))
      socket.once('close', () => (this.socketClosed = true))
    })
    this.response = new Promise((resolve) => {
      this.req.on('response', (res) => {
        this.res = res
        res.on('error', () => {})
        res.on('end', () => (this.ended = true))
        if (!options.paused) this.resume()
        resolve(res)
      })
    })
    this.req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  }

  /** Reads on; `slowly`: one chunk per turn of the event loop, pausing after each. */
  resume(slowly = false): void {
    const res = this.res!
    res.setEncoding('utf8').on('data', (chunk: string) => {
      this.#parse(chunk)
      if (!slowly) return
      res.pause()
      setImmediate(() => res.resume())
    })
  }

  /** Leaves as a client does when its user goes away: the connection is cut. */
  abort(): void {
    this.req.destroy()
  }

  #parse(chunk: string): void {
    this.#buffer += chunk
    let end: number
    while ((end = this.#buffer.indexOf('\n\n')) >= 0) {
      const block = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 2)
      if (block === ': heartbeat') continue
      const m = /^event: ([^\n]+)\ndata: ([^\n]+)(?:\nid: (\d+))?$/.exec(block)
      let data: unknown
      try {
        data = m ? JSON.parse(m[2]) : undefined
      } catch {
        this.malformed.push(block)
        continue
      }
      if (!m) this.malformed.push(block)
      else this.frames.push({ event: m[1], data, ...(m[3] === undefined ? {} : { id: m[3] }), raw: block })
    }
  }
}

/** hangar on a real port, with what the test needs to see of its side of each connection. */
async function serve(t: Test, config: Partial<Config> = {}) {
  const served = await serveApp(t, config)
  const { app, port, clock } = served
  /** The server's side of each open connection, by the client's port. */
  const sockets = new Map<number, Socket>()
  /** The server's response to each request, by the client's port (one request per connection here). */
  const responses = new Map<number, ServerResponse>()
  /** The server's responses by path, with whether each has closed. */
  const byPath = new Map<string, { res: ServerResponse; closed: boolean }[]>()
  app.server.on('connection', (socket: Socket) => {
    const remote = socket.remotePort!
    sockets.set(remote, socket)
    socket.once('close', () => sockets.delete(remote))
  })
  app.server.on('request', (req: { socket: Socket; url?: string }, res: ServerResponse) => {
    responses.set(req.socket.remotePort!, res)
    const seen = { res, closed: false }
    res.once('close', () => (seen.closed = true))
    byPath.set(req.url!, [...(byPath.get(req.url!) ?? []), seen])
  })

  const open = (method: string, path: string, options?: ConstructorParameters<typeof SseClient>[3]) => new SseClient(port, method, path, options)
  const inject = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    const res = await app.inject({ method, url, headers: HEADERS, ...(payload === undefined ? {} : { payload: payload as object }) })
    return res.json()
  }
  /** Both ends of a client's connection are closed. */
  const closed = (c: SseClient) => until(() => c.socketClosed && c.localPort !== undefined && !sockets.has(c.localPort), 'the connection closes on both ends')
  /** Reads a whole stream (it must end by itself). */
  const readAll = async (path: string, headers: Record<string, string> = {}) => {
    const c = open('GET', path, { headers })
    await c.response
    await until(() => c.ended, `${path} ends`)
    await closed(c)
    return c
  }
  const newThread = async () => (await inject('POST', '/threads', {})).thread_id as string
  const runOf = (c: SseClient) => {
    const location = c.res!.headers['content-location'] as string
    const [, , threadId, , runId] = location.split('/')
    return { threadId, runId, path: `${location}/stream` }
  }
  /** The run's whole stored log, read back over a socket. */
  const log = async (path: string) => (await readAll(path, { 'last-event-id': '-1' })).frames
  /** Resolves when the run has ended (its /join answers). */
  const join = (run: { threadId: string; runId: string }) => tracked(inject('GET', `/threads/${run.threadId}/runs/${run.runId}/join`))
  const status = async (run: { threadId: string; runId: string }) => (await inject('GET', `/threads/${run.threadId}/runs/${run.runId}`)).status as string
  return { ...served, app, clock, sockets, responses, byPath, open, inject, closed, readAll, newThread, runOf, log, join, status }
}
type Served = Awaited<ReturnType<typeof serve>>

/** Frames with every UUID replaced by its order of first appearance (runs differ only in their ids). */
function normalize(frames: Frame[]) {
  const ids = new Map<string, string>()
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
  return frames.map((f) => ({
    event: f.event,
    id: f.id,
    data: JSON.parse(JSON.stringify(f.data).replace(uuid, (u) => {
      if (!ids.has(u)) ids.set(u, `<uuid ${ids.size}>`)
      return ids.get(u)!
    })),
  }))
}

const ids = (frames: Frame[]) => frames.map((f) => f.id)
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => String(from + i))

/** Counts of the handles and ref'd timers that keep the process alive, by type. */
function activeResources() {
  const counts: Record<string, number> = {}
  for (const type of process.getActiveResourcesInfo()) {
    if (['TCPSocketWrap', 'TCPServerWrap', 'Timeout'].includes(type)) counts[type] = (counts[type] ?? 0) + 1
  }
  return counts
}

/** Heartbeat timers (intervals of HEARTBEAT_MS) as they are created and cleared, seen through async_hooks. */
function watchHeartbeatTimers(t: Test) {
  const watch = { created: 0, live: new Set<number>() }
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (type === 'Timeout' && (resource as { _repeat?: number | null })._repeat === HEARTBEAT_MS) {
        watch.created++
        watch.live.add(asyncId)
      }
    },
    destroy(asyncId) {
      watch.live.delete(asyncId)
    },
  }).enable()
  t.teardown(() => void hook.disable())
  return watch
}

/** Runs PIPELINE on a fresh thread with a reader that stays to the end: the reference log. */
async function undisturbed(t: Test, s: Served) {
  const thread = await s.newThread()
  const c = s.open('POST', `/threads/${thread}/runs/stream`, { body: PIPELINE })
  await c.response
  await drive(s.clock, () => c.ended, 'the undisturbed run ends')
  await s.closed(c)
  t.same(c.malformed, [], 'the undisturbed stream is well formed')
  return c.frames
}

/** Opens a PIPELINE run stream and reads until it has `k` events (clock time passes as needed). */
async function readThenLeave(s: Served, k: number, body: object = PIPELINE) {
  const thread = await s.newThread()
  const c = s.open('POST', `/threads/${thread}/runs/stream`, { body })
  await c.response
  await drive(s.clock, () => c.frames.length >= k, `the client reads ${k} events`)
  c.abort()
  await s.closed(c)
  return { c, run: s.runOf(c) }
}

t.test('a client that leaves after any number of events stops only its own stream: the run succeeds, its log is whole, nothing is left behind', async (t) => {
  const heartbeats = watchHeartbeatTimers(t)
  const s = await serve(t, { heartbeatMs: HEARTBEAT_MS })
  const reference = await undisturbed(t, s)
  const N = reference.length
  t.ok(N >= 12, `the pipeline run has ${N} events`)
  t.same(ids(reference), range(0, N), 'the reference log has ids 0..N-1')
  await until(() => heartbeats.live.size === 0, 'the reference stream\'s heartbeat timer is cleared')
  const baseline = activeResources()
  const createdBefore = heartbeats.created
  let leftMidRun = 0

  for (let k = 0; k <= N; k++) {
    const { c, run } = await readThenLeave(s, k)
    t.same(normalize(c.frames.slice(0, k)), normalize(reference).slice(0, k), `k=${k}: what the client read is the start of the run`)
    const ended = s.join(run)
    await turn()
    if (!ended.settled) leftMidRun++
    await drive(s.clock, () => ended.settled, `k=${k}: the run ends`)
    t.equal(await s.status(run), 'success', `k=${k}: the run finished without its reader`)
    const logged = await s.log(run.path)
    t.same(ids(logged), range(0, N), `k=${k}: the log has ids 0..${N - 1}, contiguous`)
    t.same(normalize(logged), normalize(reference), `k=${k}: the log holds the same events as the undisturbed run`)
    const follow = await s.readAll(run.path)
    t.same(follow.frames, [], `k=${k}: the run is no longer live (a join without Last-Event-ID has nothing)`)
    t.equal((await s.inject('GET', `/threads/${run.threadId}`)).status, 'idle', `k=${k}: the thread is idle again`)
    t.equal(s.clock.listenerCount('change'), 0, `k=${k}: nothing waits on the clock`)
    await until(() => heartbeats.live.size === 0 && s.sockets.size === 0, `k=${k}: heartbeat timers and connections are gone`)
    t.same(activeResources(), baseline, `k=${k}: no socket, server or timer more than before`)
  }
  // three streams per round (the run's, the replay, the join): each had its heartbeat timer, each cleared
  t.equal(heartbeats.created - createdBefore, 3 * (N + 1), 'every stream started a heartbeat timer')
  t.equal(heartbeats.live.size, 0, 'and every one of them was stopped')
  t.ok(leftMidRun >= N - 3, `the client left a live run in ${leftMidRun} of ${N + 1} rounds`)
})

t.test('a client that asked for on_disconnect "cancel" stops the run by leaving: it ends interrupted, its log is the start of the run, then the cancellation', async (t) => {
  const heartbeats = watchHeartbeatTimers(t)
  const s = await serve(t, { heartbeatMs: HEARTBEAT_MS })
  const reference = normalize(await undisturbed(t, s))
  const N = reference.length
  await until(() => heartbeats.live.size === 0, 'the reference stream\'s heartbeat timer is cleared')
  const baseline = activeResources()
  for (const k of [0, 1, 2, 5, 8, 10, N - 3]) {
    const { run } = await readThenLeave(s, k, { ...PIPELINE, on_disconnect: 'cancel' })
    const ended = s.join(run)
    // no clock time passes: only the cancellation can end the run
    await until(() => ended.settled, `k=${k}: the run stops when its client leaves`, 500)
    t.equal(await s.status(run), 'interrupted', `k=${k}: the run ended interrupted`)
    const logged = await s.log(run.path)
    const m = logged.length
    t.ok(m >= k && m < N, `k=${k}: the run had sent ${m} events when it stopped`)
    t.same(ids(logged), range(0, m), `k=${k}: the log's ids are contiguous`)
    // A cancelled run's log just stops (no error event, as on the real server 1.5.1).
    t.same(normalize(logged), reference.slice(0, m), `k=${k}: the log is the start of the undisturbed run, and nothing else`)
    t.equal((await s.inject('GET', `/threads/${run.threadId}`)).status, 'idle', `k=${k}: the thread is idle again`)
    t.equal(s.clock.listenerCount('change'), 0, `k=${k}: nothing waits on the clock`)
    await until(() => heartbeats.live.size === 0 && s.sockets.size === 0, `k=${k}: heartbeat timers and connections are gone`)
    t.same(activeResources(), baseline, `k=${k}: no socket, server or timer more than before`)
  }
})

t.test('a client that leaves before the answer has begun: the run goes on, or stops when it asked to cancel on disconnect', async (t) => {
  const s = await serve(t, { heartbeatMs: HEARTBEAT_MS })
  for (const onDisconnect of ['continue', 'cancel'] as const) {
    const thread = await s.newThread()
    const c = s.open('POST', `/threads/${thread}/runs/stream`, { body: { ...PIPELINE, on_disconnect: onDisconnect } })
    // the request is on the wire, whole; the client goes before any answer
    c.req.once('finish', () => c.abort())
    await until(() => c.socketClosed && c.localPort !== undefined && !s.sockets.has(c.localPort), `${onDisconnect}: the connection closes on both ends`)
    const runs = async () => await s.inject('GET', `/threads/${thread}/runs`) as { run_id: string; status: string }[]
    await until(async () => (await runs()).length > 0, `${onDisconnect}: the run was created`, 500)
    const [run] = await runs()
    t.ok(run, `${onDisconnect}: the run was created`)
    if (!run) continue
    const ref = { threadId: thread, runId: run.run_id }
    const ended = s.join(ref)
    if (onDisconnect === 'cancel') {
      await until(() => ended.settled, `${onDisconnect}: the run stops without clock time passing`, 500)
      t.equal(await s.status(ref), 'interrupted', 'on_disconnect "cancel": the run was stopped by its client leaving')
    }
    await drive(s.clock, () => ended.settled, `${onDisconnect}: the run ends`)
    if (onDisconnect === 'continue') t.equal(await s.status(ref), 'success', 'the run finished without its reader')
    t.equal(s.clock.listenerCount('change'), 0, `${onDisconnect}: nothing waits on the clock`)
  }
})

t.test('reconnecting with Last-Event-ID k-1 after reading k events gets exactly events k.. to the end, while the run is live and after it finished', async (t) => {
  const s = await serve(t)
  const N = (await undisturbed(t, s)).length
  let reconnectedLive = 0
  for (let k = 0; k <= N; k++) {
    const { c, run } = await readThenLeave(s, k)
    const ended = s.join(run)
    await turn()
    if (!ended.settled) reconnectedLive++
    const again = s.open('GET', run.path, { headers: { 'last-event-id': String(k - 1) } })
    await again.response
    await drive(s.clock, () => again.ended, `k=${k}: the resumed stream ends with the run`)
    await s.closed(again)
    await until(() => ended.settled, `k=${k}: the run ended`)
    const logged = await s.log(run.path)
    t.same(ids(logged), range(0, N), `k=${k}: the log has ids 0..${N - 1}`)
    t.same(again.malformed, [], `k=${k}: the resumed stream is well formed`)
    t.same(ids(again.frames), range(k, N), `k=${k}: resumed at ${k}, to the end, no gap, no duplicate`)
    t.same(again.frames.map((f) => f.raw), logged.slice(k).map((f) => f.raw), `k=${k}: the same bytes as the log`)
    t.same([...c.frames.slice(0, k), ...again.frames].map((f) => f.raw), logged.map((f) => f.raw), `k=${k}: what was read, then what was resumed, is the whole run`)
    const later = await s.readAll(run.path, { 'last-event-id': String(k - 1) })
    t.same(later.frames.map((f) => f.raw), logged.slice(k).map((f) => f.raw), `k=${k}: after the run finished, the same again`)
  }
  t.ok(reconnectedLive >= N - 3, `the client reconnected to a live run in ${reconnectedLive} of ${N + 1} rounds`)
  t.equal(s.clock.listenerCount('change'), 0, 'nothing waits on the clock')
})

t.test('many streams joined to one live run, at the same and at different places in its log, each get exactly the log from their place, byte for byte', async (t) => {
  // Streams at the same place share each read of a live run's log (run-executor.ts); one at another
  // place, or one that joins after the others read on, must not be handed their page.
  const s = await serve(t)
  const thread = await s.newThread()
  const first = s.open('POST', `/threads/${thread}/runs/stream`, { body: PIPELINE })
  await first.response
  const run = s.runOf(first)
  const joined: { c: SseClient; from: number }[] = []
  const join = async (lastEventId?: number) => {
    const c = s.open('GET', run.path, { headers: lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) } })
    await c.response
    joined.push({ c, from: lastEventId === undefined ? 0 : lastEventId + 1 })
  }
  for (let i = 0; i < 8; i++) await join()
  await join(0)
  await join(1)
  // Later joiners, once the run is further on: from the start, and from where the first stream is.
  await drive(s.clock, () => first.frames.length >= 4, 'the run gets on')
  await join()
  await join(first.frames.length - 1)
  await join(-1)
  await drive(s.clock, () => first.ended && joined.every(({ c }) => c.ended), 'the run and every joined stream end')
  const logged = await s.log(run.path)
  t.ok(logged.length > 5, `the run logged ${logged.length} events`)
  t.same(first.frames.map((f) => f.raw), logged.map((f) => f.raw), 'the run\'s own stream is its log')
  for (const [i, { c, from }] of joined.entries()) {
    t.same(c.malformed, [], `joined stream ${i}: well formed`)
    t.same(c.frames.map((f) => f.raw), logged.slice(from).map((f) => f.raw), `joined stream ${i} (from ${from}): the log from there, byte for byte`)
  }
})

type Part = { event: string; data: unknown; id?: string }

t.test('the official SDK leaves after k events and resumes with joinStream(lastEventId: k-1), at every point', async (t) => {
  const s = await serve(t)
  const client = new Client({ apiUrl: s.base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  const streamed = (threadId: string, signal?: AbortSignal, onRunCreated?: (meta: { run_id: string }) => void) =>
    client.runs.stream(threadId, 'pipeline', { input: PIPELINE.input, streamMode: PIPELINE.stream_mode as never, signal, onRunCreated })
  /** Reads an SDK stream to its end (or until `stop` says so) while clock time passes. */
  const read = async (parts: AsyncIterable<unknown>, stop: (seen: Part[]) => boolean = () => false) => {
    const seen: Part[] = []
    const reading = tracked((async () => {
      for await (const part of parts) {
        seen.push(part as Part)
        if (stop(seen)) break
      }
    })())
    await drive(s.clock, () => reading.settled, 'the SDK stream ends')
    await reading.promise.catch(() => {})
    return seen
  }
  const reference = normalize((await read(streamed((await client.threads.create()).thread_id))) as Frame[])
  const N = reference.length
  t.ok(N >= 12, `the pipeline run has ${N} events through the SDK`)
  for (let k = 0; k <= N; k++) {
    const { thread_id } = await client.threads.create()
    const controller = new AbortController()
    let runId = ''
    const first = await read(streamed(thread_id, controller.signal, (meta) => {
      runId = meta.run_id
      if (k === 0) controller.abort()
    }), (seen) => {
      if (seen.length < k) return false
      controller.abort()
      return true
    })
    t.equal(first.length, k, `k=${k}: the SDK read ${k} events, then left`)
    await until(() => s.byPath.get(`/threads/${thread_id}/runs/stream`)?.[0].closed === true, `k=${k}: the server saw the client leave`)
    const resumed = await read(client.runs.joinStream(thread_id, runId, { lastEventId: String(k - 1) }))
    const logged = await read(client.runs.joinStream(thread_id, runId, { lastEventId: '-1' }))
    t.same(normalize(logged as Frame[]), reference, `k=${k}: the log is the undisturbed run's`)
    t.same(resumed.map((p) => p.id), range(k, N), `k=${k}: joinStream resumed at ${k}, to the end, no gap, no duplicate`)
    t.same(resumed, logged.slice(k), `k=${k}: the resumed events are the log's`)
    t.same([...first, ...resumed], logged, `k=${k}: what was read, then what was resumed, is the whole run`)
    t.equal((await client.runs.get(thread_id, runId)).status, 'success', `k=${k}: the run succeeded`)
  }
  t.equal(s.clock.listenerCount('change'), 0, 'nothing waits on the clock')
})

/** A long message: `agent` echoes it a word at a time, and legacy `messages` mode repeats the whole text so far with each word (tens of MB). */
const WORDS = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ')
const LONG = { assistant_id: 'agent', input: { messages: [{ role: 'user', content: WORDS }] }, stream_mode: ['messages', 'messages-tuple', 'values'] }

/** Starts a LONG run with a reader that reads nothing, and waits until the server is held up by it. */
async function stalledReader(s: Served) {
  const thread = await s.newThread()
  const c = s.open('POST', `/threads/${thread}/runs/stream`, { body: LONG, paused: true })
  await c.response
  const res = s.responses.get(c.localPort!)!
  const socket = s.sockets.get(c.localPort!)!
  const run = s.runOf(c)
  const ended = s.join(run)
  let most = 0
  const sample = () => (most = Math.max(most, res.writableLength, socket.writableLength))
  await until(() => (sample(), ended.settled), 'the run ends without waiting for its reader')
  await until(() => (sample(), res.writableNeedDrain), 'the server waits for the reader to drain', 200_000)
  return { c, res, socket, run, sample, most: () => most }
}

const bytes = (frames: Frame[]) => frames.reduce((n, f) => n + f.raw.length + 2, 0)

t.test('a reader too slow for a run\'s output holds the server to a small buffer; when it reads on, every event arrives, in order, well formed', async (t) => {
  const s = await serve(t)
  const { c, res, socket, run, sample, most } = await stalledReader(s)
  t.equal(await s.status(run), 'success', 'the run finished at its own pace')
  t.equal(res.listenerCount('drain'), 1, 'the stream writer waits for the socket to drain')
  const written = socket.bytesWritten
  for (let i = 0; i < 200; i++) {
    sample()
    await turn()
  }
  t.equal(socket.bytesWritten, written, 'while the reader reads nothing, the server writes nothing more')
  t.ok(res.writableNeedDrain, 'and still waits')
  let drains = 0
  res.on('drain', () => drains++)
  c.resume(true)
  await until(() => (sample(), c.ended), 'the slow reader reaches the end', 200_000)
  await s.closed(c)
  const total = bytes(c.frames)
  t.ok(most() < 256 * 1024, `at most ${most()} bytes waited in the server's buffers`)
  t.ok(total > 40 * most(), `for ${total} bytes of stream`)
  t.ok(drains > 10, `the writer went on after each of ${drains} drains`)
  t.same(c.malformed, [], 'every block is event, one data line, id')
  t.same(ids(c.frames), range(0, c.frames.length), 'ids 0.. in order, none missing, none twice')
  const logged = await s.log(run.path)
  t.same(c.frames.map((f) => f.raw), logged.map((f) => f.raw), 'the slow reader got the run\'s whole log, byte for byte')
  const partials = c.frames.filter((f) => f.event === 'messages/partial').map((f) => (f.data as { content: string }[])[0].content)
  t.equal(partials.length, 3000, 'one partial message per word')
  t.ok(partials.every((text, i) => i === 0 || text.startsWith(partials[i - 1])), 'each partial message extends the one before')
  t.equal(partials.at(-1), WORDS)
})

t.test('a slow reader that leaves while the server waits for it to drain frees its stream at once; the log stays whole', async (t) => {
  const heartbeats = watchHeartbeatTimers(t)
  const s = await serve(t, { heartbeatMs: HEARTBEAT_MS })
  // An earlier test's server may still be in its last close callback (its close() resolves a phase before).
  await until(() => activeResources().TCPServerWrap === 1, 'only this test\'s server is left')
  const baseline = activeResources()
  const { c, res, run } = await stalledReader(s)
  t.equal(heartbeats.live.size, 1, 'the stalled stream has its heartbeat timer')
  t.equal(res.listenerCount('drain'), 1, 'the writer waits for a drain')
  c.abort()
  await s.closed(c)
  t.equal(res.listenerCount('drain'), 0, 'the writer stopped waiting for a drain that will never come')
  await until(() => heartbeats.live.size === 0, 'the heartbeat timer is cleared')
  t.same(activeResources(), baseline, 'no socket, server or timer more than before')
  t.equal(await s.status(run), 'success', 'the run succeeded')
  const logged = await s.log(run.path)
  t.same(ids(logged), range(0, logged.length), 'the log\'s ids are contiguous')
  t.same(logged.map((f) => f.event).filter((e) => e !== 'messages' && e !== 'messages/partial'), ['metadata', 'values', 'messages/complete', 'messages/metadata', 'messages/complete', 'values'], 'the log has the run\'s start and end')
  t.equal(logged.filter((f) => f.event === 'messages').length, 3000, 'and a token chunk for every word')
  t.equal(logged.filter((f) => f.event === 'messages/partial').length, 3000, 'and a partial message for every word')
  t.same((logged.at(-1)!.data as { messages: { content: string }[] }).messages.map((m) => m.content), [WORDS, WORDS], 'the final state has the whole reply')
})

t.test('after many clients left many runs at different points, each run\'s log is that of an undisturbed run', async (t) => {
  const heartbeats = watchHeartbeatTimers(t)
  const s = await serve(t, { heartbeatMs: HEARTBEAT_MS })
  const reference = normalize(await undisturbed(t, s))
  const N = reference.length
  await until(() => heartbeats.live.size === 0, 'the reference stream\'s heartbeat timer is cleared')
  const baseline = activeResources()

  interface Reader { c: SseClient; leaveAfter: number; left: boolean }
  const M = 6
  const runs: { creator: SseClient; cancels: boolean; readers: Reader[]; run?: ReturnType<Served['runOf']> }[] = []
  for (let j = 0; j < M; j++) {
    const thread = await s.newThread()
    // the last run's creator asked to cancel on disconnect; it leaves mid-run
    const cancels = j === M - 1
    const creator = s.open('POST', `/threads/${thread}/runs/stream`, { body: { ...PIPELINE, ...(cancels ? { on_disconnect: 'cancel' } : {}) } })
    runs.push({ creator, cancels, readers: [{ c: creator, leaveAfter: cancels ? 9 : (j * 3) % N, left: false }] })
  }
  for (const [j, r] of runs.entries()) {
    await r.creator.response
    r.run = s.runOf(r.creator)
    // followers: one from the start leaving early, one resuming after id 3 leaving late, one that stays, one that stalls
    r.readers.push({ c: s.open('GET', r.run.path), leaveAfter: (j * 5 + 2) % N, left: false })
    r.readers.push({ c: s.open('GET', r.run.path, { headers: { 'last-event-id': '3' } }), leaveAfter: N - 6 - j, left: false })
    r.readers.push({ c: s.open('GET', r.run.path, { headers: { 'last-event-id': String(j) } }), leaveAfter: Infinity, left: false })
    r.readers.push({ c: s.open('GET', r.run.path, { headers: { 'last-event-id': '-1' }, paused: true }), leaveAfter: Infinity, left: false })
  }
  const readers = runs.flatMap((r) => r.readers)
  const ended = runs.map((r) => s.join(r.run!))
  await drive(s.clock, () => {
    for (const reader of readers) {
      if (!reader.left && reader.c.frames.length >= reader.leaveAfter) {
        reader.c.abort()
        reader.left = true
      }
    }
    // the stalled readers leave once every run is over
    if (ended.every((e) => e.settled)) for (const r of runs) r.readers[4].c.abort()
    return ended.every((e) => e.settled) && readers.every((reader) => reader.c.socketClosed || reader.c.ended)
  }, 'every run ends')
  await until(() => s.sockets.size === 0, 'every connection closes', 200_000)

  for (const [j, r] of runs.entries()) {
    const logged = await s.log(r.run!.path)
    if (r.cancels) {
      t.equal(await s.status(r.run!), 'interrupted', `run ${j}: stopped when its creator left`)
      const m = logged.length
      t.ok(m < N, `run ${j}: it stopped early`)
      t.same(normalize(logged), reference.slice(0, m), `run ${j}: its log is the start of the run, and nothing else`)
      t.same(ids(logged), range(0, m))
    } else {
      t.equal(await s.status(r.run!), 'success', `run ${j}: succeeded`)
      t.same(normalize(logged), reference, `run ${j}: its log is the undisturbed run's`)
      t.same(ids(logged), range(0, N))
      const stayed = r.readers[3].c
      t.same(stayed.frames.map((f) => f.raw), logged.slice(j + 1).map((f) => f.raw), `run ${j}: the reader that stayed got every event after ${j}`)
    }
    for (const [i, reader] of r.readers.entries()) {
      t.same(reader.c.malformed, [], `run ${j}, reader ${i}: well formed`)
      const from = Number(reader.c.frames[0]?.id ?? 0)
      t.same(reader.c.frames.map((f) => f.raw), logged.slice(from, from + reader.c.frames.length).map((f) => f.raw), `run ${j}, reader ${i}: what it read is a contiguous part of the log`)
    }
  }
  t.equal(s.clock.listenerCount('change'), 0, 'nothing waits on the clock')
  await until(() => heartbeats.live.size === 0, 'every heartbeat timer is cleared')
  t.equal(heartbeats.created, 1 + M * 5 + M, 'each stream had a heartbeat timer (and each log read)')
  t.same(activeResources(), baseline, 'no socket, server or timer more than before')
})


// Shutdown gives open streams a second (real time) to end, then cuts what is left; were it to wait
// for the reader instead, tap's timeout for this test fails it.
t.test('shutting down while a reader is stalled ends its stream instead of waiting for the reader', { timeout: 15_000 }, async (t) => {
  const s = await serve(t)
  const { c, res } = await stalledReader(s)
  const closing = tracked(s.app.close())
  const closed = await closing.promise.then(() => true)
  t.ok(closed, 'app.close() resolves although a reader has stopped reading')
  t.notOk(res.writableNeedDrain && !res.destroyed, 'the stalled stream was ended, not left waiting for a drain')
  // let the test's teardown finish either way: the client goes
  c.abort()
  await until(() => closing.settled, 'app.close() resolves once the client left')
})

t.test('a join stream opened with cancel_on_disconnect stops the run when it leaves; one without it does not', async (t) => {
  const s = await serve(t)
  const N = (await undisturbed(t, s)).length
  for (const [cancel, k] of [[true, 3], [false, 3], [true, 0], [false, 9]] as const) {
    const creator = s.open('POST', `/threads/${await s.newThread()}/runs/stream`, { body: PIPELINE })
    await creator.response
    const run = s.runOf(creator)
    creator.abort()
    await s.closed(creator)
    const c = s.open('GET', `${run.path}?cancel_on_disconnect=${cancel}`, { headers: { 'last-event-id': '-1' } })
    await c.response
    await drive(s.clock, () => c.frames.length >= k, `reads ${k} events`)
    c.abort()
    await s.closed(c)
    const ended = s.join(run)
    if (cancel) await until(() => ended.settled, `k=${k}: the run stops without clock time passing`, 500)
    await drive(s.clock, () => ended.settled, 'the run ends')
    const logged = await s.log(run.path)
    if (cancel) {
      t.equal(await s.status(run), 'interrupted', `cancel_on_disconnect, k=${k}: the run was stopped`)
      t.ok(logged.length < N, `cancel_on_disconnect, k=${k}: its log stops early`)
    } else {
      t.equal(await s.status(run), 'success', `no cancel_on_disconnect, k=${k}: the run went on`)
      t.equal(logged.length, N)
    }
    t.same(ids(logged), range(0, logged.length))
  }
})

t.test('a client that leaves a run still waiting its turn: the run runs when its turn comes, or never with on_disconnect "cancel"', async (t) => {
  const s = await serve(t)
  const thread = await s.newThread()
  const first = s.open('POST', `/threads/${thread}/runs/stream`, { body: PIPELINE })
  await first.response
  const queued = []
  for (const onDisconnect of ['continue', 'cancel'] as const) {
    const c = s.open('POST', `/threads/${thread}/runs/stream`, { body: { ...PIPELINE, multitask_strategy: 'enqueue', on_disconnect: onDisconnect } })
    await c.response
    queued.push({ onDisconnect, c, run: s.runOf(c) })
    c.abort()
    await s.closed(c)
    t.same(c.frames, [], `${onDisconnect}: a pending run has sent nothing`)
  }
  const firstRun = s.runOf(first)
  const ended = [firstRun, ...queued.map((q) => q.run)].map((run) => s.join(run))
  await drive(s.clock, () => ended.every((e) => e.settled), 'every run ends')
  t.equal(await s.status(firstRun), 'success', 'the running run was not disturbed')
  t.same(ids(first.frames), range(0, first.frames.length))
  const [goesOn, cancelled] = queued
  t.equal(await s.status(goesOn.run), 'success', 'the run whose client left without asking to cancel ran in its turn')
  const logged = await s.log(goesOn.run.path)
  t.equal(logged[0].event, 'metadata')
  t.same(ids(logged), range(0, logged.length))
  t.equal(await s.status(cancelled.run), 'interrupted', 'the run whose client asked to cancel on disconnect never ran')
  t.same(await s.log(cancelled.run.path), [], 'and has no events')
  t.equal((await s.inject('GET', `/threads/${thread}`)).status, 'idle')
  t.equal(s.clock.listenerCount('change'), 0, 'nothing waits on the clock')
})

t.test('a stateless run whose client leaves still runs to the end, then its temporary thread goes', async (t) => {
  const s = await serve(t)
  const count = async () => (await s.inject('POST', '/threads/count', {})) as number
  const before = await count()
  const c = s.open('POST', '/runs/stream', { body: PIPELINE })
  await c.response
  await drive(s.clock, () => c.frames.length >= 3, 'reads 3 events')
  t.equal(await count(), before + 1, 'the run has its temporary thread')
  c.abort()
  await s.closed(c)
  t.ok(s.clock.listenerCount('change') > 0, 'the run still waits on the clock')
  await drive(s.clock, () => s.clock.listenerCount('change') === 0, 'the run ends')
  let after = -1
  for (let i = 0; i < 100 && after !== before; i++) after = await count()
  t.equal(after, before, 'the temporary thread was deleted when the run ended')
})


t.test('a stalled reader costs the server a bounded amount of memory, not the rest of the run\'s output (tens of MB)', async (t) => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  /** The live JavaScript heap once the event loop has had its turns and everything unreachable is collected. */
  const heap = async () => {
    await turns(200)
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }
  const MB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`
  const s = await serve(t)

  // following a run live: the run went on and ended while its reader read nothing
  const live = await stalledReader(s)
  const run = live.run
  const whileLive = await heap()
  live.c.abort()
  await s.closed(live.c)
  const afterLive = await heap()
  t.ok(whileLive - afterLive < 4 * 2 ** 20, `a stalled live reader: the server held ${MB(whileLive - afterLive)} more than once it left`)

  // replaying the log of the finished run from the start
  const replay = s.open('GET', run.path, { headers: { 'last-event-id': '-1' }, paused: true })
  await replay.response
  const res = s.responses.get(replay.localPort!)!
  await until(() => res.writableNeedDrain, 'the replay waits for its reader to drain', 200_000)
  const whileReplaying = await heap()
  replay.abort()
  await s.closed(replay)
  const afterReplay = await heap()
  t.ok(whileReplaying - afterReplay < 4 * 2 ** 20, `a stalled replay: the server held ${MB(whileReplaying - afterReplay)} more than once it left`)
})
