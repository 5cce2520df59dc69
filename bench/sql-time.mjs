// Where a request's SQL time goes: each statement's calls and time per unit of work, and all of them
// against the server's CPU for the same work. Two workloads, each as the throughput benchmarks load it:
//   runs:    20 clients, each creating a thread and streaming an `agent` run on it (`--db :memory:`,
//            as bench/streams.mjs);
//   creates: POST /v2/deployments, 50 connections (a temporary file database, as bench/throughput.mjs).
// hangar is started twice for each: once plain, for its CPU per unit, and once with
// bench/sql-time-preload.mjs timing every statement (the timing itself costs ~0.1 µs a call).
//   node bench/sql-time.mjs [runs|creates] [--seconds 6] [--top 15]

import http from 'node:http'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { DEPLOYMENT_BODY, JSON_HEADERS, RUN_BODY, ROOT, cpuMsOf, ensureBuilt, fmt, json, load, startHangar, tempDir, textTable } from './lib.mjs'
import { openStream } from './sse-client.mjs'

const PRELOAD = ['--import', pathToFileURL(join(ROOT, 'bench', 'sql-time-preload.mjs')).href]

/** @typedef {{ sql: string, method: string, calls: number, ns: number }} StatementTime */
/** @typedef {{ units: number, cpuUs: number }} Work what a workload did: how many units, the server's CPU for them (µs) */
/** @typedef {{ db: string, drive: (url: string, pid: number, seconds: number, reset: () => Promise<void>) => Promise<Work>, unit: string }} Workload reset: starts the statements' sums again after the warm-up */

/** @type {Record<string, Workload>} */
export const WORKLOADS = {
  runs: {
    db: ':memory:',
    unit: 'run',
    drive: async (url, pid, seconds, reset) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 40 })
      const one = async () => {
        const { thread_id } = /** @type {{ thread_id: string }} */ (await json(`${url}/threads`, { method: 'POST', headers: JSON_HEADERS, body: {}, agent }, 200))
        await openStream(`${url}/threads/${thread_id}/runs/stream`, RUN_BODY('agent'), { headers: JSON_HEADERS, agent }).done
      }
      for (let i = 0; i < 200; i++) await one() // warm, not counted
      await reset()
      const cpu0 = cpuMsOf(pid)
      const end = performance.now() + seconds * 1000
      let units = 0
      await Promise.all(Array.from({ length: 20 }, async () => {
        while (performance.now() < end) {
          await one()
          units++
        }
      }))
      const cpuUs = (cpuMsOf(pid) - cpu0) * 1000
      agent.destroy()
      return { units, cpuUs }
    },
  },
  creates: {
    db: 'file',
    unit: 'create',
    drive: async (url, pid, seconds, reset) => {
      let n = 0
      /** @type {import('autocannon').Request[]} */
      const requests = [{ method: 'POST', path: '/v2/deployments', setupRequest: (req) => ({ ...req, body: JSON.stringify(DEPLOYMENT_BODY(`sql-time-${n++}`)) }) }]
      const options = { headers: JSON_HEADERS, requests }
      await load(url, { ...options, duration: 2 }) // warm, not counted
      await reset()
      const result = await load(url, { ...options, duration: seconds }, pid)
      if (result.non2xx > 0) throw new Error(`${result.non2xx} creates were refused`)
      return { units: result.total, cpuUs: result.cpuUsPerRequest * result.total }
    },
  },
}

/**
 * Sends SIGWINCH to a process with the preload (it writes its sums and starts again) and waits for
 * its event loop to have taken it.
 * @param {number} pid
 */
async function signal(pid) {
  process.kill(pid, 'SIGWINCH')
  await new Promise((resolve) => setTimeout(resolve, 200))
}

/**
 * Drives `workload` on a fresh hangar, with the statements timed or not.
 * @param {Workload} workload
 * @param {number} seconds
 * @param {boolean} timed
 * @returns {Promise<Work & { statements: StatementTime[] }>}
 */
async function measure(workload, seconds, timed) {
  const temp = workload.db === 'file' ? tempDir('hangar-sql-time-') : undefined
  const hangar = await startHangar({ db: temp ? join(temp.dir, 'hangar.db') : workload.db, nodeArgs: timed ? PRELOAD : [] })
  try {
    const work = await workload.drive(hangar.url, hangar.pid, seconds, () => signal(hangar.pid))
    if (!timed) return { ...work, statements: [] }
    await signal(hangar.pid)
    const lines = hangar.stderr().split('\n').filter((line) => line.startsWith('SQL-TIME '))
    const last = lines.at(-1)
    if (lines.length < 2 || last === undefined) throw new Error(`the preload did not report (stderr: ${hangar.stderr().slice(0, 500)})`)
    return { ...work, statements: JSON.parse(last.slice('SQL-TIME '.length)) }
  } finally {
    await hangar.stop()
    temp?.remove()
  }
}

/**
 * @param {{ workload?: string, seconds?: number, top?: number, log?: (line: string) => void }} [options]
 */
export async function sqlTime({ workload = 'runs', seconds = 6, top = 15, log = console.error } = {}) {
  const chosen = WORKLOADS[workload]
  if (!chosen) throw new Error(`no workload ${workload}: one of ${Object.keys(WORKLOADS).join(', ')}`)
  log(`sql-time: ${workload}, plain …`)
  const plain = await measure(chosen, seconds, false)
  log(`sql-time: ${workload}, statements timed …`)
  const timed = await measure(chosen, seconds, true)
  const perUnit = (/** @type {number} */ ns) => ns / 1000 / timed.units
  const statements = timed.statements.sort((a, b) => b.ns - a.ns)
  const sqlUs = perUnit(statements.reduce((sum, s) => sum + s.ns, 0))
  const cpuUs = plain.cpuUs / plain.units
  const rows = statements.slice(0, top).map((s) => [fmt(perUnit(s.ns), 1), fmt(s.calls / timed.units, 2), fmt(s.ns / 1000 / s.calls, 1), `${s.method} ${s.sql.slice(0, 90)}`])
  return {
    workload,
    unit: chosen.unit,
    units: { plain: plain.units, timed: timed.units },
    cpuUs,
    sqlUs,
    share: sqlUs / cpuUs,
    statements,
    table: textTable([`µs per ${chosen.unit}`, `calls per ${chosen.unit}`, 'µs per call', 'statement'], rows),
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { seconds: { type: 'string', default: '6' }, top: { type: 'string', default: '15' } } })
  console.error(ensureBuilt())
  const result = await sqlTime({ workload: positionals[0] ?? 'runs', seconds: Number(values.seconds), top: Number(values.top) })
  console.log(result.table)
  console.log(`${result.units.plain} ${result.unit}s plain, ${result.units.timed} timed: the server's CPU ${fmt(result.cpuUs)} µs per ${result.unit} (plain); its statements ${fmt(result.sqlUs)} µs (timed), ${fmt(100 * result.share, 1)}% of it`)
}
