// Crash safety (issue 7). A hangar on a database file, under creates and patches from several
// concurrent clients, is killed with SIGKILL at random points, many times, and started again on the
// same file. After every restart:
//   - every acknowledged write is there, as it was acknowledged (deployments, patches and their
//     revisions, threads with their metadata);
//   - nothing is half-written or invented: every deployment has its revisions, `latest_revision_id`
//     is the newest of them, list and get agree, and a write whose answer the kill swallowed is either
//     wholly there or wholly absent — and once absent after a restart, it never turns up later;
//   - revisions that were in progress at the kill move on with the clock and reach DEPLOYED.
// After the last kill, the SQLite file itself is opened and checked.
//
// Time. The child runs at the default speed (`fast`: one second per step, on hangar's clock), not
// `--speed manual`: manual revisions never move by time, so they could not show that the
// time-driven progression (status computed from the stored anchor and the clock, transitions
// persisted by reads and the ticker) resumes after a restart. To make it deterministic the test owns
// the clock: after every start it freezes hangar's clock and sets it to the test's instant `now`.
// The clock is not stored, so each boot starts on real time and runs until that freeze; `now` starts
// a day ahead of real time, so every stored instant is in that running clock's future and nothing can
// move (not even by the ticker) before the freeze. The load runs on the frozen clock, so a revision
// created in a round is CREATING at the kill and still CREATING at the restart; the test then moves
// the clock 1 s (it must be QUEUED) and 10 s more (it must be DEPLOYED).
//
// Kill points: each round draws k (an answer count) and a number of event-loop turns (0-15) from the
// seed; the child is killed that many turns after the k-th answer arrives, while the clients keep
// sending (no timer: the kill lands after a drawn amount of the clients' own progress). Reproduce a run
// with HANGAR_CRASH_SEED=<the seed it printed>: the kill points and every client's choices follow the
// seed; which requests were in flight at the kill depends on scheduling, so a rerun is close to, not
// exactly, the same run.

import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import Database from 'better-sqlite3'
import t from 'tap'
import { compiledServer, readyUrl, startServer } from './server-process.js'

/** src/ compiled to JavaScript, run as `npm start` runs dist/server.js (see server-process.ts). */
const SERVER = await compiledServer(t)
const HEADERS = { 'x-api-key': 'crash-safety', 'content-type': 'application/json' }
const GITHUB_INTEGRATION = '6f1a0c1e-1b43-4a9a-9f57-2f5f7f2d9a10'
const SUITE = 'crash-safety'

const SEED = Number(process.env.HANGAR_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 32)) >>> 0
const ROUNDS = 10
const CLIENTS = 8
/** Each round is killed once this many answers (drawn between the two) have arrived. */
const KILL_AFTER = { min: 15, max: 90 }

/** mulberry32: a small seeded generator of numbers in [0, 1). */
function generator(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
}

// ---------------------------------------------------------------------------------------------
// The child process

interface Child {
  process: ChildProcess
  url: string
  exited: Promise<[number | null, NodeJS.Signals | null]>
  stderr: () => string
}

/** Starts hangar on `db` and resolves once it logs its ready line (rejects if it exits first). */
async function startHangar(db: string): Promise<Child> {
  const { child, exited, stderr } = startServer(SERVER, ['--port', '0', '--db', db, '--log-format', 'json'])
  return { process: child, url: await readyUrl(child, stderr), exited, stderr }
}

interface Answer {
  status: number
  body: any
}

/** One request; rejects when the connection fails or the body is cut (both count as "no answer"). */
async function call(url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${url}${path}`, { method, headers: HEADERS, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: text === '' ? null : JSON.parse(text) }
}

/** Runs `work` over `items` with a few requests in flight at once. */
async function pool<T>(items: T[], work: (item: T) => Promise<void>, width = 8): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++])
  }))
}

// ---------------------------------------------------------------------------------------------
// The ledger: everything sent, and what became of it

interface Secret { name: string; value: string }
interface RevisionRecord {
  id: string
  /** The revision's repo_ref (github) or image_uri (external_docker). */
  ref: string
  round: number
  /** Its status after the round's clock moves (DEPLOYED or SKIPPED); null until then. */
  final: string | null
}
interface DeploymentRecord {
  name: string
  client: number
  round: number
  source: 'github' | 'external_docker'
  deploymentType: 'dev' | 'prod'
  /** acked: answered 201 (or found complete after a kill swallowed its answer); unknown: in flight at a kill; absent: in flight at a kill and not there after the restart. */
  state: 'acked' | 'unknown' | 'absent'
  id: string | null
  createRef: string
  createSecrets: Secret[]
  /** The committed revisions, oldest first. */
  revisions: RevisionRecord[]
  /** The secrets it must have now. */
  secrets: Secret[]
  /** A patch in flight at the kill: it may or may not have committed. */
  pending: { ref: string; secrets: Secret[] } | null
}
interface ThreadRecord {
  id: string
  metadata: Record<string, unknown>
  round: number
  state: 'acked' | 'unknown' | 'absent'
}

const ledger = { deployments: [] as DeploymentRecord[], threads: [] as ThreadRecord[] }
const totals = { answers: 0, inFlightAtKill: 0, committedInFlight: 0, droppedInFlight: 0 }

const refOf = (source: string, config: { repo_ref?: string | null; image_uri?: string | null }) =>
  (source === 'github' ? config.repo_ref : config.image_uri) ?? '<none>'
const revisionConfig = (source: string, ref: string) =>
  source === 'github' ? { repo_ref: ref, langgraph_config_path: 'langgraph.json' } : { image_uri: ref }
/** Upsert by name, as a PATCH's secrets do. */
function mergeSecrets(current: Secret[], updates: Secret[]): Secret[] {
  const merged = new Map(current.map((s) => [s.name, s]))
  for (const s of updates) merged.set(s.name, s)
  return [...merged.values()]
}

// ---------------------------------------------------------------------------------------------
// One round's load: CLIENTS clients, each with one request in flight, until the k-th answer

async function load(child: Child, round: number, killAt: number, delayTurns: number) {
  let answers = 0
  let killed = false
  const unexpected: string[] = []
  const inFlight = new Set<string>()

  /**
   * An answer arrived whole: it counts, and the k-th one pulls the plug `delayTurns` turns of the
   * event loop later (0 to 15, drawn from the seed), while the clients go on: killing at the very instant an answer arrives
   * would nearly always find the server between two requests, and so almost never between a commit
   * and its answer — the case where a write the client never heard about must still be whole.
   */
  const answered = () => {
    answers++
    if (answers === killAt) {
      const kill = (turnsLeft: number): void => {
        if (turnsLeft > 0) return void setImmediate(kill, turnsLeft - 1)
        killed = true
        totals.inFlightAtKill += inFlight.size
        child.process.kill('SIGKILL')
      }
      kill(delayTurns)
    }
  }
  const attempt = async (label: string, request: () => Promise<Answer>): Promise<Answer | undefined> => {
    inFlight.add(label)
    try {
      const answer = await request()
      answered()
      return answer
    } catch (error) {
      if (!killed) unexpected.push(`${label}: no answer before any kill (${(error as Error).message})`)
      return undefined
    } finally {
      inFlight.delete(label)
    }
  }

  const client = async (c: number) => {
    const random = generator(SEED ^ Math.imul(round + 1, 7919) ^ Math.imul(c + 1, 104729))
    for (let n = 1; !killed; n++) {
      const tag = `r${round}c${c}n${n}`
      const mine = ledger.deployments.filter((d) => d.client === c && d.state === 'acked')
      const pick = random()
      if (mine.length === 0 || pick < 0.3) {
        const source = random() < 0.5 ? 'github' : 'external_docker'
        const ref = source === 'github' ? `crash/${tag}` : `docker.io/acme/agent:${tag}`
        const record: DeploymentRecord = {
          name: `crash-${tag}`, client: c, round, source, deploymentType: random() < 0.5 ? 'dev' : 'prod',
          state: 'unknown', id: null, createRef: ref, createSecrets: [{ name: 'OPENAI_API_KEY', value: `sk-${tag}` }],
          revisions: [], secrets: [], pending: null,
        }
        ledger.deployments.push(record)
        const sourceConfig = source === 'github'
          ? { integration_id: GITHUB_INTEGRATION, repo_url: 'https://github.com/acme/agent', deployment_type: record.deploymentType }
          : { deployment_type: record.deploymentType }
        const body = { name: record.name, source, source_config: sourceConfig, source_revision_config: revisionConfig(source, ref), secrets: record.createSecrets }
        const answer = await attempt(`create ${record.name}`, () => call(child.url, 'POST', '/v2/deployments', body))
        if (!answer) break
        if (answer.status !== 201) {
          unexpected.push(`create ${record.name}: ${answer.status} ${JSON.stringify(answer.body)}`)
          continue
        }
        record.state = 'acked'
        record.id = answer.body.id
        record.revisions = [{ id: answer.body.latest_revision_id, ref, round, final: null }]
        record.secrets = record.createSecrets
      } else if (pick < 0.8) {
        const record = mine[Math.floor(random() * mine.length)]
        const ref = record.source === 'github' ? `crash/${tag}` : `docker.io/acme/agent:${tag}`
        const updates = random() < 0.5 ? [] : [{ name: random() < 0.5 ? 'OPENAI_API_KEY' : `EXTRA_${n % 3}`, value: `v-${tag}` }]
        const after = mergeSecrets(record.secrets, updates)
        record.pending = { ref, secrets: after }
        const body = { source_revision_config: revisionConfig(record.source, ref), ...(updates.length > 0 ? { secrets: updates } : {}) }
        const answer = await attempt(`patch ${record.name} to ${ref}`, () => call(child.url, 'PATCH', `/v2/deployments/${record.id}`, body))
        if (!answer) break
        if (answer.status !== 200) {
          unexpected.push(`patch ${record.name}: ${answer.status} ${JSON.stringify(answer.body)}`)
          continue
        }
        record.revisions.push({ id: answer.body.latest_revision_id, ref, round, final: null })
        record.secrets = after
        record.pending = null
      } else {
        const record: ThreadRecord = { id: randomUUID(), metadata: { suite: SUITE, label: tag, round, client: c }, round, state: 'unknown' }
        ledger.threads.push(record)
        const answer = await attempt(`thread ${tag}`, () => call(child.url, 'POST', '/threads', { thread_id: record.id, metadata: record.metadata }))
        if (!answer) break
        if (answer.status !== 200 || answer.body.thread_id !== record.id) {
          unexpected.push(`thread ${tag}: ${answer.status} ${JSON.stringify(answer.body)}`)
          continue
        }
        record.state = 'acked'
      }
    }
  }

  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)))
  if (!killed) {
    unexpected.push(`every client stopped after ${answers} answers, before the kill at ${killAt}`)
    child.process.kill('SIGKILL')
  }
  totals.answers += answers
  const [, signal] = await child.exited
  return { answers, unexpected, signal }
}

// ---------------------------------------------------------------------------------------------
// Checks after a restart

async function setClock(child: Child, now: number) {
  await call(child.url, 'POST', '/_hangar/clock', { action: 'freeze' })
  return (await call(child.url, 'POST', '/_hangar/clock', { action: 'set', to: now })).body
}
async function advanceClock(child: Child, ms: number) {
  return (await call(child.url, 'POST', '/_hangar/clock', { action: 'advance', ms })).body
}

async function listDeployments(child: Child): Promise<any[]> {
  const all: any[] = []
  for (;;) {
    const page = await call(child.url, 'GET', `/v2/deployments?limit=100&offset=${all.length}`)
    if (page.status !== 200) throw new Error(`list deployments: ${page.status} ${JSON.stringify(page.body)}`)
    all.push(...page.body.resources)
    if (page.body.resources.length < 100) return all
  }
}
async function listRevisions(child: Child, id: string): Promise<Answer & { all: any[] }> {
  const all: any[] = []
  for (;;) {
    const page = await call(child.url, 'GET', `/v2/deployments/${id}/revisions?limit=100&offset=${all.length}`)
    if (page.status !== 200) return { ...page, all }
    all.push(...page.body.resources)
    if (page.body.resources.length < 100) return { ...page, all }
  }
}
async function searchThreads(child: Child): Promise<any[]> {
  const all: any[] = []
  for (;;) {
    const page = await call(child.url, 'POST', '/threads/search', { metadata: { suite: SUITE }, limit: 1000, offset: all.length })
    if (page.status !== 200) throw new Error(`search threads: ${page.status} ${JSON.stringify(page.body)}`)
    all.push(...page.body)
    if (page.body.length < 1000) return all
  }
}

/**
 * The deployments after a restart, against the ledger. Settles what the kill left unknown (a create
 * or patch in flight is adopted if it is there whole, else recorded as absent/dropped) and returns
 * the problems found, by kind.
 */
async function checkDeployments(child: Child, round: number) {
  const problems = { lost: [] as string[], invented: [] as string[], halfWritten: [] as string[], disagree: [] as string[], content: [] as string[], status: [] as string[] }
  const listed = await listDeployments(child)
  const byName = new Map(listed.map((d) => [d.name as string, d]))
  if (byName.size !== listed.length) problems.invented.push(`the list repeats names: ${listed.length} entries, ${byName.size} names`)
  if (new Set(listed.map((d) => d.id)).size !== listed.length) problems.invented.push('the list repeats ids')
  const records = new Map(ledger.deployments.map((d) => [d.name, d]))
  for (const d of listed) {
    const record = records.get(d.name)
    if (!record) problems.invented.push(`${d.name} (${d.id}) was never sent`)
    else if (record.state === 'absent') problems.invented.push(`${d.name} was not there after an earlier restart, yet exists now`)
  }
  let adopted = 0
  let dropped = 0
  for (const record of ledger.deployments) {
    const d = byName.get(record.name)
    if (record.state === 'acked') {
      if (!d) problems.lost.push(`acknowledged create ${record.name} (${record.id}, round ${record.round}) is gone`)
      else if (d.id !== record.id) problems.lost.push(`${record.name} has id ${d.id}, acknowledged as ${record.id}`)
    } else if (record.state === 'unknown') {
      if (d) {
        record.state = 'acked'
        record.id = d.id
        record.revisions = [{ id: d.latest_revision_id, ref: record.createRef, round: record.round, final: null }]
        record.secrets = record.createSecrets
        adopted++
      } else {
        record.state = 'absent'
        dropped++
      }
    }
  }

  const touched: DeploymentRecord[] = []
  await pool(ledger.deployments.filter((r) => r.state === 'acked' && byName.has(r.name)), async (record) => {
    const listedEntry = byName.get(record.name)!
    const name = `${record.name} (${record.id})`
    const got = await call(child.url, 'GET', `/v2/deployments/${record.id}`)
    if (got.status !== 200) return void problems.disagree.push(`${name} is listed but GET answers ${got.status}`)
    if (!isDeepStrictEqual(got.body, listedEntry)) problems.disagree.push(`${name}: list ${JSON.stringify(listedEntry)} but get ${JSON.stringify(got.body)}`)
    const revisions = await listRevisions(child, record.id!)
    if (revisions.status !== 200) return void problems.halfWritten.push(`${name}: revisions answer ${revisions.status}`)
    const actual = revisions.all
    if (actual.length === 0) return void problems.halfWritten.push(`${name} has no revision`)
    // A patch the kill interrupted: committed (a newest revision with its ref) or not at all.
    if (record.pending) {
      if (actual.length === record.revisions.length + 1 && refOf(record.source, actual[0].source_revision_config) === record.pending.ref) {
        record.revisions.push({ id: actual[0].id, ref: record.pending.ref, round, final: null })
        record.secrets = record.pending.secrets
        adopted++
      } else dropped++
      record.pending = null
    }
    const expected = record.revisions.map((r) => [r.id, r.ref]).reverse()
    const seen = actual.map((r) => [r.id, refOf(record.source, r.source_revision_config)])
    if (!isDeepStrictEqual(seen, expected)) problems.lost.push(`${name}: revisions (newest first) ${JSON.stringify(seen)}, acknowledged ${JSON.stringify(expected)}`)
    if (got.body.latest_revision_id !== actual[0].id) problems.halfWritten.push(`${name}: latest_revision_id ${got.body.latest_revision_id} is not its newest revision ${actual[0].id}`)
    const latest = await call(child.url, 'GET', `/v2/deployments/${record.id}/revisions/${got.body.latest_revision_id}`)
    if (latest.status !== 200) problems.halfWritten.push(`${name}: latest_revision_id ${got.body.latest_revision_id} answers ${latest.status}`)
    else if (!isDeepStrictEqual(latest.body, actual[0])) problems.disagree.push(`${name}: its latest revision reads ${JSON.stringify(latest.body)}, listed ${JSON.stringify(actual[0])}`)

    // The content, as acknowledged.
    const d = got.body
    const want = {
      name: record.name, source: record.source, deployment_type: record.deploymentType, secrets: record.secrets,
      ref: record.revisions.at(-1)!.ref,
      integration: record.source === 'github' ? [GITHUB_INTEGRATION, 'https://github.com/acme/agent', 'langgraph.json'] : [null, null, null],
    }
    const have = {
      name: d.name, source: d.source, deployment_type: d.source_config.deployment_type, secrets: d.secrets,
      ref: refOf(record.source, d.source_revision_config),
      integration: [d.source_config.integration_id, d.source_config.repo_url, d.source_revision_config.langgraph_config_path],
    }
    if (!isDeepStrictEqual(have, want)) problems.content.push(`${name}: ${JSON.stringify(have)}, acknowledged ${JSON.stringify(want)}`)

    // Statuses at the instant of the kill: this round's newest revision CREATING, superseded ones
    // SKIPPED, earlier rounds' revisions as the previous round left them.
    const byId = new Map(record.revisions.map((r) => [r.id, r]))
    actual.forEach((revision: any, i: number) => {
      const r = byId.get(revision.id)
      if (!r) return
      const want = r.round === round ? (i === 0 ? 'CREATING' : 'SKIPPED') : r.final
      if (revision.status !== want) problems.status.push(`${name}: revision ${revision.id} (round ${r.round}) is ${revision.status} at the restart, expected ${want}`)
    })
    const active = actual.find((r: any) => r.status === 'DEPLOYED')?.id ?? null
    if (d.active_revision_id !== active || d.status !== (active ? 'READY' : 'AWAITING_DATABASE')) {
      problems.status.push(`${name}: status ${d.status}, active ${d.active_revision_id}; its newest DEPLOYED revision is ${active}`)
    }
    if (record.revisions.at(-1)!.round === round) touched.push(record)
  })
  return { problems, adopted, dropped, touched }
}

/** The threads after a restart: acknowledged ones there with their metadata, nothing unsent. */
async function checkThreads(child: Child) {
  const problems = { lost: [] as string[], invented: [] as string[], content: [] as string[] }
  const found = new Map((await searchThreads(child)).map((thread) => [thread.thread_id as string, thread]))
  const records = new Map(ledger.threads.map((r) => [r.id, r]))
  for (const [id] of found) {
    const record = records.get(id)
    if (!record) problems.invented.push(`thread ${id} was never sent`)
    else if (record.state === 'absent') problems.invented.push(`thread ${id} was not there after an earlier restart, yet exists now`)
  }
  let adopted = 0
  let dropped = 0
  for (const record of ledger.threads) {
    const thread = found.get(record.id)
    if (record.state === 'unknown') {
      record.state = thread ? 'acked' : 'absent'
      if (thread) adopted++
      else dropped++
    } else if (record.state === 'acked' && !thread) problems.lost.push(`acknowledged thread ${record.id} (${record.metadata.label}) is gone`)
    if (thread && !isDeepStrictEqual(thread.metadata, record.metadata)) {
      problems.content.push(`thread ${record.id}: metadata ${JSON.stringify(thread.metadata)}, sent ${JSON.stringify(record.metadata)}`)
    }
  }
  return { problems, adopted, dropped }
}

// ---------------------------------------------------------------------------------------------

t.comment(`crash-safety seed ${SEED} (rerun with HANGAR_CRASH_SEED=${SEED}); ${ROUNDS} rounds, ${CLIENTS} clients`)

const dbFile = join(t.testdir(), 'hangar.db')
const random = generator(SEED)
/** hangar's clock, as the test sets it after every start (see the top of the file). */
let now = Math.ceil((Date.now() + 24 * 3600_000) / 1000) * 1000
let child = await startHangar(dbFile)
t.teardown(() => {
  child.process.kill('SIGKILL')
})
t.same(await setClock(child, now), { now: new Date(now).toISOString(), now_ms: now, frozen: true }, 'the test owns the clock')

for (let round = 1; round <= ROUNDS; round++) {
  const killAt = KILL_AFTER.min + Math.floor(random() * (KILL_AFTER.max - KILL_AFTER.min + 1))
  const delayTurns = Math.floor(random() * 16)
  const last = round === ROUNDS
  await t.test(`round ${round}: killed ${delayTurns} turns after answer ${killAt}, restarted, everything acknowledged is there whole`, async (t) => {
    const loaded = await load(child, round, killAt, delayTurns)
    t.equal(loaded.signal, 'SIGKILL', 'the child died of SIGKILL')
    t.same(loaded.unexpected, [], 'every request answered as expected until the kill')

    if (last) {
      // Once: the file the last kill left, opened directly (this also recovers its write-ahead log).
      const db = new Database(dbFile)
      try {
        t.same(db.pragma('integrity_check'), [{ integrity_check: 'ok' }], 'PRAGMA integrity_check is ok')
        t.same(db.pragma('foreign_key_check'), [], 'no dangling foreign keys')
        t.same(db.prepare('SELECT count(*) AS n FROM deployments d WHERE NOT EXISTS (SELECT 1 FROM revisions r WHERE r.deployment_seq = d.seq)').get(), { n: 0 }, 'no deployment row without a revision')
        const stored = db.prepare('SELECT count(*) AS n FROM deployments').get() as { n: number }
        t.ok(stored.n >= ledger.deployments.filter((d) => d.state === 'acked').length, 'at least every acknowledged deployment has a row')
      } finally {
        db.close()
      }
    }

    child = await startHangar(dbFile).catch((error: Error) => {
      t.fail(`hangar does not start again after the kill: ${error.message}`)
      throw error
    })
    t.equal((await setClock(child, now)).now_ms, now, 'the clock is back at the instant of the kill')

    const deployments = await checkDeployments(child, round)
    const threads = await checkThreads(child)
    totals.committedInFlight += deployments.adopted + threads.adopted
    totals.droppedInFlight += deployments.dropped + threads.dropped
    t.comment(`round ${round}: ${loaded.answers} answers; of the writes in flight at the kill ${deployments.adopted + threads.adopted} committed, ${deployments.dropped + threads.dropped} did not; ${ledger.deployments.filter((d) => d.state === 'acked').length} deployments, ${ledger.threads.filter((r) => r.state === 'acked').length} threads`)
    t.same(deployments.problems.lost, [], 'every acknowledged create and patch is there')
    t.same(deployments.problems.invented, [], 'no deployment that was never sent (or was gone before)')
    t.same(deployments.problems.halfWritten, [], 'every deployment has its revisions and its latest_revision_id exists')
    t.same(deployments.problems.disagree, [], 'list and get agree')
    t.same(deployments.problems.content, [], 'every deployment reads as acknowledged')
    t.same(deployments.problems.status, [], 'revisions are where they were at the kill')
    t.same(threads.problems.lost, [], 'every acknowledged thread is there')
    t.same(threads.problems.invented, [], 'no thread that was never sent (or was gone before)')
    t.same(threads.problems.content, [], 'every thread has its metadata')

    // The revisions the kill caught in progress move on with the clock.
    const touched = deployments.touched
    t.ok(touched.length > 0, 'some revisions were in progress at the kill')
    t.equal((await advanceClock(child, 1000)).now_ms, now + 1000, 'the clock moves one second')
    const notQueued: string[] = []
    await pool(touched, async (record) => {
      const id = record.revisions.at(-1)!.id
      const revision = await call(child.url, 'GET', `/v2/deployments/${record.id}/revisions/${id}`)
      if (revision.body?.status !== 'QUEUED') notQueued.push(`${record.name}: revision ${id} is ${revision.body?.status ?? revision.status}`)
    })
    t.same(notQueued, [], 'one second later, every revision caught CREATING is QUEUED')

    t.equal((await advanceClock(child, 10_000)).now_ms, now + 11_000, 'and ten more')
    now += 11_000
    const stuck: string[] = []
    const listed = new Map((await listDeployments(child)).map((d) => [d.id as string, d]))
    for (const record of ledger.deployments.filter((d) => d.state === 'acked')) {
      const d = listed.get(record.id!)
      const latest = record.revisions.at(-1)!.id
      if (!d || d.status !== 'READY' || d.active_revision_id !== latest || d.latest_revision_id !== latest) {
        stuck.push(`${record.name}: ${d ? `status ${d.status}, active ${d.active_revision_id}, latest ${d.latest_revision_id}` : 'not listed'}; expected READY on ${latest}`)
      }
    }
    await pool(touched, async (record) => {
      const revisions = await listRevisions(child, record.id!)
      const byId = new Map(record.revisions.map((r) => [r.id, r]))
      revisions.all.forEach((revision: any, i: number) => {
        const r = byId.get(revision.id)
        if (!r) return
        const want = r.round === round ? (i === 0 ? 'DEPLOYED' : 'SKIPPED') : r.final
        if (revision.status !== want) stuck.push(`${record.name}: revision ${revision.id} (round ${r.round}) is ${revision.status}, expected ${want}`)
        r.final = revision.status
      })
    })
    t.same(stuck, [], 'eleven seconds later, every deployment is READY on its latest revision, DEPLOYED; superseded ones SKIPPED')
  })
}

t.test('the kills caught writes in flight', async (t) => {
  const answeredAnyway = totals.inFlightAtKill - totals.committedInFlight - totals.droppedInFlight
  t.comment(`${totals.answers} answers in all; ${totals.inFlightAtKill} requests in flight at the kills: ${answeredAnyway} answered before the child died, ${totals.committedInFlight} committed unanswered, ${totals.droppedInFlight} never committed`)
  t.ok(totals.inFlightAtKill > 0, 'requests were in flight when the kills came')
  t.ok(totals.committedInFlight + totals.droppedInFlight > 0, 'and some of them went unanswered, so the restarts had outcomes to settle')
})

t.test('the last hangar stops cleanly on SIGTERM', async (t) => {
  child.process.kill('SIGTERM')
  t.same(await child.exited, [0, null])
})
