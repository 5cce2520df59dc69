// Start-up: from spawning `node dist/server.js` to the first 200 from `GET /ok` (polled as fast as
// possible on a port picked beforehand), median of 10 (quick: 3), against the bare Fastify app
// started the same way. hangar: `--db :memory: --log-level warn`. Then where hangar's start-up goes:
// its steps timed inside the process (startup-phases.mjs), what importing each dependency costs
// alone, and a CPU profile of a real start summed by package. Also what a test suite pays per
// in-process hangar: `startHangar()` + `close()` (src/embed.ts), median of 20 (quick: 10) in one
// process after a first one; and what each test file's process pays for its first one (the import
// of dist/index.js included), median of 5 (quick: 2) fresh processes, against importing Fastify and
// starting a bare app with as many routes.
//   node bench/startup.mjs [--quick]

import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { QUICK, ROOT, fmt, median, startBaseline, startHangar, tempDir, textTable } from './lib.mjs'
import { summarize } from './cpu-profile.mjs'

const PHASES = join(ROOT, 'bench', 'startup-phases.mjs')

/** The dependencies hangar's server imports at start-up, each timed alone in a fresh process. */
/** The targets (issue 19): spawn → /ok within this many times the bare app's; one in-process hangar within this many ms. */
export const STARTUP_RATIO_TARGET = 1.5
export const EMBED_TARGET_MS = 30

const DEPENDENCIES = ['fastify', 'better-sqlite3', '@fastify/swagger', '@fastify/swagger-ui', '@sinclair/typebox', 'pino', 'close-with-grace', 'uuid']

/**
 * Runs `node ...args` to its end; resolves with its stdout and the wall time from spawn to exit.
 * @param {string[]} args
 * @returns {Promise<{ out: string, ms: number }>}
 */
function runNode(args) {
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk))
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve({ out, ms: performance.now() - started }) : reject(new Error(`node ${args.join(' ')} exited ${code}`))))
  })
}

/**
 * Spawn to ready (the first 200 from /ok), in ms, of the server `start()` starts; then stops it.
 * @param {() => Promise<import('./lib.mjs').Server>} start
 */
async function timeToOk(start) {
  const server = await start()
  const ms = server.readyAt - server.spawnedAt
  await server.stop()
  return ms
}

/**
 * Median of each step over `times` fresh processes.
 * @param {'hangar' | 'bare'} kind
 * @param {number} times
 * @returns {Promise<Record<string, number>>} ms since the process started, by step (see startup-phases.mjs)
 */
async function phases(kind, times) {
  /** @type {Record<string, number>[]} */
  const runs = []
  for (let i = 0; i < times; i++) runs.push(JSON.parse((await runNode([PHASES, kind])).out))
  const keys = Object.keys(runs[0])
  return Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k]))]))
}

/** A CPU profile of one real start (spawn, /ok answers, SIGTERM), summed by package. */
async function profileStart() {
  const tmp = tempDir('hangar-prof-')
  try {
    const server = await startHangar({ nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${tmp.dir}`, '--cpu-prof-interval=250'] })
    await server.stop()
    const file = readdirSync(tmp.dir).find((f) => f.endsWith('.cpuprofile'))
    if (file === undefined) throw new Error(`node --cpu-prof wrote no .cpuprofile into ${tmp.dir}`)
    return summarize(JSON.parse(readFileSync(join(tmp.dir, file), 'utf8')), 'caller')
  } finally {
    tmp.remove()
  }
}

/** @param {{ quick?: boolean, log?: (line: string) => void }} [options] */
export async function startup({ quick = QUICK, log = console.error } = {}) {
  const times = quick ? 3 : 10
  /** @type {number[]} */
  const hangar = []
  /** @type {number[]} */
  const bare = []
  log(`  start-up: ${times} starts of each, alternating …`)
  // A first start of each warms the file system cache; it is not counted.
  await timeToOk(() => startHangar())
  await timeToOk(() => startBaseline({}, [], { poll: true }))
  for (let i = 0; i < times; i++) {
    hangar.push(await timeToOk(() => startHangar()))
    bare.push(await timeToOk(() => startBaseline({}, [], { poll: true })))
  }
  /** @type {number[]} */
  const nodeAlone = []
  for (let i = 0; i < times; i++) nodeAlone.push((await runNode(['-e', '0'])).ms)

  log('  start-up: startHangar() + close() in one process …')
  const embedRun = /** @type {{ samples: number[], routes: number }} */ (JSON.parse((await runNode([PHASES, 'embed', String(quick ? 10 : 20)])).out))
  const embedded = embedRun.samples
  const embeddedBare = /** @type {{ samples: number[] }} */ (JSON.parse((await runNode([PHASES, 'embed-bare', String(embedRun.routes)])).out)).samples

  log('  start-up: a test file\'s first hangar (import + startHangar() + close()) in fresh processes …')
  /** @type {{ entry: number, imported: number, closed: number }[]} */
  const firsts = []
  /** @type {{ entry: number, imported: number, closed: number }[]} */
  const firstsBare = []
  for (let i = 0; i < (quick ? 2 : 5); i++) {
    firsts.push(JSON.parse((await runNode([PHASES, 'first'])).out))
    firstsBare.push(JSON.parse((await runNode([PHASES, 'first-bare', String(embedRun.routes)])).out))
  }
  /** @param {{ entry: number, imported: number, closed: number }[]} runs */
  const firstOf = (runs) => ({ total: median(runs.map((r) => r.closed - r.entry)), imported: median(runs.map((r) => r.imported - r.entry)), n: runs.length })

  log('  start-up: where the time goes …')
  const hangarPhases = await phases('hangar', quick ? 2 : 5)
  const barePhases = await phases('bare', quick ? 2 : 5)
  /** @type {{ dep: string, ms: number }[]} */
  const imports = []
  for (const dep of DEPENDENCIES) {
    /** @type {number[]} */
    const samples = []
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      const mark = JSON.parse((await runNode([PHASES, 'import', dep])).out)
      samples.push(mark.imported - mark.entry)
    }
    imports.push({ dep, ms: median(samples) })
  }
  imports.sort((a, b) => b.ms - a.ms)
  const profile = (await profileStart()).slice(0, 12)
  return {
    times,
    hangar: { median: median(hangar), min: Math.min(...hangar), max: Math.max(...hangar), samples: hangar },
    bare: { median: median(bare), min: Math.min(...bare), max: Math.max(...bare), samples: bare },
    nodeAlone: median(nodeAlone),
    ratio: median(hangar) / median(bare),
    embed: { median: median(embedded), min: Math.min(...embedded), max: Math.max(...embedded), n: embedded.length, routes: embedRun.routes },
    embedBare: { median: median(embeddedBare), min: Math.min(...embeddedBare), max: Math.max(...embeddedBare), n: embeddedBare.length },
    first: firstOf(firsts),
    firstBare: firstOf(firstsBare),
    hangarPhases,
    barePhases,
    imports,
    profile,
  }
}

/** @typedef {Awaited<ReturnType<typeof startup>>} StartupResult */

/** @param {StartupResult} r */
export function startupTable(r) {
  return textTable(['figure', 'hangar', 'bare', 'ratio h/b', 'target'], [
    [`spawn → first 200 from /ok, median of ${r.times} ms`, fmt(r.hangar.median), fmt(r.bare.median), fmt(r.ratio), `≤ ${STARTUP_RATIO_TARGET}×`],
    ['  min / max ms', `${fmt(r.hangar.min)} / ${fmt(r.hangar.max)}`, `${fmt(r.bare.min)} / ${fmt(r.bare.max)}`, '', ''],
    ['  `node -e 0`, spawn → exit, median ms', fmt(r.nodeAlone), fmt(r.nodeAlone), '', ''],
    [`startHangar() + close() in one process, median of ${r.embed.n} ms`, fmt(r.embed.median), '', '', `≤ ${EMBED_TARGET_MS} ms`],
    ['  min / max ms', `${fmt(r.embed.min)} / ${fmt(r.embed.max)}`, '', '', ''],
    [`  bare Fastify, ${r.embed.routes} routes 4 to a plugin: listen() + close(), median of ${r.embedBare.n} ms`, '', fmt(r.embedBare.median), fmt(r.embed.median / r.embedBare.median), ''],
    [`a test file's first hangar, fresh process: import + startHangar() + close(), median of ${r.first.n} ms (of which the import)`, `${fmt(r.first.total)} (${fmt(r.first.imported)})`, `${fmt(r.firstBare.total)} (${fmt(r.firstBare.imported)})`, fmt(r.first.total / r.firstBare.total), ''],
  ])
}

/**
 * The steps of each start (ms from process start, median) and the top costs.
 * @param {StartupResult} r
 */
export function startupBreakdown(r) {
  const h = r.hangarPhases
  const b = r.barePhases
  const steps = textTable(['step (in-process, ms since process start, median)', 'hangar', 'bare'], [
    ['node ready, entry script runs', fmt(h.entry), fmt(b.entry)],
    ['import dist/index.js, one bundle (hangar) / fastify (bare)', fmt(h.importApp - h.entry), fmt(b.importApp - b.entry)],
    ['buildApp() (database, migrations, fixtures, seeding) / Fastify()', fmt(h.buildApp - h.importApp), fmt(b.buildApp - b.importApp)],
    ['app.ready() (plugins, routes)', fmt(h.ready - h.buildApp), fmt(b.ready - b.buildApp)],
    ['listen()', fmt(h.listen - h.ready), fmt(b.listen - b.ready)],
    ['total in process', fmt(h.listen), fmt(b.listen)],
  ])
  const imports = textTable(['dependency imported alone in a fresh process', 'ms'], r.imports.map((i) => [i.dep, fmt(i.ms)]))
  const profile = textTable(['CPU profile of one start: self time by package (node core time counted for the package that called it)', 'ms', 'share'], r.profile.map((p) => [p.name, fmt(p.ms), `${fmt(p.share * 100, 1)}%`]))
  return `${steps}\n\n${imports}\n\n${profile}`
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ensureBuilt } = await import('./lib.mjs')
  console.error(ensureBuilt())
  const r = await startup()
  console.log(startupTable(r))
  console.log()
  console.log(startupBreakdown(r))
}
