// Memory under sustained load: hangar's RSS after 10k mixed requests and after 100k (quick: 1k and
// 10k), in one process: the first figure is the baseline of the second. The mix, in turn on each of
// 50 connections: GET a deployment, list 20, create a deployment (they accumulate), create a thread,
// search threads, delete the thread it created.
//
// The delete keeps the number of threads flat, so the second figure measures the process and not
// more data. BENCH_MEMORY_KEEP_THREADS=1 leaves the delete out (threads accumulate, ~20k by the end).
//
// hangar runs with a temporary file database (`--db <tmp>/hangar.db`, as `npm start` keeps its
// state on disk), so RSS is the process's own memory, not the data an in-memory database would
// hold; `--log-level warn`. It is also started with `--expose-gc --import bench/gc-on-signal.mjs`:
// after each RSS reading, a full collection on SIGWINCH tells what V8's heap keeps alive (a leak
// grows it; garbage awaiting collection, which RSS includes, does not).
//   node bench/memory.mjs [--quick]

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { DEPLOYMENT_BODY, JSON_HEADERS, QUICK, fmt, json, load, memoryOf, mib, sleep, startHangar, tempDir, textTable } from './lib.mjs'

const KEEP_THREADS = process.env.BENCH_MEMORY_KEEP_THREADS === '1'

/** @typedef {{ threadId?: string }} ThreadContext what a connection remembers between its requests */

let counter = 0
const uniqueName = () => `mem-${process.pid}-${++counter}`

/**
 * autocannon's request sequence; each connection keeps its last thread's id in its context.
 * @param {string} deploymentId
 */
function mix(deploymentId) {
  /** @type {import('autocannon').Request[]} */
  const requests = [
    { method: 'GET', path: `/v2/deployments/${deploymentId}` },
    { method: 'GET', path: '/v2/deployments?limit=20' },
    { method: 'POST', path: '/v2/deployments', setupRequest: (req) => ({ ...req, body: JSON.stringify(DEPLOYMENT_BODY(uniqueName())) }) },
    {
      method: 'POST',
      path: '/threads',
      body: '{}',
      onResponse: (status, body, context) => {
        if (status === 200) /** @type {ThreadContext} */ (context).threadId = JSON.parse(body).thread_id
      },
    },
    { method: 'POST', path: '/threads/search', body: '{"limit":10}' },
  ]
  if (!KEEP_THREADS) requests.push({ method: 'DELETE', path: '/threads', setupRequest: (req, context) => ({ ...req, path: `/threads/${/** @type {ThreadContext} */ (context).threadId}`, body: undefined }) })
  return requests
}

/**
 * RSS once the process has been idle a moment (timers, GC), in KiB, with the part of it that is the
 * C heap (the `[heap]` mapping: malloc's main arena, where SQLite's page cache lives).
 * @param {number} pid
 */
async function settledMemory(pid) {
  await sleep(1000)
  return { ...memoryOf(pid), cHeapKiB: cHeapOf(pid) }
}

/**
 * The resident KiB of the process's `[heap]` mapping (/proc/<pid>/smaps).
 * @param {number} pid
 */
function cHeapOf(pid) {
  let inHeap = false
  let kib = 0
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.endsWith('[heap]')
    else if (inHeap && line.startsWith('Rss:')) kib += Number(/\d+/.exec(line)?.[0] ?? 0)
  }
  return kib
}

/** Preloaded into hangar: a full collection on SIGWINCH, and V8's heap after it on stderr. */
const GC_ON_SIGNAL = fileURLToPath(new URL('./gc-on-signal.mjs', import.meta.url))

/**
 * V8's heap after a full collection (KiB): what hangar's JavaScript keeps alive. Taken after the RSS
 * reading, which it would otherwise lower.
 * @param {{ pid: number, stderr: () => string }} hangar
 */
async function liveHeap(hangar) {
  const lines = () => hangar.stderr().split('\n').filter((line) => line.startsWith('{"benchHeap"'))
  const before = lines().length
  process.kill(hangar.pid, 'SIGWINCH')
  const deadline = performance.now() + 10_000
  while (lines().length === before) {
    if (performance.now() > deadline) throw new Error('hangar wrote no heap figure after SIGWINCH')
    await sleep(10)
  }
  return /** @type {{ benchHeap: { usedKiB: number, totalKiB: number, beforeKiB: number } }} */ (JSON.parse(lines()[before])).benchHeap
}

/** @param {{ quick?: boolean, log?: (line: string) => void }} [options] */
export async function memory({ quick = QUICK, log = console.error } = {}) {
  const first = quick ? 1_000 : 10_000
  const total = quick ? 10_000 : 100_000
  const tmp = tempDir()
  const hangar = await startHangar({ db: join(tmp.dir, 'hangar.db'), nodeArgs: ['--expose-gc', '--import', GC_ON_SIGNAL] }).catch((error) => {
    tmp.remove()
    throw error
  })
  try {
    /** @type {string[]} */
    const seeded = []
    for (let i = 0; i < 20; i++) seeded.push((await json(`${hangar.url}/v2/deployments`, { method: 'POST', headers: JSON_HEADERS, body: DEPLOYMENT_BODY(uniqueName()) }, 201)).id)
    const start = await settledMemory(hangar.pid)
    const requests = mix(seeded[0])
    log(`  memory: ${first} mixed requests …`)
    const a = await load(hangar.url, { headers: JSON_HEADERS, connections: 50, amount: first, requests, timeout: 60 })
    const atFirst = await settledMemory(hangar.pid)
    const heapAtFirst = await liveHeap(hangar)
    log(`  memory: ${total - first} more …`)
    const b = await load(hangar.url, { headers: JSON_HEADERS, connections: 50, amount: total - first, requests, timeout: 60 })
    const atTotal = await settledMemory(hangar.pid)
    const heapAtTotal = await liveHeap(hangar)
    return {
      first,
      total,
      startKiB: start.rssKiB,
      firstKiB: atFirst.rssKiB,
      totalKiB: atTotal.rssKiB,
      cHeapAtFirst: atFirst.cHeapKiB,
      cHeapAtTotal: atTotal.cHeapKiB,
      peakKiB: atTotal.peakKiB,
      ratio: atTotal.rssKiB / atFirst.rssKiB,
      heapAtFirst,
      heapAtTotal,
      keepThreads: KEEP_THREADS,
      firstRun: a,
      secondRun: b,
      non2xx: a.non2xx + b.non2xx,
      errors: a.errors + a.timeouts + b.errors + b.timeouts,
    }
  } finally {
    await hangar.stop()
    tmp.remove()
  }
}

/** @param {number} n */
const k = (n) => (n >= 1000 ? `${n / 1000}k` : String(n))

/** @param {Awaited<ReturnType<typeof memory>>} r */
export function memoryTable(r) {
  return textTable(['figure', `after ${k(r.first)}`, `after ${k(r.total)}`, 'ratio', 'target'], [
    ['hangar RSS MiB (idle 1 s after the load)', fmt(mib(r.firstKiB)), fmt(mib(r.totalKiB)), fmt(r.ratio), '≤ 1.2'],
    ['  RSS at start (20 deployments seeded) MiB; peak RSS MiB', fmt(mib(r.startKiB)), fmt(mib(r.peakKiB)), '', ''],
    ['  of the RSS: V8\'s heap (its size at the reading) MiB; the C heap (`[heap]`: malloc, SQLite\'s page cache) MiB', `${fmt(mib(r.heapAtFirst.beforeKiB))}; ${fmt(mib(r.cHeapAtFirst))}`, `${fmt(mib(r.heapAtTotal.beforeKiB))}; ${fmt(mib(r.cHeapAtTotal))}`, '', ''],
    ['  V8 heap after a full collection (forced after the RSS reading): live MiB (heap size)', `${fmt(mib(r.heapAtFirst.usedKiB))} (${fmt(mib(r.heapAtFirst.totalKiB))})`, `${fmt(mib(r.heapAtTotal.usedKiB))} (${fmt(mib(r.heapAtTotal.totalKiB))})`, fmt(r.heapAtTotal.usedKiB / r.heapAtFirst.usedKiB), ''],
    ['  mixed req/s during the run', fmt(r.firstRun.rps), fmt(r.secondRun.rps), fmt(r.secondRun.rps / r.firstRun.rps), ''],
    ['  p99 latency ms during the run', r.firstRun.p99, r.secondRun.p99, fmt(r.secondRun.p99 / r.firstRun.p99), ''],
    ['  non-2xx / errors', `${r.firstRun.non2xx} / ${r.firstRun.errors + r.firstRun.timeouts}`, `${r.secondRun.non2xx} / ${r.secondRun.errors + r.secondRun.timeouts}`, '', '0'],
  ])
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ensureBuilt } = await import('./lib.mjs')
  console.error(ensureBuilt())
  const r = await memory()
  console.log(memoryTable(r))
}
