// Control-plane throughput: autocannon, 50 connections, against hangar and against the bare Fastify
// route of the same answer size, each in a fresh process (temporary file database, log level warn).
//   node bench/throughput.mjs [--quick]

import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { DEPLOYMENT_BODY, JSON_HEADERS, QUICK, fmt, json, load, startBaseline, startHangar, tempDir, textTable } from './lib.mjs'

const SEEDED = 25

/**
 * A route measured: `options(ids)` is autocannon's request for it, given the seeded deployments' ids;
 * `target` is the least ratio of hangar's req/s to the bare route's. With `floor`, the bare app is
 * measured a second time writing what the route writes first to SQLite (baseline-server.mjs `--db`):
 * the most that any app answering only what is on disk reaches here. With `budgetUs`, the bare route is
 * measured again spending each of those µs of CPU more per request (baseline-server.mjs `--work-us`):
 * how much work beside the bare route's the target leaves room for on this machine.
 * @typedef {{ key: 'get' | 'list' | 'post', label: string, target: number, floor?: boolean, budgetUs?: number[], options: (ids: string[]) => import('autocannon').Request }} Scenario
 */
/** @typedef {{ duration: number, warmup: number }} Settings seconds of each measurement and of the warm-up before it */

/** Every POST, of either server, gets a name of its own: deployment names are unique per workspace. */
let counter = 0
const uniqueName = () => `bench-${process.pid}-${++counter}`

/** @type {Scenario[]} */
const SCENARIOS = [
  {
    key: 'get',
    label: 'GET /v2/deployments/{id}',
    target: 0.8,
    budgetUs: [10, 20],
    options: (ids) => ({ method: 'GET', path: `/v2/deployments/${ids[0]}` }),
  },
  {
    key: 'list',
    label: 'GET /v2/deployments?limit=20',
    target: 0.4,
    options: () => ({ method: 'GET', path: '/v2/deployments?limit=20' }),
  },
  {
    key: 'post',
    label: 'POST /v2/deployments',
    target: 0.35,
    floor: true,
    options: () => ({ method: 'POST', path: '/v2/deployments', setupRequest: (req) => ({ ...req, body: JSON.stringify(DEPLOYMENT_BODY(uniqueName())) }) }),
  },
]

/**
 * Seeds deployments and measures hangar's answers, so the baseline can answer the same number of bytes.
 * @param {string} url
 */
async function seedAndMeasure(url) {
  /** @type {string[]} */
  const ids = []
  let post = 0
  for (let i = 0; i < SEEDED; i++) {
    const res = await json(`${url}/v2/deployments`, { method: 'POST', headers: JSON_HEADERS, body: DEPLOYMENT_BODY(uniqueName()) }, 201)
    ids.push(res.id)
    post = JSON.stringify(res).length
  }
  const get = JSON.stringify(await json(`${url}/v2/deployments/${ids[0]}`, { headers: JSON_HEADERS }, 200)).length
  const list = await json(`${url}/v2/deployments?limit=20`, { headers: JSON_HEADERS }, 200)
  if (list.resources.length !== 20) throw new Error(`the list answered ${list.resources.length} deployments, not 20`)
  return { ids, shape: { get, post, list: JSON.stringify(list).length } }
}

/**
 * A warm-up, then the measured run of one scenario.
 * @param {import('./lib.mjs').Server} server
 * @param {Scenario} scenario
 * @param {string[]} ids
 * @param {Settings} settings
 */
async function measure(server, scenario, ids, { duration, warmup }) {
  const base = { headers: JSON_HEADERS, connections: 50 }
  const requests = [scenario.options(ids)]
  await load(server.url, { ...base, duration: warmup, requests })
  return load(server.url, { ...base, duration, requests }, server.pid)
}

/**
 * The bare app writing to a database file hangar made (and closed): the route's durable floor.
 * @param {Scenario} scenario
 * @param {{ ids: string[], shape: Record<string, number> }} measured
 * @param {Settings} settings
 * @param {(line: string) => void} log
 */
async function measureFloor(scenario, measured, settings, log) {
  const tmp = tempDir()
  try {
    const db = join(tmp.dir, 'floor.db')
    await (await startHangar({ db })).stop()
    const floor = await startBaseline(measured.shape, ['--db', db])
    try {
      log(`  ${scenario.label}: bare writing to SQLite ${floor.url} …`)
      return await measure(floor, scenario, measured.ids, settings)
    } finally {
      await floor.stop()
    }
  } finally {
    tmp.remove()
  }
}

/** @param {{ quick?: boolean, log?: (line: string) => void }} [options] */
export async function throughput({ quick = QUICK, log = console.error } = {}) {
  /** @type {Settings} */
  const settings = { duration: quick ? 2 : 10, warmup: quick ? 0.5 : 2 }
  const rows = []
  for (const scenario of SCENARIOS) {
    const tmp = tempDir()
    const hangar = await startHangar({ db: join(tmp.dir, 'hangar.db') }).catch((error) => {
      tmp.remove()
      throw error
    })
    let measured, hangarResult, bareResult, floorResult
    try {
      measured = await seedAndMeasure(hangar.url)
      log(`  ${scenario.label}: hangar ${hangar.url} …`)
      hangarResult = await measure(hangar, scenario, measured.ids, settings)
    } finally {
      await hangar.stop()
      tmp.remove()
    }
    const bare = await startBaseline(measured.shape)
    try {
      log(`  ${scenario.label}: bare ${bare.url} …`)
      bareResult = await measure(bare, scenario, measured.ids, settings)
    } finally {
      await bare.stop()
    }
    if (scenario.floor) floorResult = await measureFloor(scenario, measured, settings, log)
    const budget = []
    for (const workUs of scenario.budgetUs ?? []) {
      const worker = await startBaseline(measured.shape, ['--work-us', String(workUs)])
      try {
        log(`  ${scenario.label}: bare spending ${workUs} µs more per request ${worker.url} …`)
        const result = await measure(worker, scenario, measured.ids, settings)
        budget.push({ workUs, result, ratio: result.rps / bareResult.rps })
      } finally {
        await worker.stop()
      }
    }
    rows.push({
      ...scenario,
      floor: floorResult,
      floorRatio: floorResult && floorResult.rps / bareResult.rps,
      budget,
      options: undefined,
      hangar: hangarResult,
      bare: bareResult,
      ratio: hangarResult.rps / bareResult.rps,
      cpuRatio: bareResult.cpuUsPerRequest / hangarResult.cpuUsPerRequest,
      answerBytes: measured.shape[scenario.key],
    })
  }
  return { settings, rows }
}

/** @param {Awaited<ReturnType<typeof throughput>>} result */
export function throughputTable({ rows }) {
  return textTable(
    ['route', 'answer B', 'hangar req/s', 'bare req/s', 'ratio', 'target', 'server CPU µs/req h/b', 'CPU ratio b/h', 'hangar p50/p99 ms', 'bare p50/p99 ms', 'non-2xx h/b', 'errors h/b'],
    rows.map((r) => [
      r.label, r.answerBytes, fmt(r.hangar.rps, 0), fmt(r.bare.rps, 0), fmt(r.ratio), `≥ ${r.target}`,
      `${fmt(r.hangar.cpuUsPerRequest, 0)}/${fmt(r.bare.cpuUsPerRequest, 0)}`, fmt(r.cpuRatio),
      `${r.hangar.p50}/${r.hangar.p99}`, `${r.bare.p50}/${r.bare.p99}`,
      `${r.hangar.non2xx}/${r.bare.non2xx}`, `${r.hangar.errors + r.hangar.timeouts}/${r.bare.errors + r.bare.timeouts}`,
    ]),
  )
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ensureBuilt } = await import('./lib.mjs')
  console.error(ensureBuilt())
  console.log(throughputTable(await throughput()))
}
