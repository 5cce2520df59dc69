// The baseline every hangar figure is divided by: a bare Fastify app in a process of its own,
// answering hangar's paths with fixed JSON of the same size as hangar's answers (no database, no
// validation, no hooks, no logger). The benchmarks measure hangar's answers first and pass their
// sizes here as `--shape`, so both servers put the same bytes on the wire.
//
//   node bench/baseline-server.mjs --port 0 --shape '<json>' [--heartbeat-ms 1000] [--db <file> [--keep]] [--work-us N]
//
// --work-us makes GET /v2/deployments/:id spend N µs of CPU (a spin on the clock) before it answers:
// what a route doing that much more work than the bare one reads against it (throughput.mjs's budget).
// --db makes it the durable floor (see durableFloor below); --keep stores checkpoints and the
// session-protocol log too.
//
// shape: { get, list, post, thread: bytes of each JSON answer,
//          frames: [{event, bytes}] of a finished run's stream,
//          hold: [{event, bytes}] written when a held stream opens, next: {event, bytes},
//          protocol: the session protocol's frames (see ProtocolShape), store: the store's answers,
//          kept, keptNext: what hangar kept beside a run's events, and beside a held run's step's (see Kept) }
//
// Routes (the same paths the benchmark clients send to hangar):
//   GET /ok, GET /v2/deployments/:id, GET /v2/deployments, POST /v2/deployments (201),
//   POST /threads, POST /threads/search,
//   POST /threads/:id/runs/stream   writes `frames` and ends; with assistant_id "pipeline" it writes
//                                   `hold` and stays open, with a heartbeat comment every --heartbeat-ms,
//   POST /threads/:id/commands      the answer to run.start (`protocol.command` bytes),
//   POST /threads/:id/stream/events writes `protocol.sseHold` and stays open (no heartbeat, as hangar's),
//   WebSocket /threads/:id/stream/events  answers a subscribe, then sends `protocol.wsHold`,
//   PUT /store/items (204), POST /store/items/search (`store.filter` bytes, `store.query` with a query),
//   POST /_hangar/clock             {"action":"advance"} writes `next` to every held run stream and
//                                   `protocol.sseNext` / `protocol.wsNext` to every protocol stream and socket.

import Fastify from 'fastify'
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { WebSocketServer } from 'ws'

/**
 * One frame of an event stream as the benchmarks measured it: its event name and its size in bytes.
 * @typedef {{ event: string, bytes: number }} FrameSize
 */
/**
 * The sizes the baseline answers with (`--shape`, JSON): bytes of each JSON answer, and the frames
 * of a finished run's stream, of a held stream when it opens, and the one written to held streams
 * when the clock moves. Each has a default.
 * @typedef {object} Shape
 * @property {number} [get]
 * @property {number} [list]
 * @property {number} [post]
 * @property {number} [thread]
 * @property {number} [threads]
 * @property {FrameSize[]} [frames]
 * @property {FrameSize[]} [hold]
 * @property {FrameSize} [next]
 * @property {ProtocolShape} [protocol]
 * @property {{ filter: number, query: number }} [store] bytes of a store search's answer, by a filter and by a query
 * @property {Kept} [kept] what hangar kept of a finished run's thread beyond its events (`--keep`)
 * @property {Kept} [keptNext] what a held run's step kept beyond its event (`--keep`)
 */
/**
 * What hangar keeps of a thread beyond its runs' events, in bytes: each checkpoint (as its history
 * shows it) and each entry of the session-protocol log.
 * @typedef {{ checkpoints: number[], log: number[] }} Kept
 */
/**
 * The session protocol's sizes: the run.start answer; the SSE frames a subscriber gets when it
 * opens (the replay) and the next one once the clock moves; the same as WebSocket messages.
 * @typedef {{ command: number, sseHold: FrameSize[], sseNext: FrameSize, wsHold: number[], wsNext: number }} ProtocolShape
 */

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    shape: { type: 'string', default: '{}' },
    'heartbeat-ms': { type: 'string', default: '5000' },
    db: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'work-us': { type: 'string', default: '0' },
  },
})
/** @type {Required<Omit<Shape, 'threads'>> & Shape} */
const shape = { get: 860, list: 17_000, post: 860, thread: 280, frames: [], hold: [], next: { event: 'values', bytes: 200 }, ...JSON.parse(args.shape) }
const heartbeatMs = Number(args['heartbeat-ms'])

/**
 * A JSON object shaped like a resource (ids, times, nulls, a nested object) whose JSON text is `bytes` long.
 * @param {number} bytes
 * @param {number} [i]
 */
function resource(bytes, i = 0) {
  /** @type {[string, unknown][]} */
  const fields = [
    ['id', `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`],
    ['status', 'READY'],
    ['tenant_id', '00000000-0000-4000-8000-68616e676172'],
    ['name', `baseline-${i}`],
    ['created_at', '2025-01-01T00:00:00.000Z'],
    ['updated_at', '2025-01-01T00:00:00.000Z'],
    ['config', { deployment_type: 'dev', listener_id: null, custom_url: null }],
  ]
  // As many fields as fit (small SSE frames take few), then a string that makes up the rest.
  /** @type {Record<string, unknown> & { pad: string }} */
  const body = { pad: '' }
  for (const [key, value] of fields) {
    const next = { ...body, [key]: value }
    if (JSON.stringify(next).length > bytes) break
    Object.assign(body, next)
  }
  body.pad = 'x'.repeat(Math.max(0, bytes - JSON.stringify(body).length))
  return body
}

/**
 * `{"resources": [n resources], "offset": n}` of `bytes` in all.
 * @param {number} bytes
 * @param {number} [n]
 */
function list(bytes, n = 20) {
  const empty = JSON.stringify({ resources: [], offset: n }).length + (n - 1) // the commas
  const each = Math.floor((bytes - empty) / n)
  const resources = Array.from({ length: n }, (_, i) => resource(each, i))
  const body = { resources, offset: n }
  resources[0].pad += 'x'.repeat(Math.max(0, bytes - JSON.stringify(body).length))
  return body
}

/**
 * The data of an SSE frame `event: <e>\ndata: <json>\nid: <i>\n\n` that is `bytes` long in all.
 * @param {string} event
 * @param {number} bytes
 * @param {number} id
 */
function frameData(event, bytes, id) {
  const overhead = `event: ${event}\ndata: \nid: ${id}\n\n`.length
  return resource(bytes - overhead, id)
}
/** @param {string} event @param {unknown} data @param {number} id */
const frame = (event, data, id) => `event: ${event}\ndata: ${JSON.stringify(data)}\nid: ${id}\n\n`

const answers = {
  get: resource(shape.get),
  list: list(shape.list),
  post: resource(shape.post),
  thread: resource(shape.thread),
  threads: list(shape.threads ?? shape.list, 10),
}
/**
 * A WebSocket event message `{"type":"event",…}` that is `bytes` long.
 * @param {number} bytes
 * @param {number} seq
 */
function wsEvent(bytes, seq) {
  const overhead = JSON.stringify({ type: 'event', seq, data: {} }).length - 2
  return JSON.stringify({ type: 'event', seq, data: resource(bytes - overhead, seq) })
}

/**
 * `{"items": [n items]}` of `bytes` in all (a store search's answer).
 * @param {number} bytes
 * @param {number} [n]
 */
function items(bytes, n = 10) {
  const { resources } = list(bytes - JSON.stringify({ items: [] }).length + JSON.stringify({ resources: [], offset: n }).length, n)
  const body = { items: resources }
  resources[0].pad += 'x'.repeat(Math.max(0, bytes - JSON.stringify(body).length))
  return body
}

/** @type {ProtocolShape} */
const protocol = shape.protocol ?? { command: 60, sseHold: [], sseNext: { event: 'custom', bytes: 300 }, wsHold: [], wsNext: 280 }
const store = shape.store ?? { filter: 2000, query: 2000 }
const protocolAnswers = {
  command: JSON.stringify({ type: 'success', id: 1, result: resource(protocol.command - JSON.stringify({ type: 'success', id: 1, result: {} }).length + 2) }),
  sseHold: protocol.sseHold.map((f, i) => frame(f.event, frameData(f.event, f.bytes, i + 1), i + 1)),
  sseNext: frame(protocol.sseNext.event, frameData(protocol.sseNext.event, protocol.sseNext.bytes, protocol.sseHold.length + 1), protocol.sseHold.length + 1),
  wsHold: protocol.wsHold.map((bytes, i) => wsEvent(bytes, i + 1)),
  wsNext: wsEvent(protocol.wsNext, protocol.wsHold.length + 1),
}
const storeAnswers = { filter: JSON.stringify(items(store.filter)), query: JSON.stringify(items(store.query)) }

const frames = shape.frames.map((f, i) => ({ event: f.event, data: frameData(f.event, f.bytes, i) }))
const hold = shape.hold.map((f, i) => ({ event: f.event, data: frameData(f.event, f.bytes, i) }))
const next = { event: shape.next.event, data: frameData(shape.next.event, shape.next.bytes, hold.length) }

const app = Fastify({ logger: false })
/** @type {Set<import('node:http').ServerResponse>} */
const held = new Set()
/** @type {Map<import('node:http').ServerResponse, { runSeq: number | bigint, threadSeq: number }>} with `--db`, the run each held stream follows */
const heldRuns = new Map()
/** @type {Set<import('node:http').ServerResponse>} the session protocol's open SSE streams */
const protocolStreams = new Set()
/** @type {Set<import('ws').WebSocket>} the session protocol's sockets that subscribed */
const protocolSockets = new Set()

app.get('/ok', async () => ({ ok: true }))
const workMs = Number(args['work-us']) / 1000
app.get('/v2/deployments/:id', workMs > 0
  ? async () => {
    const end = performance.now() + workMs
    while (performance.now() < end);
    return answers.get
  }
  : async () => answers.get)
app.get('/v2/deployments', async () => answers.list)
const floor = args.db === undefined ? undefined : await durableFloor(args.db, args.keep ? { run: shape.kept ?? { checkpoints: [], log: [] }, step: shape.keptNext ?? { checkpoints: [], log: [] } } : undefined)
app.post('/v2/deployments', floor?.create ?? (async (request, reply) => reply.code(201).send(answers.post)))
app.post('/threads', floor?.thread ?? (async () => answers.thread))
app.post('/threads/search', async () => answers.threads.resources)

app.post('/threads/:id/runs/stream', (request, reply) => {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
  if (/** @type {{ assistant_id?: unknown } | undefined} */ (request.body)?.assistant_id !== 'pipeline') {
    const written = floor ? floor.run(/** @type {{ id: string }} */ (request.params).id, frames) : undefined
    const send = () => {
      frames.forEach((f, i) => raw.write(frame(f.event, f.data, i)))
      raw.end()
    }
    if (written) written.then(send)
    else send()
    return
  }
  const writeHold = () => hold.forEach((f, i) => raw.write(frame(f.event, f.data, i)))
  if (floor) {
    const stored = floor.hold(/** @type {{ id: string }} */ (request.params).id, hold)
    heldRuns.set(raw, stored.run)
    stored.committed.then(writeHold)
  } else {
    writeHold()
  }
  const timer = heartbeatMs > 0 ? setInterval(() => raw.write(': heartbeat\n\n'), heartbeatMs).unref() : undefined
  held.add(raw)
  raw.once('close', () => {
    clearInterval(timer)
    held.delete(raw)
    heldRuns.delete(raw)
  })
})

app.put('/store/items', async (request, reply) => reply.code(204).send())
app.post('/store/items/search', async (request, reply) => {
  const query = /** @type {{ query?: unknown } | undefined} */ (request.body)?.query
  return reply.type('application/json; charset=utf-8').send(typeof query === 'string' ? storeAnswers.query : storeAnswers.filter)
})

app.post('/threads/:id/commands', async (request, reply) => reply.type('application/json').send(protocolAnswers.command))
app.post('/threads/:id/stream/events', (request, reply) => {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
  for (const f of protocolAnswers.sseHold) raw.write(f)
  protocolStreams.add(raw)
  raw.once('close', () => protocolStreams.delete(raw))
})

// The WebSocket on the same path, with `ws` as hangar's @fastify/websocket uses it.
const sockets = new WebSocketServer({ noServer: true })
app.server.on('upgrade', (request, socket, head) => {
  if (!/^\/threads\/[^/]+\/stream\/events(\?|$)/.test(request.url ?? '')) return socket.destroy()
  sockets.handleUpgrade(request, socket, head, (ws) => {
    ws.on('message', (data) => {
      const command = JSON.parse(data.toString('utf8'))
      ws.send(JSON.stringify({ type: 'success', id: command.id, result: { subscription_id: 'sub-1', replayed_events: protocolAnswers.wsHold.length } }))
      for (const message of protocolAnswers.wsHold) ws.send(message)
      protocolSockets.add(ws)
    })
    ws.once('close', () => protocolSockets.delete(ws))
    ws.on('error', () => ws.terminate())
  })
})

app.post('/_hangar/clock', async (request) => {
  if (/** @type {{ action?: unknown } | undefined} */ (request.body)?.action === 'advance') {
    if (floor) await floor.append([...heldRuns.values()], hold.length, next)
    for (const raw of held) raw.write(frame(next.event, next.data, hold.length))
    for (const raw of protocolStreams) raw.write(protocolAnswers.sseNext)
    for (const ws of protocolSockets) ws.send(protocolAnswers.wsNext)
  }
  return { now: new Date().toISOString(), now_ms: Date.now(), frozen: true }
})

/**
 * The durable floor (`--db <file>`): the bare app writing to SQLite what hangar must keep at the
 * least, and answering or streaming only once it is committed. Writes commit once per turn of the
 * event loop (at setImmediate), every request read in that turn sharing the commit: the fewest
 * commits an app can make that sends only what is stored.
 * - POST /v2/deployments (in a database hangar made, for its tables and indexes): the two rows a
 *   create writes first, the deployment and its first revision, with random ids as hangar makes
 *   them, and no read of the name before the insert, as in hangar (a taken name fails at the name's
 *   unique index; the benchmark sends none).
 * - POST /threads and a run's stream (tables of its own): a thread row; a run row and each of the
 *   run's events as a row, as a server whose streams can be resumed (Last-Event-ID) must store
 *   them, before they are sent. Nothing of checkpoints, state or the session protocol's log,
 *   unless `keep` says what else to store (`--keep`, with `kept` and `keptNext` in the shape): then
 *   a run also stores each of its checkpoints (a row each, of the size hangar's history showed),
 *   and its session-protocol log entries (in one row per commit, the fewest rows that keep them
 *   in order), and so does a held run's step with what its step kept.
 * @param {string} file
 * @param {{ run: Kept, step: Kept }} [keep]
 */
async function durableFloor(file, keep) {
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.exec(`CREATE TABLE IF NOT EXISTS floor_threads (seq INTEGER PRIMARY KEY, thread_id TEXT NOT NULL UNIQUE) STRICT;
    CREATE TABLE IF NOT EXISTS floor_runs (seq INTEGER PRIMARY KEY, thread_seq INTEGER NOT NULL REFERENCES floor_threads (seq)) STRICT;
    CREATE TABLE IF NOT EXISTS floor_events (run_seq INTEGER NOT NULL REFERENCES floor_runs (seq), idx INTEGER NOT NULL,
      event TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_seq, idx)) STRICT, WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS floor_checkpoints (seq INTEGER PRIMARY KEY, thread_seq INTEGER NOT NULL REFERENCES floor_threads (seq),
      checkpoint_id TEXT NOT NULL, state TEXT NOT NULL, UNIQUE (thread_seq, checkpoint_id)) STRICT;
    CREATE TABLE IF NOT EXISTS floor_log (thread_seq INTEGER NOT NULL REFERENCES floor_threads (seq), seq INTEGER NOT NULL,
      entries TEXT NOT NULL, PRIMARY KEY (thread_seq, seq)) STRICT, WITHOUT ROWID`)
  const [begin, commit] = [db.prepare('BEGIN'), db.prepare('COMMIT')]
  /** @type {Promise<void> | undefined} the open turn's commit */
  let committed
  /** Opens the turn's transaction unless it is open; resolves once what the turn wrote is committed. */
  const turn = () => {
    if (committed) return committed
    begin.run()
    committed = new Promise((resolve) => setImmediate(() => {
      committed = undefined
      commit.run()
      resolve()
    }))
    return committed
  }
  const sql = {
    thread: db.prepare('INSERT INTO floor_threads (thread_id) VALUES (?)'),
    threadSeq: db.prepare('SELECT seq FROM floor_threads WHERE thread_id = ?').pluck(),
    run: db.prepare('INSERT INTO floor_runs (thread_seq) VALUES (?)'),
    event: db.prepare('INSERT INTO floor_events (run_seq, idx, event, data) VALUES (?, ?, ?, ?)'),
    checkpoint: db.prepare('INSERT INTO floor_checkpoints (thread_seq, checkpoint_id, state) VALUES (?, ?, ?)'),
    log: db.prepare('INSERT INTO floor_log (thread_seq, seq, entries) VALUES (?, (SELECT coalesce(max(seq), -1) + 1 FROM floor_log WHERE thread_seq = ?), ?)'),
  }
  // What `keep` stores, made once: each checkpoint, and one commit's log entries as a JSON array.
  const keptRows = (/** @type {Kept} */ k) => ({
    checkpoints: k.checkpoints.map((bytes, i) => JSON.stringify(resource(bytes, i))),
    log: k.log.length === 0 ? undefined : JSON.stringify(k.log.map((bytes, i) => resource(bytes, i))),
  })
  const kept = keep && { run: keptRows(keep.run), step: keptRows(keep.step) }
  /**
   * Stores what a run or a step kept beside its events (nothing without `keep`).
   * @param {number | bigint} threadSeq
   * @param {{ checkpoints: string[], log: string | undefined } | undefined} rows
   */
  const storeKept = (threadSeq, rows) => {
    if (!rows) return
    for (const state of rows.checkpoints) sql.checkpoint.run(threadSeq, randomUUID(), state)
    if (rows.log !== undefined) sql.log.run(threadSeq, threadSeq, rows.log)
  }
  const hasDeployments = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'deployments'").get() !== undefined
  return {
    /** @type {import('fastify').RouteHandlerMethod | undefined} */
    create: hasDeployments ? durableCreates(db, turn) : undefined,
    /** @type {import('fastify').RouteHandlerMethod} */
    thread: async () => {
      const threadId = randomUUID()
      const committing = turn()
      sql.thread.run(threadId)
      await committing
      return { ...answers.thread, thread_id: threadId }
    },
    /**
     * Stores a run of the thread and its events; resolves once they are committed.
     * @param {string} threadId
     * @param {{ event: string, data: unknown }[]} events
     */
    run: (threadId, events) => {
      const committing = turn()
      const threadSeq = /** @type {number} */ (sql.threadSeq.get(threadId))
      const runSeq = sql.run.run(threadSeq).lastInsertRowid
      events.forEach((e, i) => sql.event.run(runSeq, i, e.event, JSON.stringify(e.data)))
      storeKept(threadSeq, kept?.run)
      return committing
    },
    /**
     * Stores a held run (`pipeline`: it waits for the clock) and its first events; returns its seq
     * and the commit to wait for before sending them.
     * @param {string} threadId
     * @param {{ event: string, data: unknown }[]} events
     */
    hold: (threadId, events) => {
      const committed = turn()
      const threadSeq = /** @type {number} */ (sql.threadSeq.get(threadId))
      const runSeq = sql.run.run(threadSeq).lastInsertRowid
      events.forEach((e, i) => sql.event.run(runSeq, i, e.event, JSON.stringify(e.data)))
      return { run: { runSeq, threadSeq }, committed }
    },
    /**
     * Stores the next event (number `idx`) of each held run, and what its step kept; resolves once
     * they are committed.
     * @param {{ runSeq: number | bigint, threadSeq: number }[]} runs
     * @param {number} idx
     * @param {{ event: string, data: unknown }} event
     */
    append: (runs, idx, event) => {
      const committing = turn()
      const data = JSON.stringify(event.data)
      for (const { runSeq, threadSeq } of runs) {
        sql.event.run(runSeq, idx, event.event, data)
        storeKept(threadSeq, kept?.step)
      }
      return committing
    },
  }
}

/**
 * POST /v2/deployments writing the deployment and its first revision in the turn's transaction.
 * @param {import('better-sqlite3').Database} db
 * @param {() => Promise<void>} turn
 * @returns {import('fastify').RouteHandlerMethod}
 */
function durableCreates(db, turn) {
  const tenant = randomUUID()
  const deployment = db.prepare(`INSERT INTO deployments (id, tenant_id, name, source, source_config, secrets, created_at, updated_at)
    VALUES (?, ?, ?, 'github', ?, ?, ?, ?)`)
  const revision = db.prepare(`INSERT INTO revisions (id, deployment_seq, source, source_revision_config, speed, status, status_at, next_at, created_at, snapshot)
    VALUES (?, ?, 'github', ?, 'normal', 'CREATING', ?, ?, ?, NULL)`)
  return async (request, reply) => {
    const body = /** @type {{ name?: unknown, source_config?: unknown, source_revision_config?: unknown, secrets?: unknown }} */ (request.body)
    if (typeof body?.name !== 'string') return reply.code(422).send({ detail: 'name' })
    const committing = turn()
    const now = Date.now()
    // No read of the name first, as in hangar: a taken one fails at the unique index (the benchmark sends none).
    const { lastInsertRowid } = deployment.run(randomUUID(), tenant, body.name, JSON.stringify(body.source_config ?? {}), JSON.stringify(body.secrets ?? []), now, now)
    revision.run(randomUUID(), lastInsertRowid, JSON.stringify(body.source_revision_config ?? {}), now, now + 1000, now)
    await committing
    return reply.code(201).send(answers.post)
  }
}

const url = await app.listen({ port: Number(args.port), host: args.host })
process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg: `baseline listening on ${url}` })}\n`)
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    for (const raw of held) raw.destroy()
    for (const raw of protocolStreams) raw.destroy()
    for (const ws of protocolSockets) ws.terminate()
    app.close().then(() => process.exit(0))
  })
}
