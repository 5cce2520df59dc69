// What every benchmark shares: the build check, spawning a server the way users run it and reading
// its ready line, RSS of a child, a small HTTP client, statistics and the machine's description.

import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, statSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
/**
 * The checkout whose `dist/` is measured: this one, or BENCH_HANGAR_ROOT (another checkout, built
 * by you: to compare a change against this one with the same benchmarks).
 */
export const HANGAR_ROOT = process.env.BENCH_HANGAR_ROOT ?? ROOT
export const HANGAR = join(HANGAR_ROOT, 'dist', 'server.js')
export const BASELINE = join(ROOT, 'bench', 'baseline-server.mjs')

/** The JSON ready line of hangar (`"msg":"hangar listening on http://…"`), and the baseline's like it. */
export const READY = /"msg":"(?:hangar|baseline) listening on (http:\/\/[^"]+)"/

export const API_KEY = 'bench'
export const JSON_HEADERS = { 'x-api-key': API_KEY, 'content-type': 'application/json' }

/** `--quick` on the command line or BENCH_QUICK=1 in the environment. */
export const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1'

/**
 * A server process a benchmark started, once it is ready.
 * @typedef {object} Server
 * @property {string} url its base URL, `http://127.0.0.1:<port>`
 * @property {number} pid
 * @property {import('node:child_process').ChildProcess} child
 * @property {number} spawnedAt performance.now() at the spawn
 * @property {number} readyAt performance.now() when it was seen ready
 * @property {() => string} stderr what it wrote to stderr so far (the first 64 KiB)
 * @property {() => Promise<number | NodeJS.Signals | null>} stop see stopChild
 */

// ---------------------------------------------------------------------------------------------
// Build

/** @param {string} dir */
function newestMtime(dir) {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

/**
 * Runs `npm run build` unless dist/server.js is newer than every file of src/ and the tsconfigs.
 * @param {{ force?: boolean }} [options]
 * @returns {string} what it did
 */
export function ensureBuilt({ force = false } = {}) {
  if (HANGAR_ROOT !== ROOT) return `measuring ${HANGAR_ROOT}/dist as it is (BENCH_HANGAR_ROOT)`
  let built = 0
  try {
    built = statSync(HANGAR).mtimeMs
  } catch {
    // not built yet: 0 is older than any source
  }
  const sources = Math.max(newestMtime(join(ROOT, 'src')), statSync(join(ROOT, 'tsconfig.build.json')).mtimeMs, statSync(join(ROOT, 'tsconfig.json')).mtimeMs)
  if (!force && built > sources) return 'dist is fresh'
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
  if (result.status !== 0) throw new Error('npm run build failed')
  return 'built with npm run build'
}

// ---------------------------------------------------------------------------------------------
// Servers

/**
 * A temporary directory for a file database; removed by the returned `remove()`.
 * @returns {{ dir: string, remove: () => void }}
 */
export function tempDir(prefix = 'hangar-bench-') {
  const dir = mkdtempSync(join(os.tmpdir(), prefix))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Spawns `node <script> ...args` and resolves once its JSON ready line names the URL, or, given
 * `readyUrl`, once that URL answers `GET /ok` with 200. Stderr is kept (and shown if the process
 * fails to start); stdout is drained.
 * @param {string} script
 * @param {string[]} [args]
 * @param {{ nodeArgs?: string[], env?: Record<string, string>, timeoutMs?: number, readyUrl?: string, cwd?: string }} [options]
 * @returns {Promise<Server>}
 */
export function startServer(script, args = [], { nodeArgs = [], env = {}, timeoutMs = 30_000, readyUrl, cwd = ROOT } = {}) {
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    if (stderr.length < 65_536) stderr += chunk
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`not ready after ${timeoutMs} ms`)), timeoutMs)
    /** @param {Error} error */
    const fail = (error) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${script} ${args.join(' ')}: ${error.message}\n${stderr}${stdout}`))
    }
    child.once('exit', (code, signal) => fail(new Error(`exited (${code ?? signal}) before it was ready`)))
    child.once('error', fail)
    let settled = false
    /** @param {string} url */
    const ready = (url) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.removeAllListeners('exit')
      // A process that printed its ready line or answered has started: it has a pid.
      resolve({ url, pid: /** @type {number} */ (child.pid), child, spawnedAt, readyAt: performance.now(), stderr: () => stderr, stop: () => stopChild(child) })
    }
    child.stdout.setEncoding('utf8').on('data', function onData(chunk) {
      if (stdout.length < 65_536) stdout += chunk // later log lines (warnings) are read and dropped
      const match = readyUrl === undefined && READY.exec(stdout)
      if (match) ready(match[1])
    })
    if (readyUrl !== undefined) {
      pollOk(readyUrl, { timeoutMs, isAlive: () => child.exitCode === null && child.signalCode === null }).then(() => ready(readyUrl), () => {})
    }
  })
}

/**
 * SIGTERM, then SIGKILL if it has not exited after `graceMs`. Resolves with the exit code or signal.
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} [graceMs]
 * @returns {Promise<number | NodeJS.Signals | null>}
 */
export function stopChild(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode)
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      resolve(code ?? signal)
    })
    child.kill('SIGTERM')
  })
}

/**
 * hangar as users start it, with the settings a benchmark needs. Its ready line is logged at level
 * info, so at `info` (or more) it is started with `--port 0` and its URL read from that line
 * (`--log-format json`); at a quieter level the line never comes, so it gets a free port picked
 * here and is ready when `GET /ok` answers 200.
 * @param {{ db?: string, logLevel?: string, extra?: string[], nodeArgs?: string[] }} [options]
 * @returns {Promise<Server>}
 */
export async function startHangar({ db = ':memory:', logLevel = 'warn', extra = [], nodeArgs = [] } = {}) {
  const args = ['--db', db, '--log-level', logLevel, '--log-format', 'json', ...extra]
  // Its working directory is its checkout: the default fixtures are ./fixtures.
  if (['info', 'debug', 'trace'].includes(logLevel)) return startServer(HANGAR, ['--port', '0', ...args], { nodeArgs, cwd: HANGAR_ROOT })
  const port = await freePort()
  return startServer(HANGAR, ['--port', String(port), ...args], { nodeArgs, cwd: HANGAR_ROOT, readyUrl: `http://127.0.0.1:${port}` })
}

/**
 * A port nobody listens on right now (the kernel's pick for port 0).
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      // Listening on a TCP port, its address is an AddressInfo (a string only for a pipe or socket).
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
      server.close(() => resolve(port))
    })
  })
}

/**
 * Polls `GET <url>/ok` as fast as it can until it answers 200; resolves with performance.now() of that answer.
 * @param {string} url
 * @param {{ timeoutMs?: number, isAlive?: () => boolean }} [options]
 * @returns {Promise<number>}
 */
export async function pollOk(url, { timeoutMs = 30_000, isAlive = () => true } = {}) {
  const agent = new http.Agent({ keepAlive: false })
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline && isAlive()) {
    try {
      const res = await request(`${url}/ok`, { agent })
      if (res.status === 200) return performance.now()
    } catch {
      // not listening yet: poll again
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  throw new Error(`${url}/ok did not answer 200 within ${timeoutMs} ms`)
}

/**
 * The bare Fastify app; `shape` describes the payload sizes it answers with (see baseline-server.mjs).
 * With `poll`, it gets a free port and is ready when `GET /ok` answers (as hangar at level warn).
 * @param {import('./baseline-server.mjs').Shape} shape
 * @param {string[]} [extra]
 * @param {{ poll?: boolean }} [options]
 * @returns {Promise<Server>}
 */
export async function startBaseline(shape, extra = [], { poll = false } = {}) {
  const args = ['--shape', JSON.stringify(shape), ...extra]
  if (!poll) return startServer(BASELINE, ['--port', '0', ...args])
  const port = await freePort()
  return startServer(BASELINE, ['--port', String(port), ...args], { readyUrl: `http://127.0.0.1:${port}` })
}

/**
 * CPU time the process has used (user + system, all its threads), in ms, from /proc/<pid>/stat.
 * CPU per request is steadier than requests per second on a busy machine: other processes slow
 * the clock on the wall, not the work each request costs.
 * @param {number} pid
 */
export function cpuMsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // after "pid (comm) "
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS // utime, stime
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/**
 * Resident set size and its peak (VmRSS, VmHWM) of a process, in KiB, from /proc.
 * @param {number} pid
 */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  /** @param {string} name */
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssKiB: field('VmRSS'), peakKiB: field('VmHWM') }
}

// ---------------------------------------------------------------------------------------------
// HTTP

/**
 * What `request` and `json` send: `body` is sent as it is when a string, else as JSON.
 * @typedef {{ method?: string, headers?: Record<string, string>, body?: unknown, agent?: http.Agent }} RequestOptions
 */

/**
 * One request; resolves with status, headers and the body as text.
 * @param {string} url
 * @param {RequestOptions} [options]
 * @returns {Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string }>}
 */
export function request(url, { method = 'GET', headers = {}, body, agent } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    const req = http.request(url, { method, headers: payload === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(payload) }, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/**
 * A request whose answer must have `status` (any 2xx when not given); resolves with the parsed JSON body.
 * @param {string} url
 * @param {RequestOptions} [options]
 * @param {number} [status]
 * @returns {Promise<any>} the parsed body, as the server wrote it (undefined when empty)
 */
export async function json(url, options = {}, status = undefined) {
  const res = await request(url, options)
  const ok = status === undefined ? res.status >= 200 && res.status < 300 : res.status === status
  if (!ok) throw new Error(`${options.method ?? 'GET'} ${url}: ${res.status} ${res.body.slice(0, 300)}`)
  return res.body === '' ? undefined : JSON.parse(res.body)
}

/**
 * Runs `task(i)` for i in [0, n) with at most `concurrency` at a time; resolves with the results in order.
 * @template T
 * @param {number} n
 * @param {number} concurrency
 * @param {(i: number) => Promise<T>} task
 * @returns {Promise<T[]>}
 */
export async function pool(n, concurrency, task) {
  /** @type {T[]} */
  const results = new Array(n)
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      results[i] = await task(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, worker))
  return results
}

/** @param {number} ms @returns {Promise<void>} */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------
// hangar's bodies (shared by the benchmarks that need valid requests)

/** @param {string} name */
export const DEPLOYMENT_BODY = (name) => ({
  name,
  source: 'external_docker',
  source_config: { deployment_type: 'dev' },
  source_revision_config: { image_uri: 'docker.io/acme/agent:1' },
  secrets: [],
})

export const RUN_BODY = (assistant = 'agent') => ({
  assistant_id: assistant,
  input: { messages: [{ role: 'user', content: 'hello world' }] },
})

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

/**
 * The p-th percentile (0–100) of `values`, interpolated between the two nearest ranks; NaN for none.
 * @param {number[]} values
 * @param {number} p
 */
export function percentile(values, p) {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (p / 100) * (sorted.length - 1)
  const lo = Math.floor(rank)
  const hi = Math.ceil(rank)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo)
}

/** @param {number[]} values */
export const median = (values) => percentile(values, 50)

/**
 * A number with a sensible number of digits; 'n/a' for none.
 * @param {number | undefined | null} value
 * @param {number} [digits]
 */
export function fmt(value, digits) {
  if (value === undefined || value === null || Number.isNaN(value)) return 'n/a'
  if (digits !== undefined) return value.toFixed(digits)
  const abs = Math.abs(value)
  return abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : value.toFixed(2)
}

/** @param {number} kib */
export const mib = (kib) => kib / 1024

/** CPU, cores, RAM, Node, OS, and the load when the run started (the figures are only as quiet as the machine). */
export function machine() {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model?.trim() ?? 'unknown',
    cores: cpus.length,
    ramGiB: os.totalmem() / 1024 ** 3,
    node: process.version,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    loadavg: os.loadavg(),
  }
}

/**
 * How fast this machine runs JavaScript right now: the median of 7 timings of one fixed piece of
 * work (a ~1.9 KB object through JSON.stringify and JSON.parse 2,000 times), in ms. Two runs on
 * machines that report the same CPU can differ by several times (hangar's figures and, less, its
 * ratios with them); this figure, taken at the start and the end of each run, says by how much.
 * @returns {number}
 */
export function referenceWorkMs() {
  const item = (/** @type {number} */ i) => ({ id: `item-${i}`, name: `name ${i}`, tags: ['a', 'b', 'c'], value: i * 1.5, nested: { on: i % 2 === 0, at: '2026-11-27T00:00:00Z' } })
  const doc = { kind: 'reference', items: Array.from({ length: 16 }, (_, i) => item(i)) }
  const once = () => {
    const start = performance.now()
    let size = 0
    for (let i = 0; i < 2000; i++) size += JSON.parse(JSON.stringify(doc)).items.length
    if (size !== 2000 * 16) throw new Error('reference work: wrong result')
    return performance.now() - start
  }
  once() // warm: the JIT compiles before the timed rounds
  return median(Array.from({ length: 7 }, once))
}

/**
 * One cell of a table: printed with String().
 * @typedef {string | number | undefined} Cell
 */

/**
 * Prints an aligned text table; `rows` are arrays of cells.
 * @param {string[]} header
 * @param {Cell[][]} rows
 */
export function textTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  /** @param {Cell[]} cells */
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ')
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

/**
 * The same table in markdown, `|` escaped in cells.
 * @param {string[]} header
 * @param {Cell[][]} rows
 */
export function markdownTable(header, rows) {
  /** @param {Cell} c */
  const esc = (c) => String(c).replaceAll('|', '\\|')
  return [`| ${header.map(esc).join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n')
}

// ---------------------------------------------------------------------------------------------
// Load (autocannon)

/**
 * One autocannon run against `url` (its options: connections, duration or amount, method, headers,
 * body, requests…). Answers the figures the benchmarks report; req/s is requests completed divided
 * by the run's wall time (autocannon's own average is of per-second samples, coarse for short runs).
 * Given the server's `pid`, also the server's CPU time per request.
 * @param {string} url
 * @param {Omit<import('autocannon').Options, 'url'>} options
 * @param {number} [pid]
 */
export async function load(url, options, pid) {
  const { default: autocannon } = await import('autocannon')
  const cpuBefore = pid === undefined ? NaN : cpuMsOf(pid)
  const result = await autocannon({ url, connections: 50, ...options })
  const cpuMs = pid === undefined ? NaN : cpuMsOf(pid) - cpuBefore
  const total = result.requests.total
  return {
    rps: total / result.duration,
    total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerResponse: total > 0 ? result.throughput.total / total : NaN,
    duration: result.duration,
    /** The server's CPU time per request (given its pid), in µs. */
    cpuUsPerRequest: total > 0 ? (cpuMs * 1000) / total : NaN,
  }
}
