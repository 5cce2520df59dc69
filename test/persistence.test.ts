import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { mock } from 'node:test'
import t from 'tap'
import Database from 'better-sqlite3'
import { MIGRATIONS } from '../src/store/migrations.js'
import { buildTestApp, clientFor, githubDeployment, makeApp, START, turn } from './helpers.js'

t.test('state survives a restart with a file database, and revisions resume their progression', async (t) => {
  const dir = t.testdir()
  const db = join(dir, 'nested', 'hangar.db')
  const { app: first, clock } = buildTestApp({ config: { db } })
  await first.ready()
  const api = clientFor(first)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  await api.patch(`/v2/deployments/${d.id}`, { secrets: [{ name: 'NEW', value: 'v' }] })
  clock.advance(2000)
  const before = (await api.get(`/v2/deployments/${d.id}`)).body
  await first.close()
  t.ok(existsSync(db), 'the directory was created on demand')

  clock.advance(60_000)
  const { app: second } = buildTestApp({ clock, config: { db } })
  t.teardown(() => second.close())
  await second.ready()
  const again = clientFor(second)
  const after = (await again.get(`/v2/deployments/${d.id}`)).body
  t.equal(after.latest_revision_id, before.latest_revision_id)
  t.same(after.secrets, before.secrets)
  t.equal(after.status, 'READY', 'the revision went on deploying while hangar was down')
  const revisions = (await again.get(`/v2/deployments/${d.id}/revisions`)).body.resources
  t.same(revisions.map((r: any) => r.status), ['DEPLOYED', 'SKIPPED'])
})

t.test('the schema is versioned: a database gets every migration once', async (t) => {
  const db = join(t.testdir(), 'v.db')
  await buildTestApp({ config: { db } }).app.close()
  const raw = new Database(db)
  t.teardown(() => raw.close())
  t.equal(raw.pragma('user_version', { simple: true }), MIGRATIONS.length)
  t.equal(raw.pragma('journal_mode', { simple: true }), 'wal')
  raw.pragma(`user_version = ${MIGRATIONS.length + 1}`)
  t.throws(() => buildTestApp({ config: { db } }), /written by a newer hangar/, 'a newer schema is refused, not damaged')
})

t.test('the ticker writes due transitions to the store while nobody reads', async (t) => {
  mock.timers.enable({ apis: ['setInterval'] })
  t.teardown(() => mock.timers.reset())
  const db = join(t.testdir(), 'tick.db')
  const { api, clock } = await makeApp(t, { config: { db, tickMs: 100 } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const reader = new Database(db, { readonly: true })
  t.teardown(() => reader.close())
  const stored = () => reader.prepare('SELECT status, status_at FROM revisions WHERE id = ?').get(d.latest_revision_id) as { status: string; status_at: number }

  clock.advance(6000)
  t.equal(stored().status, 'CREATING', 'nothing moved the stored row yet')
  mock.timers.tick(100)
  t.equal(stored().status, 'CREATING', 'written, but committed only once the writing stops (group commit)')
  await turn()
  t.same(stored(), { status: 'DEPLOYED', status_at: START + 6000 }, 'the tick persisted the transition at the time it happened')
})

t.test('while nobody follows the event stream, the ticker writes a revision once, at its end; a read writes what it shows', async (t) => {
  mock.timers.enable({ apis: ['setInterval'] })
  t.teardown(() => mock.timers.reset())
  const db = join(t.testdir(), 'ends.db')
  const { api, clock } = await makeApp(t, { config: { db, tickMs: 100 } })
  const [a, b] = [(await api.post('/v2/deployments', githubDeployment({ name: 'a' }))).body, (await api.post('/v2/deployments', githubDeployment({ name: 'b' }))).body]
  const reader = new Database(db, { readonly: true })
  t.teardown(() => reader.close())
  const stored = (d: any) => reader.prepare('SELECT status, status_at FROM revisions WHERE id = ?').get(d.latest_revision_id)
  const steps = (d: any) => reader.prepare(`SELECT s.status, s.at FROM revision_steps s JOIN revisions r ON r.seq = s.revision_seq
    WHERE r.id = ? ORDER BY s.at`).all(d.latest_revision_id)
  const tick = async () => {
    mock.timers.tick(100)
    await turn()
  }

  clock.advance(2_500)
  await tick()
  t.same(stored(a), { status: 'CREATING', status_at: START }, 'a step on the way is not written by the ticker')
  t.equal((await api.get(`/v2/deployments/${b.id}/revisions/${b.latest_revision_id}`)).body.status, 'AWAITING_BUILD')
  await turn()
  t.same(stored(b), { status: 'AWAITING_BUILD', status_at: START + 2_000 }, 'a read writes where the revision stands first')
  t.same(stored(a), { status: 'AWAITING_BUILD', status_at: START + 2_000 }, 'every revision due, as reads always did')

  clock.advance(3_500)
  await tick()
  t.same(stored(a), { status: 'DEPLOYED', status_at: START + 6_000 }, 'the end is written by the ticker, at the time it happened')
  t.same(steps(a), [{ status: 'AWAITING_BUILD', at: START + 2_000 }, { status: 'DEPLOYED', at: START + 6_000 }], 'two writes for six steps')
  const logs = (await api.get(`/v2/deployments/${a.id}/revisions/${a.latest_revision_id}/logs?type=build&limit=1000`)).body.logs
  t.equal(logs.find((line: any) => line.message.startsWith('Building revision'))?.timestamp, START + 3_000, 'the steps not written follow from the speed')
})

t.test('while someone follows the event stream, the ticker writes and announces every step as it happens', async (t) => {
  mock.timers.enable({ apis: ['setInterval'] })
  t.teardown(() => mock.timers.reset())
  const db = join(t.testdir(), 'followed.db')
  const { app, api, clock } = await makeApp(t, { config: { db, tickMs: 100 } })
  const heard: unknown[] = []
  const unsubscribe = app.emulator.bus.subscribe((message) => {
    if (message.topic === 'deployments' && message.data.status) heard.push(message.data.status)
  })
  t.teardown(unsubscribe)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const reader = new Database(db, { readonly: true })
  t.teardown(() => reader.close())
  const stored = () => reader.prepare('SELECT status, status_at FROM revisions WHERE id = ?').get(d.latest_revision_id)
  for (const [ms, status] of [[1_000, 'QUEUED'], [1_000, 'AWAITING_BUILD'], [1_000, 'BUILDING']] as const) {
    clock.advance(ms)
    mock.timers.tick(100)
    await turn()
    t.same(stored(), { status, status_at: clock.now() }, `${status} written by the ticker`)
  }
  t.same(heard, ['QUEUED', 'AWAITING_BUILD', 'BUILDING'], 'and announced')
})

t.test('a database of schema 12 upgrades: a revision in progress is written at its next step, then at its end', async (t) => {
  mock.timers.enable({ apis: ['setInterval'] })
  t.teardown(() => mock.timers.reset())
  const db = join(t.testdir(), 'v12.db')
  const { app: first, clock } = buildTestApp({ config: { db } })
  await first.ready()
  const d = (await clientFor(first).post('/v2/deployments', githubDeployment())).body
  await first.close()
  // The same database as hangar wrote it before migration 13.
  const old = new Database(db)
  old.exec('DROP INDEX revisions_ending; ALTER TABLE revisions DROP COLUMN ends_at')
  old.pragma(`user_version = ${MIGRATIONS.length - 1}`)
  old.close()

  const { app } = buildTestApp({ clock, config: { db, tickMs: 100 } })
  t.teardown(() => app.close())
  await app.ready()
  const reader = new Database(db, { readonly: true })
  t.teardown(() => reader.close())
  const stored = () => reader.prepare('SELECT status, status_at, next_at, ends_at FROM revisions WHERE id = ?').get(d.latest_revision_id)
  t.same(stored(), { status: 'CREATING', status_at: START, next_at: START + 1_000, ends_at: START + 1_000 }, 'its next step stands for its end')
  clock.advance(1_500)
  mock.timers.tick(100)
  await turn()
  t.same(stored(), { status: 'QUEUED', status_at: START + 1_000, next_at: START + 2_000, ends_at: START + 6_000 }, 'written then, with its real end')
  clock.advance(4_500)
  mock.timers.tick(100)
  await turn()
  t.same(stored(), { status: 'DEPLOYED', status_at: START + 6_000, next_at: null, ends_at: null })
})

t.test('a refused create writes neither a deployment nor a revision', async (t) => {
  const { api } = await makeApp(t)
  await api.post('/v2/deployments', githubDeployment({ name: 'one' }))
  const dup = await api.post('/v2/deployments', githubDeployment({ name: 'one' }))
  t.equal(dup.status, 400)
  const list = (await api.get('/v2/deployments')).body.resources
  t.equal(list.length, 1)
  const revisions = (await api.get(`/v2/deployments/${list[0].id}/revisions`)).body.resources
  t.equal(revisions.length, 1, 'no orphan revision was left behind')
})

t.test('a database of schema 7 upgrades: its checkpoints become the root graph\'s (namespace \'\') and read as before', async (t) => {
  const db = join(t.testdir(), 'old.db')
  const old = new Database(db)
  for (const [version, migration] of MIGRATIONS.slice(0, 7).entries()) {
    old.exec(migration)
    old.pragma(`user_version = ${version + 1}`)
  }
  const threadId = '33333333-3333-4333-8333-333333333333'
  const { lastInsertRowid: thread } = old.prepare(`INSERT INTO threads
    (scope, thread_id, metadata, status, state_values, interrupts, created_at, updated_at, state_updated_at)
    VALUES ('', ?, '{}', 'idle', '{"n":2}', '{}', ?, ?, ?)`).run(threadId, START, START, START)
  const checkpoint = old.prepare(`INSERT INTO checkpoints
    (thread_seq, checkpoint_id, parent_checkpoint_id, state_values, next, metadata, tasks, interrupts, created_at)
    VALUES (?, ?, ?, ?, '[]', ?, '[]', '{}', ?)`)
  checkpoint.run(thread, '1f000000-0000-6000-8000-000000000001', null, '{"n":1}', '{"source":"input","step":-1,"parents":{}}', START)
  checkpoint.run(thread, '1f000000-0000-6000-8000-000000000002', '1f000000-0000-6000-8000-000000000001', '{"n":2}', '{"source":"loop","step":0,"parents":{}}', START)
  old.close()

  const { app } = buildTestApp({ config: { db } })
  t.teardown(() => app.close())
  await app.ready()
  const api = clientFor(app)
  const history = (await api.post(`/threads/${threadId}/history`, {})).body
  t.strictSame(history.map((s: any) => [s.values, s.checkpoint.checkpoint_ns, s.checkpoint.checkpoint_map]), [[{ n: 2 }, '', null], [{ n: 1 }, '', null]])
  t.equal((await api.get(`/threads/${threadId}/state`)).body.checkpoint_id, '1f000000-0000-6000-8000-000000000002', 'the latest is the state')
  const reader = new Database(db, { readonly: true })
  t.teardown(() => reader.close())
  t.equal(reader.pragma('user_version', { simple: true }), MIGRATIONS.length)
  t.strictSame(reader.prepare('SELECT checkpoint_ns FROM checkpoints ORDER BY seq').all(), [{ checkpoint_ns: '' }, { checkpoint_ns: '' }])
})
