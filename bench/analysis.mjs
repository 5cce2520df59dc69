// What limits a missed target, and the performance problems the benchmarks found, for
// docs/benchmarks.md. The figures in `analysis` come from the current run; the measurements quoted
// in `problems` were taken with CPU profiles (`node --cpu-prof`, read with cpu-profile.mjs) and
// prototype fixes built in a copy of the checkout (BENCH_HANGAR_ROOT), on the busy 2-core machine
// of the first run: read them as relative effects, not as absolute figures.

import { fmt, mib } from './lib.mjs'

const us = (v) => `${fmt(v, 0)} µs`

function throughputRow(results, key) {
  return results.throughput?.rows.find((r) => r.key === key)
}

/** A paragraph (markdown, lines joined by \n) on what limits target `key`; undefined when nothing to say. */
export function analysis(key, results) {
  const r = throughputRow(results, key)
  const cpu = r && `hangar's server process spends ${us(r.hangar.cpuUsPerRequest)} of CPU per request against the bare route's ${us(r.bare.cpuUsPerRequest)} (${fmt(r.hangar.cpuUsPerRequest / r.bare.cpuUsPerRequest, 1)}×: a CPU ratio of ${fmt(r.cpuRatio)} beside the req/s ratio of ${fmt(r.ratio)}).`
  switch (key) {
    case 'get':
      return [
        `Limited by hangar's own per-request work: ${cpu}`,
        'In a steady-state CPU profile of this route, hangar\'s code is about a third of the CPU and Fastify (its',
        'hook chain, serialization, the socket write) most of the rest. The largest of hangar\'s own costs:',
        'the request journal (problem 3: `--journal-size 0` removes ~20–25% of the CPU per request),',
        '`DeploymentRepository.get` (a `settle()` query before every read, then the view with two correlated',
        'subqueries), the API key hashed on every request (`callerId`), the FastAPI-style validation hook,',
        'and the hooks every request passes (onRequest: error routing, journal, CORS, auth; preParsing: faults,',
        'journal; preValidation; onResponse: journal). No single fix reaches 0.6×:',
        'it needs the journal made cheap (problem 3) and the read path trimmed (problems 4 and 5).',
      ].join('\n')
    case 'list':
      return [
        `Limited by the SQL and the rows' conversion: ${cpu}`,
        'The list statement carries every optional filter inline; with no filter given SQLite still builds the',
        '`id IN (SELECT value FROM json_each(@ids))` list and a bloom filter on every call (problem 4), and the',
        '`deployment_view` joins two correlated subqueries per row. Each of the 20 rows then has its JSON',
        'columns parsed and its times formatted, and is serialized against a schema of 108 `anyOf` branches.',
      ].join('\n')
    case 'post':
      return [
        `Limited by the write path: ${cpu}`,
        'Each create parses the body with the Python-compatible JSON parser and validates it, checks the name,',
        'runs `settle()`, commits a transaction (deployment and first revision, to the WAL), reads the new',
        'deployment back through the view, and the journal copies the body through a Transform stream and',
        'redacts it (`renderBody`, `redactJson`, `structuredClone`). Every revision then moves through its',
        'statuses: the ticker writes ~6 more UPDATEs per created deployment in the following seconds.',
        'Cheap wins: the journal (problem 3) and answering from the inserted values instead of re-reading.',
      ].join('\n')
    case 'startupRatio':
    case 'startupAbsolute': {
      const s = results.startup
      if (!s) return undefined
      if (key === 'startupAbsolute' && s.ratio > 2) return 'The same costs as for the ratio, above.'
      const h = s.hangarPhases
      const b = s.barePhases
      return [
        `In the process, hangar takes ${fmt(h.listen)} ms from start to listening, the bare app ${fmt(b.listen)} ms:`,
        `importing its modules ${fmt(h.importApp - h.entry)} ms (bare: ${fmt(b.importApp - b.entry)} ms, fastify alone),`,
        `\`buildApp()\` ${fmt(h.buildApp - h.importApp)} ms, and \`app.ready()\` ${fmt(h.ready - h.buildApp)} ms (bare: ${fmt(b.ready - b.buildApp)} ms).`,
        '`ready()` registers ~146 routes (the control plane twice, the agent server twice, feedback twice) and',
        'compiles their response serializers (92 fast-json-stringify builds): problem 2, compiling them on first',
        'use, took ~40% off `ready()`. Importing is 313 ES modules, 200 of them TypeBox\'s ESM build (TypeBox',
        'alone costs about as much to import as Fastify): bundling `dist/server.js` into one file would cut most',
        'of that resolution and loading (problem 2). See "Where start-up goes" below.',
      ].join('\n')
    }
    case 'streams': {
      const hh = results.streams?.hangarHold
      if (!hh) return undefined
      return `${fmt(mib(hh.heldRssKiB))} MiB with ${hh.errors} errors and ${hh.missingHeartbeats} streams without heartbeats: see the rows above.`
    }
    case 'memory': {
      const m = results.memory
      if (!m) return undefined
      return [
        `RSS grew from ${fmt(mib(m.firstKiB))} to ${fmt(mib(m.totalKiB))} MiB. With a file database the data is not in the`,
        'process; what can grow is SQLite\'s page cache (bounded by `cache_size`), V8\'s heap (the journal is a',
        'fixed ring), and the per-deployment `seededScopes` set of app.ts (only deployments whose agent server',
        'was called). Run `node --heapsnapshot-signal=SIGUSR2 dist/server.js` under the same mix and compare two',
        'snapshots to see which objects are retained.',
      ].join('\n')
    }
    default:
      return undefined
  }
}

/** The problems found in src/, with the proposed fix and the measured effect of a prototype where one was built. */
export function problems() {
  return [
    'Found with CPU profiles (`node --cpu-prof`, summed by bench/cpu-profile.mjs) and prototype fixes built in',
    'a copy of the checkout and measured with `BENCH_HANGAR_ROOT=<copy>`, on the busy machine of the first',
    'run (2026-11-21): read the figures as relative effects. The prototypes are not in src/.',
    '',
    '1. **Thread search reads every thread.** `ThreadRepository.search` (src/store/threads.ts) selects all of the',
    '   agent server\'s threads (`SELECT * … WHERE scope = ? ORDER BY seq DESC`), parses their JSON columns, and',
    '   `POST /threads/search` (src/routes/threads.ts) presents all of them before `sortAndPage`',
    '   (src/routes/agent-lists.ts) sorts and pages in JavaScript; `/threads/count` does the same to count.',
    '   Measured (`{"limit":10}`, 10 connections): 572 req/s with 100 threads, 70 with 2,000, 13 with 10,000',
    '   (server CPU 1.1 → 12 → 68 ms per search). This is why the memory benchmark deletes its threads.',
    '   Fix: status filter, `ORDER BY <column> <dir>, seq <tie-break> LIMIT ? OFFSET ?` and `count(*)` (for',
    '   `X-Pagination-Total`) in SQL, with an index on `threads (scope, created_at)`; `ids` as',
    '   `thread_id IN (SELECT value FROM json_each(?))`; for `metadata`/`values` containment, iterate the',
    '   sorted rows (`.iterate()`) and stop once the page is full. A prototype of the unfiltered case: 1,347 /',
    '   2,671 / 1,166 req/s at 100 / 2,000 / 10,000 threads (0.3–0.6 ms CPU per search, flat).',
    '   `/assistants/search` has the same shape (fewer rows in practice).',
    '2. **Start-up: serializers compiled eagerly, and 313 ES modules.** `installSerialization`',
    '   (src/serialization.ts) compiles every response schema at `ready()`: 92 fast-json-stringify builds for',
    '   ~550 route/status pairs. Returning a wrapper that compiles on first call took `ready()` from a median',
    '   of 359 ms to 221 ms (6 alternating starts each); the first request of each route pays its compile.',
    '   Importing `app.js` loads 313 ES modules, 200 from `@sinclair/typebox` (70–100 ms to import alone) and',
    '   21 from `uuid`: bundle the server (e.g. esbuild, one file for `bin`) or at least replace `uuid` by',
    '   `node:crypto` (`randomUUID`, and v5 with `createHash(\'sha1\')`).',
    '3. **The request journal costs ~20–25% of a simple request.** `installJournal` (src/admin/journal.ts)',
    '   adds hooks to every request, pipes each request body through a `Transform` (`BodyCapture.tap`),',
    '   re-parses the raw header block (`sentHeaders`) and redacts headers, query and body at record time',
    '   (`renderBody`, `redactJson` with `structuredClone`). `--journal-size 0` took a GET from ~97–125 to',
    '   ~73–99 µs of server CPU. Fix: store the raw material (header block string, the body Buffer the',
    '   content-type parser already holds, capped at 4 KiB) and redact/render when `/_hangar/requests` is read.',
    '4. **The deployment list statement pays for filters nobody gave.** `DeploymentRepository` (src/store/',
    '   deployments.ts) `list`: `(@ids IS NULL OR id IN (SELECT value FROM json_each(@ids)))` makes SQLite build',
    '   the list and a bloom filter on every call. In-process, 20 rows of 25: 210 µs as is, 153 µs without that',
    '   clause, 135 µs with no filter clauses, 66 µs for the `deployments` table alone (the view\'s correlated',
    '   subqueries cost the rest). Fix: build the WHERE from the filters present (a prepared statement per',
    '   combination, cached); keep `latest_revision_id`/`active_revision_id` on `deployments`, written in the',
    '   revision transactions, if the list must get cheaper still.',
    '5. **Smaller per-request costs on every control-plane call:** `callerId` (src/domain/oauth.ts) hashes the',
    '   API key on every request (cache it in a small Map); `DeploymentRepository.get` runs `settle()` before',
    '   every read (keep the earliest `next_at` in memory and skip the query until then); `create` re-reads',
    '   the deployment through the view after inserting it.',
    '6. **`Clock` warns with many waiters.** Every waiting run adds a `change` listener (`Clock.until`,',
    '   src/clock.ts); 1,000 held pipeline runs print `MaxListenersExceededWarning: … 11 change listeners added',
    '   to [Clock]`. Fix: `this.setMaxListeners(0)` in the constructor (as `RunManager` does for its run',
    '   events), or one listener over a list of waiters sorted by due time, which also avoids waking all',
    '   1,000 `check`s on every clock change. When the clock moves, all 1,000 runs then step back to back',
    '   (event append, checkpoint, stream write: ~0.35 ms each), so the last stream hears of it ~360 ms',
    '   later (bare app: ~18 ms); that is the emulation\'s work, not a target.',
    '7. **No ready line below `info`.** src/server.ts logs `hangar listening on …` with `app.log.info`, so',
    '   `--log-level warn` (or `silent`) with `--port 0` leaves a script no way to learn the port. Fix: print',
    '   the ready line whatever the level (as a line on stdout, or logged at a level that is never filtered).',
    '   The benchmarks pick a free port and poll `GET /ok` instead.',
  ].join('\n')
}
