// The agent server's event streams, against the bare Fastify app writing the same frames:
//  1. latency of one zero-delay `agent` run (POST /threads, then POST /threads/{id}/runs/stream):
//     time to the first byte of the stream and to its end, median of 200 (quick: 20);
//  2. runs completed per second with 20 concurrent clients (each run: a new thread, then its stream);
//  3. 1,000 open streams of `pipeline` runs with hangar's clock frozen and a heartbeat every second:
//     RSS, heartbeats, and how long each run's next event takes to reach its stream after the clock
//     moves (1,000 events, one per run); then 1,000 streams joined to one run: how long that run's
//     next event takes to reach all of them (one event, fanned out).
// hangar runs with `--db :memory:` and `--log-level warn`.
//   node bench/streams.mjs [--quick]

import http from 'node:http'
import { pathToFileURL } from 'node:url'
import { API_KEY, JSON_HEADERS, QUICK, RUN_BODY, fmt, json, median, memoryOf, mib, percentile, pool, sleep, startBaseline, startHangar, textTable } from './lib.mjs'
import { CHANNELS } from './protocol.mjs'
import { openStream } from './sse-client.mjs'

const HEADERS = { 'x-api-key': API_KEY }

/**
 * What a run of this benchmark does: runs timed one after the other (after `warmup` untimed), the
 * seconds of the runs/s test, and the open streams test's number, heartbeat and watch window.
 * @typedef {{ runs: number, warmup: number, seconds: number, n: number, heartbeatMs: number, watchMs: number }} Settings
 */
/** @typedef {Awaited<ReturnType<typeof latencyAndRate>>} LatencyAndRate */
/** @typedef {Awaited<ReturnType<typeof holdStreams>>} Hold */
/**
 * The figures of both servers.
 * @typedef {object} StreamsResult
 * @property {Settings} settings
 * @property {LatencyAndRate & { rssKiB: number }} hangar
 * @property {LatencyAndRate} bare
 * @property {Awaited<ReturnType<typeof probeShape>>} shape what hangar wrote, which the bare app wrote too
 * @property {Hold & { warnings: string[] }} hangarHold with the warnings hangar wrote on stderr
 * @property {Hold} bareHold
 * @property {Awaited<ReturnType<typeof joinStreams>>} hangarJoin
 * @property {LatencyAndRate} floor the durable floor: the bare app storing each thread, run and event before it sends them (baseline-server.mjs `--db`)
 * @property {Hold} floorHold the same, storing each held stream's next event before it is written
 * @property {LatencyAndRate} keeping the durable floor keeping what hangar keeps beside the events too: each run's checkpoints and its session-protocol log (`--keep`)
 * @property {Hold} keepingHold the same, for each held run's step
 * @property {import('./baseline-server.mjs').Kept} keptNext what a held run's step kept beside its event
 */

/**
 * A new thread's id.
 * @param {string} url
 * @param {http.Agent} agent
 * @returns {Promise<string>}
 */
const newThread = async (url, agent) => (await json(`${url}/threads`, { method: 'POST', headers: JSON_HEADERS, body: {}, agent }, 200)).thread_id

/**
 * One run from a fresh thread; the thread's creation is not timed.
 * @param {string} url
 * @param {http.Agent} agent
 * @param {number} [expectedEvents] the run fails when it has another number of events
 */
async function oneRun(url, agent, expectedEvents) {
  const threadId = await newThread(url, agent)
  const stream = await openStream(`${url}/threads/${threadId}/runs/stream`, RUN_BODY('agent'), { headers: HEADERS, agent }).done
  const ok = stream.status === 200 && stream.ended && !stream.error && (expectedEvents === undefined || stream.events.length === expectedEvents)
  return { ok, firstByteMs: stream.firstByteAt - stream.sentAt, endMs: stream.endAt - stream.sentAt, stream, threadId }
}

/**
 * What hangar keeps of a thread beyond its runs' events, as its API shows it: each checkpoint (the
 * size of its entry in `POST /threads/{id}/history`: state, next, tasks, metadata, ids) and each
 * entry of the thread's session-protocol log (replayed to a subscriber of every channel: the size
 * of each frame).
 * @param {string} url
 * @param {string} threadId
 * @param {http.Agent} agent
 * @returns {Promise<import('./baseline-server.mjs').Kept>}
 */
async function keptOf(url, threadId, agent) {
  /** @type {unknown[]} */
  const history = await json(`${url}/threads/${threadId}/history`, { method: 'POST', headers: JSON_HEADERS, body: { limit: 1000 }, agent }, 200)
  const log = openStream(`${url}/threads/${threadId}/stream/events`, { channels: CHANNELS }, { headers: HEADERS, agent })
  while (log.events.length === 0 && !log.endAt && performance.now() - log.sentAt < 10_000) await sleep(5)
  await sleep(300) // the whole replay
  log.close()
  await log.done
  if (log.events.length === 0) throw new Error(`probe: thread ${threadId} replayed no session-protocol events`)
  return { checkpoints: history.map((c) => JSON.stringify(c).length).reverse(), log: log.events.map((e) => e.bytes) }
}

/**
 * What hangar writes for one agent run, so the baseline can write the same sizes.
 * @param {string} url
 */
async function probeShape(url) {
  const agent = new http.Agent({ keepAlive: true })
  const threadBody = await json(`${url}/threads`, { method: 'POST', headers: JSON_HEADERS, body: {}, agent }, 200)
  const { stream, threadId } = await oneRun(url, agent)
  if (stream.status !== 200 || stream.events.length === 0) throw new Error(`probe run failed: ${stream.status} ${stream.error ?? ''}`)
  const kept = await keptOf(url, threadId, agent)
  agent.destroy()
  return { thread: JSON.stringify(threadBody).length, frames: stream.events.map(({ event, bytes }) => ({ event, bytes })), kept }
}

/**
 * Latency of `runs` runs one at a time, then runs per second with 20 clients for `seconds`.
 * @param {string} url
 * @param {Settings & { expectedEvents: number }} settings
 */
async function latencyAndRate(url, { runs, warmup, seconds, expectedEvents }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  try {
    for (let i = 0; i < warmup; i++) await oneRun(url, agent, expectedEvents)
    const samples = []
    for (let i = 0; i < runs; i++) samples.push(await oneRun(url, agent, expectedEvents))
    // Runs per second with 20 clients, each doing: new thread, stream the run to its end.
    let completed = 0
    let failed = 0
    const until = performance.now() + seconds * 1000
    const started = performance.now()
    await Promise.all(Array.from({ length: 20 }, async () => {
      while (performance.now() < until) {
        try {
          const run = await oneRun(url, agent, expectedEvents)
          if (run.ok) completed++
          else failed++
        } catch {
          failed++
        }
      }
    }))
    const elapsed = (performance.now() - started) / 1000
    return {
      firstByte: median(samples.map((s) => s.firstByteMs)),
      firstByteP99: percentile(samples.map((s) => s.firstByteMs), 99),
      end: median(samples.map((s) => s.endMs)),
      endP99: percentile(samples.map((s) => s.endMs), 99),
      latencyErrors: samples.filter((s) => !s.ok).length,
      runsPerSecond: completed / elapsed,
      rateErrors: failed,
      events: samples[0]?.stream.events.length,
      bytes: samples[0]?.stream.bytes,
    }
  } finally {
    agent.destroy()
  }
}

/**
 * Opens `n` pipeline streams (hangar's clock frozen: each waits in its first node), counts
 * heartbeats for a while, measures RSS, then moves the clock one second and times how long the
 * next event takes to reach every stream.
 * @param {{ url: string, pid: number }} server
 * @param {Settings} settings
 */
async function holdStreams(server, { n, heartbeatMs, watchMs }) {
  const { url, pid } = server
  const control = new http.Agent({ keepAlive: true, maxSockets: 32 })
  const streamsAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  const idle = memoryOf(pid)
  await json(`${url}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { action: 'freeze' }, agent: control }, 200)
  const threads = await pool(n, 20, () => newThread(url, control))

  // Each stream is open once its first two events (metadata and the input's values) arrived.
  /** @type {import('./sse-client.mjs').Stream[]} */
  const streams = []
  const openStarted = performance.now()
  await pool(n, 50, (i) => /** @type {Promise<void>} */ (new Promise((resolve) => {
    const stream = openStream(`${url}/threads/${threads[i]}/runs/stream`, RUN_BODY('pipeline'), {
      headers: HEADERS,
      agent: streamsAgent,
      onFrame: (s) => s.events.length >= 2 && resolve(),
    })
    stream.done.then(() => resolve())
    streams.push(stream)
  })))
  const openSeconds = (performance.now() - openStarted) / 1000
  const held = streams.map((s) => s.events.length)

  // Heartbeats over a window of a few intervals.
  for (const s of streams) s.heartbeats = 0
  await sleep(watchMs)
  const heartbeats = streams.map((s) => s.heartbeats)
  const held_ = memoryOf(pid)

  // One event to all: the clock moves, every run leaves its first node and emits.
  const latencies = await nextEventToAll(streams, () => json(`${url}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { action: 'advance', ms: heartbeatMs }, agent: control }, 200))
  await sleep(200)
  const after = memoryOf(pid)

  const errors = streams.filter((s) => s.error || s.ended || (s.status !== 0 && s.status !== 200)).length + held.filter((c) => c < 2).length
  for (const s of streams) s.close()
  await Promise.all(streams.map((s) => s.done))
  control.destroy()
  streamsAgent.destroy()
  return {
    n,
    openSeconds,
    idleRssKiB: idle.rssKiB,
    heldRssKiB: held_.rssKiB,
    afterEventRssKiB: after.rssKiB,
    peakKiB: after.peakKiB,
    heartbeatsMin: Math.min(...heartbeats),
    heartbeatsMedian: median(heartbeats),
    watchMs,
    delivered: latencies.length,
    eventP50: percentile(latencies, 50),
    eventP99: percentile(latencies, 99),
    eventMax: Math.max(...latencies),
    errors,
    missingHeartbeats: heartbeats.filter((h) => h === 0).length,
  }
}

/**
 * How long after `move()` is called each of `streams` receives its next event (ms; streams that
 * end instead, or get nothing within 30 s, are left out).
 * @param {import('./sse-client.mjs').Stream[]} streams
 * @param {() => Promise<unknown>} move
 */
async function nextEventToAll(streams, move) {
  const before = streams.map((s) => s.events.length)
  const arrived = new Array(streams.length).fill(NaN)
  /** @type {Promise<void>} */
  const allArrived = new Promise((resolve) => {
    let remaining = streams.length
    streams.forEach((s, i) => {
      const check = () => {
        if (!Number.isNaN(arrived[i])) return
        if (s.events.length > before[i]) {
          arrived[i] = s.events[before[i]].at
          if (--remaining === 0) resolve()
        } else if (s.endAt) {
          if (--remaining === 0) resolve()
        } else {
          setTimeout(check, 1)
        }
      }
      check()
    })
  })
  const movedAt = performance.now()
  await move()
  await Promise.race([allArrived, sleep(30_000)])
  return arrived.filter((at) => !Number.isNaN(at)).map((at) => at - movedAt)
}

/**
 * `n` streams joined to one `pipeline` run (`GET /threads/{id}/runs/{run_id}/stream`, hangar's
 * clock frozen): how long one event of that run takes to reach all of them once the clock moves.
 * This is one event fanned out to `n` streams (the held streams above are `n` runs, each with its
 * own event); the bare app's figure to compare with is the same, one frame written to `n` streams.
 * @param {string} url
 * @param {Settings} settings
 */
async function joinStreams(url, { n, heartbeatMs }) {
  const control = new http.Agent({ keepAlive: true, maxSockets: 32 })
  const streamsAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  await json(`${url}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { action: 'freeze' }, agent: control }, 200)
  const threadId = await newThread(url, control)
  const run = await json(`${url}/threads/${threadId}/runs`, { method: 'POST', headers: JSON_HEADERS, body: RUN_BODY('pipeline'), agent: control }, 200)
  /** @type {import('./sse-client.mjs').Stream[]} */
  const streams = []
  await pool(n, 50, () => /** @type {Promise<void>} */ (new Promise((resolve) => {
    const stream = openStream(`${url}/threads/${threadId}/runs/${run.run_id}/stream`, undefined, {
      method: 'GET', headers: HEADERS, agent: streamsAgent, onFrame: (s) => s.events.length >= 2 && resolve(),
    })
    stream.done.then(() => resolve())
    streams.push(stream)
  })))
  const latencies = await nextEventToAll(streams, () => json(`${url}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { action: 'advance', ms: heartbeatMs }, agent: control }, 200))
  const errors = streams.filter((s) => s.error || (s.status !== 0 && s.status !== 200)).length
  for (const s of streams) s.close()
  await Promise.all(streams.map((s) => s.done))
  control.destroy()
  streamsAgent.destroy()
  return { n, delivered: latencies.length, eventP50: percentile(latencies, 50), eventP99: percentile(latencies, 99), eventMax: Math.max(...latencies), errors }
}

/**
 * What hangar writes when a held pipeline run's stream opens, and the next frame once the clock moves.
 * @param {string} url
 */
async function holdShape(url) {
  const agent = new http.Agent({ keepAlive: true })
  await json(`${url}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { action: 'freeze' }, agent }, 200)
  const threadId = await newThread(url, agent)
  const stream = openStream(`${url}/threads/${threadId}/runs/stream`, RUN_BODY('pipeline'), { headers: HEADERS, agent })
  while (stream.events.length < 2 && !stream.endAt) await sleep(5)
  await sleep(100)
  const hold = stream.events.map(({ event, bytes }) => ({ event, bytes }))
  const before = await keptOf(url, threadId, agent)
  await json(`${url}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { action: 'advance', ms: 1000 }, agent }, 200)
  while (stream.events.length <= hold.length && !stream.endAt) await sleep(5)
  const next = stream.events[hold.length]
  const after = await keptOf(url, threadId, agent)
  stream.close()
  await stream.done
  agent.destroy()
  // What the step kept: the checkpoints and log entries that were not there before the clock moved.
  const keptNext = { checkpoints: after.checkpoints.slice(before.checkpoints.length), log: after.log.slice(before.log.length) }
  return { hold, next: { event: next.event, bytes: next.bytes }, keptNext }
}

/**
 * @param {{ quick?: boolean, log?: (line: string) => void }} [options]
 * @returns {Promise<StreamsResult>}
 */
export async function streams({ quick = QUICK, log = console.error } = {}) {
  /** @type {Settings} */
  const settings = { runs: quick ? 20 : 200, warmup: quick ? 5 : 20, seconds: quick ? 2 : 10, n: 1000, heartbeatMs: 1000, watchMs: quick ? 2500 : 5000 }

  // 1 and 2: latency and rate.
  let hangar = await startHangar()
  let shape, hangarFigures
  try {
    shape = await probeShape(hangar.url)
    log(`  streams: latency and runs/s, hangar ${hangar.url} …`)
    hangarFigures = { ...await latencyAndRate(hangar.url, { ...settings, expectedEvents: shape.frames.length }), rssKiB: memoryOf(hangar.pid).rssKiB }
  } finally {
    await hangar.stop()
  }
  let bare = await startBaseline(shape)
  let bareFigures
  try {
    log(`  streams: latency and runs/s, bare ${bare.url} …`)
    bareFigures = await latencyAndRate(bare.url, { ...settings, expectedEvents: shape.frames.length })
  } finally {
    await bare.stop()
  }
  // The durable floor, in memory as hangar is here.
  let floor = await startBaseline(shape, ['--db', ':memory:'])
  let floorFigures
  try {
    log(`  streams: latency and runs/s, bare storing its runs ${floor.url} …`)
    floorFigures = await latencyAndRate(floor.url, { ...settings, expectedEvents: shape.frames.length })
  } finally {
    await floor.stop()
  }
  // The floor that also keeps what hangar's history, forks and late subscribers read: the checkpoints and the session-protocol log.
  floor = await startBaseline(shape, ['--db', ':memory:', '--keep'])
  let keepingFigures
  try {
    log(`  streams: latency and runs/s, bare storing its runs, their checkpoints and log ${floor.url} …`)
    keepingFigures = await latencyAndRate(floor.url, { ...settings, expectedEvents: shape.frames.length })
  } finally {
    await floor.stop()
  }

  // 3: 1,000 open streams with heartbeats.
  hangar = await startHangar({ extra: ['--heartbeat-ms', String(settings.heartbeatMs)] })
  let holdShapeOf, hangarHold, hangarJoin
  try {
    holdShapeOf = await holdShape(hangar.url)
    log(`  streams: ${settings.n} open streams, hangar ${hangar.url} …`)
    const held = await holdStreams(hangar, settings)
    hangarHold = { ...held, warnings: [...new Set(hangar.stderr().split('\n').filter((line) => /warning/i.test(line)))] }
  } finally {
    await hangar.stop()
  }
  // A hangar of its own: the held runs above go on after their streams close, and would step too.
  hangar = await startHangar({ extra: ['--heartbeat-ms', String(settings.heartbeatMs)] })
  try {
    log(`  streams: ${settings.n} streams joined to one run, hangar ${hangar.url} …`)
    hangarJoin = await joinStreams(hangar.url, settings)
  } finally {
    await hangar.stop()
  }
  bare = await startBaseline({ ...shape, ...holdShapeOf }, ['--heartbeat-ms', String(settings.heartbeatMs)])
  let bareHold
  try {
    log(`  streams: ${settings.n} open streams, bare ${bare.url} …`)
    bareHold = await holdStreams(bare, settings)
  } finally {
    await bare.stop()
  }
  floor = await startBaseline({ ...shape, ...holdShapeOf }, ['--heartbeat-ms', String(settings.heartbeatMs), '--db', ':memory:'])
  let floorHold
  try {
    log(`  streams: ${settings.n} open streams, bare storing its runs ${floor.url} …`)
    floorHold = await holdStreams(floor, settings)
  } finally {
    await floor.stop()
  }
  floor = await startBaseline({ ...shape, ...holdShapeOf }, ['--heartbeat-ms', String(settings.heartbeatMs), '--db', ':memory:', '--keep'])
  let keepingHold
  try {
    log(`  streams: ${settings.n} open streams, bare storing its runs, their checkpoints and log ${floor.url} …`)
    keepingHold = await holdStreams(floor, settings)
  } finally {
    await floor.stop()
  }
  return {
    settings, hangar: hangarFigures, bare: bareFigures, shape, hangarHold, bareHold, hangarJoin: /** @type {Awaited<ReturnType<typeof joinStreams>>} */ (hangarJoin),
    floor: floorFigures, floorHold, keeping: keepingFigures, keepingHold, keptNext: holdShapeOf.keptNext,
  }
}

/** @param {StreamsResult} r */
export function streamsTable(r) {
  const h = r.hangar
  const b = r.bare
  const hh = r.hangarHold
  const bh = r.bareHold
  return textTable(['figure', 'hangar', 'bare', 'ratio h/b', 'target'], [
    ['stream: first byte, median ms', fmt(h.firstByte), fmt(b.firstByte), fmt(h.firstByte / b.firstByte), ''],
    ['stream: end, median ms (p99)', `${fmt(h.end)} (${fmt(h.endP99)})`, `${fmt(b.end)} (${fmt(b.endP99)})`, fmt(h.end / b.end), ''],
    ['runs/s, 20 clients', fmt(h.runsPerSecond), fmt(b.runsPerSecond), fmt(h.runsPerSecond / b.runsPerSecond), ''],
    ['  durable floor (bare storing its runs): runs/s', '', fmt(r.floor.runsPerSecond), fmt(r.floor.runsPerSecond / b.runsPerSecond), ''],
    ['  the same, keeping checkpoints and the log too: runs/s', '', fmt(r.keeping.runsPerSecond), fmt(r.keeping.runsPerSecond / b.runsPerSecond), ''],
    ['errors (latency, runs/s)', `${h.latencyErrors}, ${h.rateErrors}`, `${b.latencyErrors}, ${b.rateErrors}`, '', '0'],
    [`${hh.n} streams: RSS MiB`, fmt(mib(hh.heldRssKiB)), fmt(mib(bh.heldRssKiB)), fmt(hh.heldRssKiB / bh.heldRssKiB), '< 300 MiB'],
    [`${hh.n} streams: event to all, p50/p99/max ms`, `${fmt(hh.eventP50)}/${fmt(hh.eventP99)}/${fmt(hh.eventMax)}`, `${fmt(bh.eventP50)}/${fmt(bh.eventP99)}/${fmt(bh.eventMax)}`, fmt(hh.eventMax / bh.eventMax), ''],
    ['  durable floor (bare storing each event first): p50/p99/max ms', '', `${fmt(r.floorHold.eventP50)}/${fmt(r.floorHold.eventP99)}/${fmt(r.floorHold.eventMax)}`, fmt(r.floorHold.eventMax / bh.eventMax), ''],
    ['  the same, keeping the step\'s checkpoint and log too: p50/p99/max ms', '', `${fmt(r.keepingHold.eventP50)}/${fmt(r.keepingHold.eventP99)}/${fmt(r.keepingHold.eventMax)}`, fmt(r.keepingHold.eventMax / bh.eventMax), ''],
    [`${r.hangarJoin.n} streams joined to one run: its event to all, p50/p99/max ms (bare: as above)`, `${fmt(r.hangarJoin.eventP50)}/${fmt(r.hangarJoin.eventP99)}/${fmt(r.hangarJoin.eventMax)}`, `${fmt(bh.eventP50)}/${fmt(bh.eventP99)}/${fmt(bh.eventMax)}`, fmt(r.hangarJoin.eventMax / bh.eventMax), ''],
    [`${hh.n} streams: heartbeats in ${hh.watchMs} ms, min/median`, `${hh.heartbeatsMin}/${hh.heartbeatsMedian}`, `${bh.heartbeatsMin}/${bh.heartbeatsMedian}`, '', ''],
    [`${hh.n} streams: errors`, hh.errors, bh.errors, '', '0'],
  ])
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ensureBuilt } = await import('./lib.mjs')
  console.error(ensureBuilt())
  const r = await streams()
  console.log(streamsTable(r))
  console.log(JSON.stringify(r, null, 1))
}
