// `npm run bench`: builds hangar if dist/ is stale, runs every benchmark, prints one table of
// figures and ratios, and writes docs/benchmarks.md (the date, the machine, the table, each target
// met or missed and what limits a missed one).
//
//   npm run bench                         the full run (5–7 minutes); writes docs/benchmarks.md
//   npm run bench -- --quick              a shortened smoke run (BENCH_QUICK=1 does the same);
//                                         prints only, unless --write is given too
//   npm run bench -- --only startup,memory   some of: throughput, startup, streams, memory, protocol,
//                                         store (prints only)
//   npm run bench -- --only protocol,store --quick   the session protocol's fan-out and the store, quickly
//   BENCH_HANGAR_ROOT=<checkout>          measure that checkout's dist/ (built by you), e.g. a fix

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { QUICK, ROOT, ensureBuilt, fmt, machine, markdownTable, mib, referenceWorkMs, textTable } from './lib.mjs'
import { throughput } from './throughput.mjs'
import { EMBED_TARGET_MS, STARTUP_RATIO_TARGET, startup, startupBreakdown } from './startup.mjs'
import { streams } from './streams.mjs'
import { memory } from './memory.mjs'
import { PROTOCOL_TARGET, protocol } from './protocol.mjs'
import { store } from './store.mjs'
import { analysis, problems } from './analysis.mjs'

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    write: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
})
const quick = QUICK || flags.quick
const only = flags.only ? new Set(flags.only.split(',')) : undefined
/** @param {string} name */
const wanted = (name) => !only || only.has(name)
const write = !flags['no-write'] && (!quick || flags.write) && !only

/** @param {string} line */
const log = (line) => process.stderr.write(`${line}\n`)

/** Runs completed per second with 20 clients: at least this share of the bare app's (issue 19). */
const RUNS_TARGET = 0.5
/** One event to the 1,000 open streams: the slowest stream within this factor of the bare app's (issue 19). */
const FAN_OUT_TARGET = 2
const started = new Date()
const host = machine()
const referenceAtStart = referenceWorkMs()
log(`hangar benchmarks (${quick ? 'quick' : 'full'}) — ${ensureBuilt()}`)
log(`${host.cpu}, ${host.cores} cores, ${fmt(host.ramGiB, 1)} GiB, Node ${host.node}, load average ${host.loadavg.map((l) => fmt(l)).join(' ')}, reference work ${fmt(referenceAtStart)} ms`)

/** @type {import('./analysis.mjs').Results} */
const results = {}
if (wanted('throughput')) {
  log('throughput …')
  results.throughput = await throughput({ quick, log })
}
if (wanted('startup')) {
  log('start-up …')
  results.startup = await startup({ quick, log })
}
if (wanted('streams')) {
  log('streams …')
  results.streams = await streams({ quick, log })
}
if (wanted('memory')) {
  log('memory …')
  results.memory = await memory({ quick, log })
}
if (wanted('protocol')) {
  log('session protocol fan-out …')
  results.protocol = await protocol({ quick, log })
}
if (wanted('store')) {
  log('store …')
  results.store = await store({ quick, log })
}
const finished = new Date()
const loadAtEnd = machine().loadavg
const referenceAtEnd = referenceWorkMs()

// ---------------------------------------------------------------------------------------------
// One table: every figure, hangar against its baseline, and the targets.

/** @type {import('./lib.mjs').Cell[][]} */
const rows = []
/** @type {{ key: string, name: string, met: boolean, figure: string }[]} */
const targets = []
/** @param {string} key @param {string} name @param {boolean} met @param {string} figure */
const target = (key, name, met, figure) => targets.push({ key, name, met, figure })
/** @param {boolean | undefined} met */
const verdict = (met) => (met === undefined ? '' : met ? 'met' : 'MISSED')

if (results.throughput) {
  for (const r of results.throughput.rows) {
    const met = r.ratio >= r.target
    rows.push([
      'throughput', `${r.label}: req/s (p50/p99 ms)`,
      `${fmt(r.hangar.rps, 0)} (${r.hangar.p50}/${r.hangar.p99})`, `${fmt(r.bare.rps, 0)} (${r.bare.p50}/${r.bare.p99})`,
      fmt(r.ratio), `≥ ${r.target}×`, verdict(met),
    ])
    rows.push(['', '  server CPU per request, µs (ratio: bare/hangar)', fmt(r.hangar.cpuUsPerRequest, 0), fmt(r.bare.cpuUsPerRequest, 0), fmt(r.cpuRatio), '', ''])
    if (r.floor && r.floorRatio !== undefined) {
      rows.push(['', '  durable floor: the bare app writing the two rows a create writes first (SQLite, a commit per turn): req/s (p50/p99 ms); its CPU µs per request', '',
        `${fmt(r.floor.rps, 0)} (${r.floor.p50}/${r.floor.p99}); ${fmt(r.floor.cpuUsPerRequest, 0)}`, fmt(r.floorRatio), `≥ ${r.target}×`, r.floor.non2xx + r.floor.errors + r.floor.timeouts > 0 ? `${r.floor.non2xx} non-2xx, ${r.floor.errors + r.floor.timeouts} errors` : r.floorRatio < r.target ? 'floor under the target' : ''])
    }
    for (const b of r.budget ?? []) {
      rows.push(['', `  the bare route spending ${b.workUs} µs more CPU per request (a spin): req/s (p50/p99 ms); its CPU µs per request`, '',
        `${fmt(b.result.rps, 0)} (${b.result.p50}/${b.result.p99}); ${fmt(b.result.cpuUsPerRequest, 0)}`, fmt(b.ratio), `≥ ${r.target}×`, b.result.non2xx + b.result.errors + b.result.timeouts > 0 ? `${b.result.non2xx} non-2xx, ${b.result.errors + b.result.timeouts} errors` : b.ratio < r.target ? 'under the target' : ''])
    }
    rows.push(['', '  non-2xx / errors', `${r.hangar.non2xx} / ${r.hangar.errors + r.hangar.timeouts}`, `${r.bare.non2xx} / ${r.bare.errors + r.bare.timeouts}`, '', '0', verdict(r.hangar.non2xx + r.hangar.errors + r.hangar.timeouts === 0)])
    target(r.key, `${r.label} ≥ ${r.target}× the bare route (req/s)`, met, `${fmt(r.ratio)}×`)
  }
}
if (results.startup) {
  const s = results.startup
  const ratioMet = s.ratio <= STARTUP_RATIO_TARGET
  const embedMet = s.embed.median <= EMBED_TARGET_MS
  rows.push(['start-up', `spawn → first 200 from GET /ok, ms (median of ${s.times})`, fmt(s.hangar.median), fmt(s.bare.median), fmt(s.ratio), `≤ ${STARTUP_RATIO_TARGET}×`, verdict(ratioMet)])
  rows.push(['', '  in process: entry → listening, ms (median)', fmt(s.hangarPhases.listen), fmt(s.barePhases.listen), fmt(s.hangarPhases.listen / s.barePhases.listen), '', ''])
  rows.push(['', `startHangar() + close() in one process, ms (median of ${s.embed.n}; min/max ${fmt(s.embed.min)}/${fmt(s.embed.max)})`, fmt(s.embed.median), '', '', `≤ ${EMBED_TARGET_MS} ms`, verdict(embedMet)])
  rows.push(['', `  Fastify's own share: a bare app registering as many routes (${s.embed.routes}, 4 to a plugin), listen() + close(), ms (median of ${s.embedBare.n})`, '', fmt(s.embedBare.median), fmt(s.embed.median / s.embedBare.median), '', ''])
  rows.push(['', `  a test file's process, fresh: import 'hangar' + its first startHangar() + close(), ms (median of ${s.first.n}; the import; bare: import fastify + the bare app above)`, `${fmt(s.first.total)} (${fmt(s.first.imported)})`, `${fmt(s.firstBare.total)} (${fmt(s.firstBare.imported)})`, fmt(s.first.total / s.firstBare.total), '', ''])
  target('startupRatio', `start-up ≤ ${STARTUP_RATIO_TARGET}× the bare app`, ratioMet, `${fmt(s.ratio)}× (${fmt(s.hangar.median)} ms against ${fmt(s.bare.median)} ms)`)
  target('startupEmbedded', `one in-process hangar (startHangar() + close()) ≤ ${EMBED_TARGET_MS} ms`, embedMet, `${fmt(s.embed.median)} ms`)
}
if (results.streams) {
  const { hangar: h, bare: b, hangarHold: hh, bareHold: bh, settings } = results.streams
  rows.push(['streams', `agent run: first byte, ms (median of ${settings.runs})`, fmt(h.firstByte), fmt(b.firstByte), fmt(h.firstByte / b.firstByte), '', ''])
  rows.push(['', `agent run: stream end, ms (median; p99)`, `${fmt(h.end)} (${fmt(h.endP99)})`, `${fmt(b.end)} (${fmt(b.endP99)})`, fmt(h.end / b.end), '', ''])
  const rateRatio = h.runsPerSecond / b.runsPerSecond
  const rateMet = rateRatio >= RUNS_TARGET
  rows.push(['', 'runs completed per second, 20 clients', fmt(h.runsPerSecond), fmt(b.runsPerSecond), fmt(rateRatio), `≥ ${RUNS_TARGET}×`, verdict(rateMet)])
  const f = results.streams.floor
  rows.push(['', '  durable floor: the bare app storing each thread, run and event (SQLite in memory, as hangar here; a commit per turn) before it sends them: runs/s', '', fmt(f.runsPerSecond), fmt(f.runsPerSecond / b.runsPerSecond), `≥ ${RUNS_TARGET}×`, f.latencyErrors + f.rateErrors > 0 ? `${f.latencyErrors + f.rateErrors} errors` : f.runsPerSecond / b.runsPerSecond < RUNS_TARGET ? 'floor under the target' : ''])
  const k = results.streams.keeping
  rows.push(['', '  the same floor also keeping each run\'s checkpoints (a row each) and its session-protocol log (a row per commit), as hangar\'s history, forks and late subscribers need: runs/s', '', fmt(k.runsPerSecond), fmt(k.runsPerSecond / b.runsPerSecond), `≥ ${RUNS_TARGET}×`, k.latencyErrors + k.rateErrors > 0 ? `${k.latencyErrors + k.rateErrors} errors` : k.runsPerSecond / b.runsPerSecond < RUNS_TARGET ? 'floor under the target' : ''])
  target('runsPerSecond', `runs completed per second ≥ ${RUNS_TARGET}× the bare app`, rateMet, `${fmt(rateRatio)}×`)
  rows.push(['', '  errors (latency runs, runs/s runs)', `${h.latencyErrors}, ${h.rateErrors}`, `${b.latencyErrors}, ${b.rateErrors}`, '', '0', verdict(h.latencyErrors + h.rateErrors === 0)])
  const holdMet = mib(hh.heldRssKiB) < 300 && hh.errors === 0 && hh.missingHeartbeats === 0
  rows.push(['', `${hh.n} open streams: RSS, MiB`, fmt(mib(hh.heldRssKiB)), fmt(mib(bh.heldRssKiB)), fmt(hh.heldRssKiB / bh.heldRssKiB), '< 300 MiB, 0 errors', verdict(holdMet)])
  rows.push(['', '  RSS before the streams opened, MiB', fmt(mib(hh.idleRssKiB)), fmt(mib(bh.idleRssKiB)), fmt(hh.idleRssKiB / bh.idleRssKiB), '', ''])
  rows.push(['', `  time to open all ${hh.n}, s`, fmt(hh.openSeconds), fmt(bh.openSeconds), fmt(hh.openSeconds / bh.openSeconds), '', ''])
  const fanOut = hh.eventMax / bh.eventMax
  const fanOutMet = fanOut <= FAN_OUT_TARGET
  rows.push(['', `  one event to all ${hh.n} (each run's own), ms (p50/p99/max; ratio of max)`, `${fmt(hh.eventP50)}/${fmt(hh.eventP99)}/${fmt(hh.eventMax)}`, `${fmt(bh.eventP50)}/${fmt(bh.eventP99)}/${fmt(bh.eventMax)}`, fmt(fanOut), `≤ ${FAN_OUT_TARGET}× (max)`, verdict(fanOutMet)])
  const fh = results.streams.floorHold
  rows.push(['', `    durable floor: the bare app storing each stream's event (a row per run, one commit) before it writes them, ms (p50/p99/max; ratio of max)`, '', `${fmt(fh.eventP50)}/${fmt(fh.eventP99)}/${fmt(fh.eventMax)}`, fmt(fh.eventMax / bh.eventMax), `≤ ${FAN_OUT_TARGET}× (max)`, fh.errors > 0 ? `${fh.errors} errors` : fh.eventMax / bh.eventMax > FAN_OUT_TARGET ? 'floor over the target' : ''])
  const kh = results.streams.keepingHold
  const step = results.streams.keptNext
  rows.push(['', `    the same floor also keeping what each step kept in hangar (${step.checkpoints.length} checkpoint${step.checkpoints.length === 1 ? '' : 's'}, ${step.log.length} log entries in one row), ms (p50/p99/max; ratio of max)`, '', `${fmt(kh.eventP50)}/${fmt(kh.eventP99)}/${fmt(kh.eventMax)}`, fmt(kh.eventMax / bh.eventMax), `≤ ${FAN_OUT_TARGET}× (max)`, kh.errors > 0 ? `${kh.errors} errors` : kh.eventMax / bh.eventMax > FAN_OUT_TARGET ? 'floor over the target' : ''])
  const hj = results.streams.hangarJoin
  rows.push(['', `  one run's event to ${hj.n} streams joined to it, ms (p50/p99/max; ratio of max)`, `${fmt(hj.eventP50)}/${fmt(hj.eventP99)}/${fmt(hj.eventMax)}`, `${fmt(bh.eventP50)}/${fmt(bh.eventP99)}/${fmt(bh.eventMax)}`, fmt(hj.eventMax / bh.eventMax), '', hj.errors === 0 && hj.delivered === hj.n ? '' : `${hj.n - hj.delivered} missed, ${hj.errors} errors`])
  target('streamsFanOut', `one event to ${hh.n} open streams within ${FAN_OUT_TARGET}× the bare app (max)`, fanOutMet, `${fmt(fanOut)}×`)
  rows.push(['', `  heartbeats per stream in ${fmt(hh.watchMs / 1000)} s (min/median)`, `${hh.heartbeatsMin}/${hh.heartbeatsMedian}`, `${bh.heartbeatsMin}/${bh.heartbeatsMedian}`, '', '≥ 1', verdict(hh.missingHeartbeats === 0)])
  rows.push(['', '  errors (streams cut, refused or short)', hh.errors, bh.errors, '', '0', verdict(hh.errors === 0)])
  const warnings = [...new Set(hh.warnings.map((w) => /\w+Warning/.exec(w)?.[0]).filter(Boolean))]
  rows.push(['', "  warnings on the server's stderr", warnings.join(', ') || 'none', 'none', '', '', ''])
  target('streams', `${hh.n} open streams under 300 MB RSS with no errors`, holdMet, `${fmt(mib(hh.heldRssKiB))} MiB, ${hh.errors} errors`)
}
if (results.memory) {
  const m = results.memory
  /** @param {number} n */
  const k = (n) => `${n / 1000}k`
  const met = m.ratio <= 1.2
  rows.push(['memory', `RSS after ${k(m.total)} mixed requests vs after ${k(m.first)}, MiB`, fmt(mib(m.totalKiB)), fmt(mib(m.firstKiB)), fmt(m.ratio), '≤ 1.2×', verdict(met)])
  rows.push(['', '  of the RSS: V8\'s heap (its size at the reading), MiB; the C heap (`[heap]` in smaps: malloc, where SQLite\'s page cache lives), MiB', `${fmt(mib(m.heapAtTotal.beforeKiB))}; ${fmt(mib(m.cHeapAtTotal))}`, `${fmt(mib(m.heapAtFirst.beforeKiB))}; ${fmt(mib(m.cHeapAtFirst))}`, '', '', ''])
  rows.push(['', `  V8's live heap after a full collection (forced after each RSS reading), MiB (heap size)`, `${fmt(mib(m.heapAtTotal.usedKiB))} (${fmt(mib(m.heapAtTotal.totalKiB))})`, `${fmt(mib(m.heapAtFirst.usedKiB))} (${fmt(mib(m.heapAtFirst.totalKiB))})`, fmt(m.heapAtTotal.usedKiB / m.heapAtFirst.usedKiB), '', ''])
  rows.push(['', `  mixed req/s (during the last ${k(m.total - m.first)} vs the first ${k(m.first)})`, fmt(m.secondRun.rps), fmt(m.firstRun.rps), fmt(m.secondRun.rps / m.firstRun.rps), '', ''])
  rows.push(['', '  non-2xx / errors', `${m.non2xx} / ${m.errors}`, '', '', '0', verdict(m.non2xx + m.errors === 0)])
  target('memory', `RSS after ${k(m.total)} requests within 20% of after ${k(m.first)}`, met, `${fmt(m.ratio)}×`)
}
if (results.protocol) {
  results.protocol.rows.forEach((r, i) => {
    const what = r.transport === 'sse' ? 'SSE streams' : 'WebSockets'
    const { hangar: h, bare: b } = r
    rows.push([i === 0 ? 'protocol' : '', `one run's next event to ${r.n} ${what}, ms (p50/max; ratio of max)`, `${fmt(h.p50)}/${fmt(h.max)}`, `${fmt(b.p50)}/${fmt(b.max)}`, fmt(r.ratio), `≤ ${PROTOCOL_TARGET}×, 0 errors`, verdict(r.met)])
    rows.push(['', '  clock move answered, ms; time to open all, s', `${fmt(h.clockMs)}; ${fmt(h.openSeconds)}`, `${fmt(b.clockMs)}; ${fmt(b.openSeconds)}`, '', '', ''])
    rows.push(['', '  errors (subscribers cut, short or missing the event)', h.errors, b.errors, '', '0', verdict(h.errors === 0)])
    target(`protocol-${r.transport}-${r.n}`, `one event to ${r.n} session-protocol ${what} within ${PROTOCOL_TARGET}× the bare app`, r.met, `${fmt(r.ratio)}×`)
  })
}
if (results.store) {
  for (const r of results.store.rows) {
    rows.push([
      'store', `${r.label}, ${results.store.seeded} items: req/s (p50/p99 ms)`,
      `${fmt(r.hangar.rps, 0)} (${r.hangar.p50}/${r.hangar.p99})`, `${fmt(r.bare.rps, 0)} (${r.bare.p50}/${r.bare.p99})`, fmt(r.ratio), '', '',
    ])
    rows.push(['', '  server CPU per request, µs (ratio: bare/hangar)', fmt(r.hangar.cpuUsPerRequest, 0), fmt(r.bare.cpuUsPerRequest, 0), fmt(r.cpuRatio), '', ''])
    rows.push(['', '  non-2xx / errors', `${r.hangar.non2xx} / ${r.hangar.errors + r.hangar.timeouts}`, `${r.bare.non2xx} / ${r.bare.errors + r.bare.timeouts}`, '', '0', verdict(r.hangar.non2xx + r.hangar.errors + r.hangar.timeouts === 0)])
  }
}

const header = ['area', 'figure', 'hangar', 'baseline', 'ratio', 'target', 'result']
console.log()
console.log(textTable(header, rows))
console.log()
for (const t of targets) console.log(`${t.met ? 'met   ' : 'MISSED'}  ${t.name}: ${t.figure}`)
if (results.startup) {
  console.log()
  console.log(startupBreakdown(results.startup))
}

// ---------------------------------------------------------------------------------------------
// docs/benchmarks.md

if (write) {
  const file = join(ROOT, 'docs', 'benchmarks.md')
  writeFileSync(file, document())
  log(`\nwrote ${file}`)
} else {
  log(`\n(${quick ? 'quick' : 'partial'} run: docs/benchmarks.md not written${quick ? '; add --write to write it' : ''})`)
}

function document() {
  const date = started.toISOString().replace('T', ' ').slice(0, 16) + ' UTC'
  const minutes = fmt((finished.getTime() - started.getTime()) / 60_000, 1)
  const lines = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench${quick ? ' -- --quick' : ''}\` (bench/run.mjs) on ${date}, in ${minutes} minutes${quick ? ' — a **quick** run: shortened, for a smoke check only' : ''}.`,
    'Every figure is hangar against a baseline measured in the same run: the bare Fastify app of',
    '`bench/baseline-server.mjs`, in its own process, answering the same paths with fixed JSON of the',
    'same size as hangar\'s answers (measured first), or hangar itself at an earlier point (memory).',
    '',
    '## Machine',
    '',
    `- CPU: ${host.cpu}, ${host.cores} cores`,
    `- RAM: ${fmt(host.ramGiB, 1)} GiB`,
    `- Node ${host.node}, ${host.os}`,
    // The load at the end is the benchmarks' own (their last minute keeps both cores busy): only the
    // load at the start tells of other work.
    `- load average (1/5/15 min) at the start: ${host.loadavg.map((l) => fmt(l)).join(' / ')}; at the end (the benchmarks' own): ${loadAtEnd.map((l) => fmt(l)).join(' / ')}` +
      (host.loadavg[0] > host.cores * 0.25 ? ' — **the machine was busy with other work when the run started: the absolute figures are noisy, and so are the ratios, less so**' : ''),
    // The CPU's name does not tell machines apart: the same name has run hangar several times slower.
    `- reference work (bench/lib.mjs referenceWorkMs: JSON through stringify and parse, one core): ${fmt(referenceAtStart)} ms at the start, ${fmt(referenceAtEnd)} ms at the end. ` +
      'Hosts that report the same CPU have run hangar several times slower, and moved some ratios too: compare this line before comparing runs.',
    '',
    '## How hangar was run',
    '',
    '- As users run it: `node dist/server.js` in a process of its own (built first with `npm run build`',
    '  when `dist/` is older than `src/`), `--log-level warn --log-format json` everywhere. Each benchmark',
    '  picks a free port, passes it as `--port`, and waits for `GET /ok` to answer 200; the bare app is',
    '  started and timed the same way.',
    '- Throughput: a fresh hangar per route, `--db` a temporary file (WAL, the default `npm start` setup),',
    '  25 deployments seeded; autocannon, 50 connections, ' + (results.throughput ? `${results.throughput.settings.duration} s per route after a ${results.throughput.settings.warmup} s warm-up` : '(not run)') + ';',
    '  every `POST` has a name of its own. "Server CPU per request" is the server process\'s user+system',
    '  time (from `/proc/<pid>/stat`) divided by the requests: steadier than req/s on a busy machine.',
    '  For `POST`, the bare app is measured a second time as the durable floor (`--db`): it writes the',
    '  deployment and revision rows into a database hangar made and answers once they are committed, one',
    '  commit per turn of the event loop shared by the requests read in it. For `GET /v2/deployments/{id}`, the',
    '  bare app is measured again spending 10 and then 20 µs more CPU per request (`--work-us`, a spin): what',
    '  the target leaves room for beside the bare route, on this machine.',
    '- Start-up and streams: `--db :memory:`. In-process start-up loads hangar as a package user does,',
    '  `dist/index.js` (one bundle): `startHangar()` + `close()` repeated in one process after a first one;',
    '  then a test file\'s process, fresh each time: the import, its first `startHangar()` and `close()`,',
    '  against importing Fastify and starting the bare app with as many routes.',
    '  Streams: the 1,000-stream test starts hangar with',
    '  `--heartbeat-ms 1000`, freezes its clock (`POST /_hangar/clock`), holds 1,000 `pipeline` runs',
    '  waiting in their first node, then advances the clock one second and times the next event to every',
    '  stream. The bare app holds the same number of streams with the same heartbeat and writes one',
    '  event of the same size to all of them. Its durable floors (`--db :memory:`) store before they send:',
    '  each thread, run and event; then also what hangar keeps beside them, with the sizes hangar had',
    '  (each checkpoint as `POST /threads/{id}/history` shows it, a row each; the session-protocol',
    '  log\'s entries as a subscriber of every channel replays them, in one row per commit).',
    '- Session protocol fan-out: `--db :memory:`, the clock frozen; per round a `pipeline` run is started',
    '  with `run.start` on a new thread and waits in its first node while N subscribers open on the thread',
    '  (`POST /threads/{id}/stream/events` for SSE, the WebSocket on that path with `subscription.subscribe`;',
    '  every channel, the run\'s events so far replayed), then the clock moves one second and the time from',
    '  that request to the next event at each subscriber is taken: p50 and max over the subscribers, the',
    '  median of ' + (results.protocol ? Object.entries(results.protocol.settings.rounds).map(([n, r]) => `${r} rounds (${n})`).join(', ') : 'the rounds') + ', after one round not measured (the first ran cold). The bare app holds the same number of SSE streams / `ws` sockets, each',
    '  with frames of the sizes hangar replayed, and writes one event of the size of hangar\'s next to all.',
    '- Store: one hangar, `--db` a temporary file, ' + (results.store ? `${results.store.seeded}` : '1,000') + ' items seeded in one namespace; autocannon as for',
    '  throughput: `POST /store/items/search` with a filter, then with a `query`, then `PUT /store/items`',
    '  (each rewriting one of the seeded items, so the store keeps its size). The bare app answers the',
    '  searches with fixed JSON of the size of hangar\'s answers and the PUT with 204.',
    '- Memory: a temporary file database (so RSS is the process, not the data); the mix (one request of',
    '  each in turn on each connection): GET a deployment, list 20, create a deployment, create a thread,',
    '  search threads, ' + (results.memory?.keepThreads ? 'without deleting threads (BENCH_MEMORY_KEEP_THREADS=1).' : 'delete that thread (so the data stays the same size and RSS measures the process).'),
    '  RSS is read after 1 s idle; then a full collection (hangar started with `--expose-gc` and',
    '  bench/gc-on-signal.mjs, SIGWINCH) gives V8\'s live heap: what hangar keeps, without garbage.',
    '- The load generator (autocannon, the stream clients) runs on the same machine: with 2 cores,',
    '  the bare app is partly limited by the client, not by itself, which flatters hangar\'s ratios.',
    '',
    '## Results',
    '',
    markdownTable(header, rows),
    '',
    '## Targets',
    '',
    ...targets.flatMap((t) => {
      const head = `- **${t.met ? 'met' : 'missed'}** — ${t.name}: ${t.figure}.`
      const why = t.met ? undefined : analysis(t.key, results)
      return why ? [head, ...why.split('\n').map((l) => `  ${l}`)] : [head]
    }),
    '',
  ]
  if (results.startup) {
    lines.push('## Where start-up goes', '', '```', startupBreakdown(results.startup), '```', '')
  }
  lines.push('## Problems found', '', problems(), '')
  lines.push('## Running them', '', '```sh', 'npm run bench                 # everything, 5–7 minutes; writes this file', 'npm run bench -- --quick      # a smoke check (a few seconds per figure); prints only', 'npm run bench -- --only protocol,store --quick   # some of them (throughput, startup, streams, memory, protocol, store); prints only', 'node bench/throughput.mjs     # one benchmark (also startup, streams, memory, protocol, store; each takes --quick)', 'node bench/cpu-profile.mjs <file.cpuprofile> --by caller   # where a `node --cpu-prof` run spent its CPU', 'node bench/sql-time.mjs runs  # each SQL statement\'s time per agent run (or `creates`) against the server\'s CPU', 'BENCH_HANGAR_ROOT=../other-checkout npm run bench -- --only throughput   # measure another build (a fix) the same way', '```', '')
  return lines.join('\n')
}
