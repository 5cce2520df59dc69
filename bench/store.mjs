// The agent server's store (long-term memory): `PUT /store/items` and `POST /store/items/search`
// (by a filter, and by a query) with 1,000 items seeded, autocannon, 50 connections, against the
// bare Fastify app answering the same paths with fixed JSON of the same size. hangar runs with a
// temporary file database and `--log-level warn`, as in throughput.mjs.
//   node bench/store.mjs [--quick]

import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { JSON_HEADERS, QUICK, fmt, json, load, pool, startBaseline, startHangar, tempDir, textTable } from './lib.mjs'

/** Items seeded before the measurements, all under one namespace (the searches scan them all). */
export const SEEDED = 1000
const NAMESPACE = ['bench', 'memories']
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima']

/**
 * The i-th item's value: a few fields to filter on and a sentence a query can rank.
 * @param {number} i
 */
const value = (i) => ({
  kind: `kind-${i % 10}`,
  user: `user-${i % 50}`,
  importance: i % 5,
  text: `memory ${i}: ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${WORDS[(i * 11) % WORDS.length]} and some more words about the user's preferences`,
})
/** @param {number} i */
const putBody = (i) => ({ namespace: NAMESPACE, key: `item-${i % SEEDED}`, value: value(i) })

/**
 * A route measured; `body()` gives each request's body. A PUT rewrites one of the seeded items, so
 * the store keeps its size.
 * @typedef {{ key: 'put' | 'filter' | 'query', label: string, method: 'PUT' | 'POST', path: string, body: () => unknown }} Scenario
 */
let counter = 0
/** @type {Scenario[]} */
const SCENARIOS = [
  {
    key: 'filter',
    label: 'POST /store/items/search (filter)',
    method: 'POST',
    path: '/store/items/search',
    body: () => ({ namespace_prefix: ['bench'], filter: { kind: 'kind-3' }, limit: 10 }),
  },
  {
    key: 'query',
    label: 'POST /store/items/search (query)',
    method: 'POST',
    path: '/store/items/search',
    body: () => ({ namespace_prefix: ['bench'], query: 'delta echo preferences', limit: 10 }),
  },
  {
    key: 'put',
    label: 'PUT /store/items',
    method: 'PUT',
    path: '/store/items',
    body: () => putBody(++counter),
  },
]

/** @typedef {{ duration: number, warmup: number }} Settings seconds of each measurement and of the warm-up before it */

/**
 * A warm-up, then the measured run of one scenario.
 * @param {import('./lib.mjs').Server} server
 * @param {Scenario} scenario
 * @param {Settings} settings
 */
async function measure(server, scenario, { duration, warmup }) {
  /** @type {import('autocannon').Request[]} */
  const requests = [{ method: scenario.method, path: scenario.path, setupRequest: (req) => ({ ...req, body: JSON.stringify(scenario.body()) }) }]
  const base = { headers: JSON_HEADERS, connections: 50, requests }
  await load(server.url, { ...base, duration: warmup })
  return load(server.url, { ...base, duration }, server.pid)
}

/** @param {{ quick?: boolean, log?: (line: string) => void }} [options] */
export async function store({ quick = QUICK, log = console.error } = {}) {
  /** @type {Settings} */
  const settings = { duration: quick ? 2 : 10, warmup: quick ? 0.5 : 2 }
  const tmp = tempDir()
  /** @type {Partial<Record<Scenario['key'], Awaited<ReturnType<typeof load>>>>} */
  const hangarResults = {}
  const shape = { filter: 0, query: 0 }
  const hangar = await startHangar({ db: join(tmp.dir, 'hangar.db') }).catch((error) => {
    tmp.remove()
    throw error
  })
  try {
    await pool(SEEDED, 20, (i) => json(`${hangar.url}/store/items`, { method: 'PUT', headers: JSON_HEADERS, body: putBody(i) }, 204))
    for (const key of /** @type {const} */ (['filter', 'query'])) {
      const scenario = /** @type {Scenario} */ (SCENARIOS.find((s) => s.key === key))
      const answer = await json(`${hangar.url}${scenario.path}`, { method: 'POST', headers: JSON_HEADERS, body: scenario.body() }, 200)
      if (answer.items.length !== 10) throw new Error(`the search (${key}) answered ${answer.items.length} items, not 10`)
      shape[key] = JSON.stringify(answer).length
    }
    for (const scenario of SCENARIOS) {
      log(`  ${scenario.label}: hangar ${hangar.url} …`)
      hangarResults[scenario.key] = await measure(hangar, scenario, settings)
    }
  } finally {
    await hangar.stop()
    tmp.remove()
  }
  /** @type {typeof hangarResults} */
  const bareResults = {}
  const bare = await startBaseline({ store: shape })
  try {
    for (const scenario of SCENARIOS) {
      log(`  ${scenario.label}: bare ${bare.url} …`)
      bareResults[scenario.key] = await measure(bare, scenario, settings)
    }
  } finally {
    await bare.stop()
  }
  const rows = SCENARIOS.map((scenario) => {
    const h = /** @type {Awaited<ReturnType<typeof load>>} */ (hangarResults[scenario.key])
    const b = /** @type {Awaited<ReturnType<typeof load>>} */ (bareResults[scenario.key])
    return {
      key: scenario.key,
      label: scenario.label,
      hangar: h,
      bare: b,
      ratio: h.rps / b.rps,
      cpuRatio: b.cpuUsPerRequest / h.cpuUsPerRequest,
      answerBytes: scenario.key === 'put' ? 0 : shape[scenario.key],
    }
  })
  return { settings, seeded: SEEDED, rows }
}

/** @typedef {Awaited<ReturnType<typeof store>>} StoreResult */

/** @param {StoreResult} result */
export function storeTable({ rows }) {
  return textTable(
    ['route', 'answer B', 'hangar req/s', 'bare req/s', 'ratio', 'server CPU µs/req h/b', 'hangar p50/p99 ms', 'bare p50/p99 ms', 'non-2xx h/b', 'errors h/b'],
    rows.map((r) => [
      r.label, r.answerBytes, fmt(r.hangar.rps, 0), fmt(r.bare.rps, 0), fmt(r.ratio),
      `${fmt(r.hangar.cpuUsPerRequest, 0)}/${fmt(r.bare.cpuUsPerRequest, 0)}`,
      `${r.hangar.p50}/${r.hangar.p99}`, `${r.bare.p50}/${r.bare.p99}`,
      `${r.hangar.non2xx}/${r.bare.non2xx}`, `${r.hangar.errors + r.hangar.timeouts}/${r.bare.errors + r.bare.timeouts}`,
    ]),
  )
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ensureBuilt } = await import('./lib.mjs')
  console.error(ensureBuilt())
  console.log(storeTable(await store()))
}
