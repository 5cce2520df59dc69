// Group commit (issue 19): writes made together share a transaction (a burst of ticks and
// microtasks commits its first writes at once, the rest when it is over), and what answers a write waits for its commit. What a user relies on: an answer (or a streamed event) is
// never ahead of the disk, a failed part rolls back alone, and a group the database lost
// is reported, not acknowledged. A second connection on the same file is the disk's witness.

import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, stat } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { closeDatabase, openDatabase, WAL_PAGES_PER_CHECKPOINT } from '../src/store/db.js'
import { GroupCommit } from '../src/store/group-commit.js'
import { buildApp } from '../src/app.js'
import { Clock } from '../src/clock.js'
import { dockerDeployment, START, until } from './helpers.js'

/**
 * The commits in a WAL file since it was last restarted: its frames that carry the header's salts
 * and end a transaction (a commit frame holds the database's size in pages; the others hold 0).
 */
function walCommits(wal: string): number {
  if (!existsSync(wal)) return 0
  const bytes = readFileSync(wal)
  if (bytes.length < 32) return 0
  const pageSize = bytes.readUInt32BE(8)
  const salts = bytes.subarray(16, 24)
  let commits = 0
  for (let at = 32; at + 24 + pageSize <= bytes.length; at += 24 + pageSize) {
    if (!bytes.subarray(at + 8, at + 16).equals(salts)) break
    if (bytes.readUInt32BE(at + 4) !== 0) commits++
  }
  return commits
}

function tempFile(t: Test, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-group-commit-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, name)
}

/** The rows another connection reads from the file: what is on disk. */
function onDisk(path: string, sql: string): unknown[] {
  const witness = new Database(path, { readonly: true })
  try {
    return witness.prepare(sql).all()
  } finally {
    witness.close()
  }
}

/** A database file with an empty table (by default `n (v)`), created and committed. */
async function tableOnDisk(t: Test, table = 'n (v INTEGER NOT NULL)') {
  const path = tempFile(t, 'h.db')
  const db = openDatabase(path)
  t.teardown(() => closeDatabase(db))
  const group = GroupCommit.of(db)!
  db.exec(`CREATE TABLE ${table}`)
  await group.durable()
  return { path, db, group }
}

t.test('writes made together are committed together once the writing stops, and durable() says when', async (t) => {
  const { path, db, group } = await tableOnDisk(t)
  t.equal(group.durable(), null, 'nothing pending once committed')

  const insert = db.prepare('INSERT INTO n (v) VALUES (?)')
  insert.run(1)
  db.transaction(() => insert.run(2))()
  t.ok(db.inTransaction, 'the shared transaction is open')
  const pending = group.durable()
  t.ok(pending instanceof Promise, 'a write is pending')
  t.same(onDisk(path, 'SELECT v FROM n ORDER BY v'), [], 'not on disk while the writing goes on')
  t.same(db.prepare('SELECT v FROM n ORDER BY v').all(), [{ v: 1 }, { v: 2 }], 'but the connection reads its own writes')
  await pending
  t.same(onDisk(path, 'SELECT v FROM n ORDER BY v'), [{ v: 1 }, { v: 2 }], 'both on disk once durable() resolves')
  t.notOk(db.inTransaction)
  t.equal(group.durable(), null)

  const read = db.prepare('SELECT count(*) AS c FROM n')
  read.get()
  t.equal(group.durable(), null, 'a read opens nothing')
})

t.test('a burst commits its first writes at once, and the rest together once it is over, before the next timer', async (t) => {
  const { path, db, group } = await tableOnDisk(t)
  const insert = db.prepare('INSERT INTO n (v) VALUES (?)')
  const rows = (...vs: number[]) => vs.map((v) => ({ v }))
  await new Promise(setImmediate)
  let groups = 0
  group.onSettled(() => groups++)
  const seenByTimer = new Promise<unknown[]>((resolve) => setImmediate(() => resolve(onDisk(path, 'SELECT v FROM n ORDER BY v'))))

  // What a clock move writes first (a run step's first event): on disk a microtask after the write.
  insert.run(0)
  await Promise.resolve()
  await Promise.resolve()
  t.same(onDisk(path, 'SELECT v FROM n ORDER BY v'), rows(0), 'the first write of the burst is on disk a microtask later')
  t.equal(groups, 1)

  // Then the rest of the step: a run's outputs come through async generators nested several deep,
  // each item taking several microtasks, with no write in between. One row per item.
  async function* source() {
    for (let v = 1; v <= 6; v++) yield v
  }
  async function* nest(inner: AsyncGenerator<number>, depth: number): AsyncGenerator<number> {
    if (depth === 0) return yield* inner
    yield* nest(inner, depth - 1)
  }
  for await (const v of nest(source(), 5)) {
    insert.run(v)
    await Promise.resolve()
  }
  t.same(onDisk(path, 'SELECT v FROM n ORDER BY v'), rows(0), 'the rest is not on disk while the burst goes on')
  t.same(await seenByTimer, rows(0, 1, 2, 3, 4, 5, 6), 'but is before a timer queued beforehand runs')
  t.equal(groups, 2, 'in one more commit')
  t.equal(group.durable(), null)

  // The next burst starts over: its first write is committed at once again.
  await new Promise(setImmediate)
  insert.run(7)
  await Promise.resolve()
  await Promise.resolve()
  t.same(onDisk(path, 'SELECT count(*) AS c FROM n'), [{ c: 8 }], 'the next burst\'s first write is on disk a microtask later')
})

t.test('a long burst commits every few hundred writes, so what it wrote first is not held until its end', async (t) => {
  const { path, db, group } = await tableOnDisk(t)
  await new Promise(setImmediate)
  const insert = db.prepare('INSERT INTO n (v) VALUES (?)')
  const count = () => (onDisk(path, 'SELECT count(*) AS c FROM n')[0] as { c: number }).c
  let groups = 0
  group.onSettled(() => groups++)

  // A clock move waking a thousand runs: one burst, thousands of writes a microtask or two apart.
  insert.run(0)
  for (let v = 1; v <= 1000; v++) {
    insert.run(v)
    await Promise.resolve()
  }
  const midway = count()
  t.ok(midway > 256, `writes of the burst are on disk before it ends (${midway} of 1001)`)
  t.ok(midway < 1001, 'the last ones are not yet')
  t.ok(groups >= 3 && groups <= 5, `in a few groups (${groups}), not one per write`)
  await new Promise(setImmediate)
  t.equal(count(), 1001, 'the rest once the burst is over')
})

t.test('a request read from a socket holds its group until the turn ends, and it commits before the next timer', async (t) => {
  const path = tempFile(t, 'h.db')
  const db = openDatabase(path)
  t.teardown(() => closeDatabase(db))
  db.exec('CREATE TABLE n (v INTEGER NOT NULL)')
  const group = GroupCommit.of(db)!
  await group.durable()
  const insert = db.prepare('INSERT INTO n (v) VALUES (?)')
  const rows = () => onDisk(path, 'SELECT v FROM n ORDER BY v').length
  const seen = await new Promise<Record<string, number>>((resolve) => {
    // An I/O callback, as a request's handler runs in one.
    stat(path, () => {
      const seen: Record<string, number> = {}
      setTimeout(() => resolve({ ...seen, 'the next timer': rows() }), 0)
      group.untilTurnEnd()
      insert.run(1)
      queueMicrotask(() => {
        seen['a microtask later'] = rows()
        insert.run(2)
        process.nextTick(() => queueMicrotask(() => process.nextTick(() => (seen['once the burst is over'] = rows()))))
      })
    })
  })
  t.same(seen, { 'a microtask later': 0, 'once the burst is over': 0, 'the next timer': 2 },
    'nothing on disk while the turn goes on (other requests may still join), both rows before the next timer')
  insert.run(3)
  await Promise.resolve()
  await Promise.resolve()
  t.equal(rows(), 3, 'a write after the turn commits as before: at the first microtask without a write')
})

t.test('creates read from their sockets in one turn share one commit', async (t) => {
  /** How many commits the eight creates made, counted in the WAL file. */
  async function commitsOf(together: boolean): Promise<number> {
    const path = tempFile(t, 'h.db')
    const app = buildApp({ clock: Clock.manual(START), config: { db: path, logLevel: 'silent' } })
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const sockets = await Promise.all(Array.from({ length: 8 }, () => new Promise<Socket>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket))
    })))
    const answer = (socket: Socket) => new Promise<{ status: number, id: string }>((resolve) => {
      let text = ''
      socket.setEncoding('utf8').on('data', (chunk) => {
        text += chunk
        const head = /^HTTP\/1\.1 (\d+)[^]*?content-length: (\d+)\r\n[^]*?\r\n\r\n/i.exec(text)
        if (head && text.length - head[0].length >= Number(head[2])) {
          resolve({ status: Number(head[1]), id: (JSON.parse(text.slice(head[0].length)) as { id: string }).id })
          socket.end()
        }
      })
    })
    const request = (i: number) => {
      const body = JSON.stringify(dockerDeployment({ name: `${together ? 'together' : 'apart'}-${i}` }))
      return `POST /v2/deployments HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    }
    // Every connection accepted, so that the server reads all eight requests in the turn they arrive.
    await until(() => new Promise<boolean>((resolve) => app.server.getConnections((_error, count) => resolve(count === 8))), 'the connections are accepted')
    const before = walCommits(`${path}-wal`)
    const answers: { status: number, id: string }[] = []
    if (together) {
      // Written at once: the server reads all eight in one turn of its event loop.
      const waiting = sockets.map(answer)
      sockets.forEach((socket, i) => socket.write(request(i)))
      answers.push(...await Promise.all(waiting))
    } else {
      for (const [i, socket] of sockets.entries()) {
        const waiting = answer(socket)
        socket.write(request(i))
        answers.push(await waiting)
      }
    }
    t.same(answers.map((a) => a.status), Array(8).fill(201), 'all eight created')
    t.equal(onDisk(path, `SELECT id FROM deployments WHERE name LIKE '${together ? 'together' : 'apart'}-%'`).length, 8, 'and on disk')
    return walCommits(`${path}-wal`) - before
  }
  t.equal(await commitsOf(false), 8, 'eight creates one after another: eight commits')
  t.equal(await commitsOf(true), 1, 'eight read in one turn: one commit')
})

t.test('a transaction that fails inside the group rolls back alone', async (t) => {
  const db = openDatabase(':memory:')
  t.teardown(() => closeDatabase(db))
  db.exec('CREATE TABLE n (v INTEGER NOT NULL UNIQUE)')
  const insert = db.prepare('INSERT INTO n (v) VALUES (?)')
  insert.run(1)
  t.throws(() => db.transaction(() => {
    insert.run(2)
    insert.run(1)
  })(), /UNIQUE/)
  t.throws(() => insert.run(1), /UNIQUE/, 'a failed statement outside a transaction')
  insert.run(3)
  await GroupCommit.of(db)!.durable()
  t.same(db.prepare('SELECT v FROM n ORDER BY v').all(), [{ v: 1 }, { v: 3 }], 'the others in the group are kept')
})

/** SQLite's temporary files this process holds open (SQLite unlinks them once open: "… (deleted)"). */
const sqliteTempFiles = () => readdirSync('/proc/self/fd')
  .map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } })
  .filter((target) => /etilqs_/.test(target))

t.test('what a savepoint may have to undo stays in memory: no temporary file, however much it changes', { skip: existsSync('/proc/self/fd') ? false : 'reads /proc/self/fd' }, async (t) => {
  const { db, group } = await tableOnDisk(t, 'pages (v BLOB NOT NULL)')
  // 256 KiB written in the group's transaction, then all of it again in one request's savepoint:
  // SQLite keeps each page's earlier content for the savepoint, past the 64 KiB it keeps in memory by default.
  const insert = db.prepare('INSERT INTO pages (v) VALUES (?)')
  for (let i = 0; i < 64; i++) insert.run(Buffer.alloc(4096, i))
  db.transaction(() => db.prepare('UPDATE pages SET v = zeroblob(4096)').run())()
  t.same(sqliteTempFiles(), [], 'no temporary file while the group is open')
  await group.durable()
  t.same(db.prepare('SELECT count(*) AS n, sum(length(v)) AS bytes FROM pages').get(), { n: 64, bytes: 64 * 4096 }, 'and the group commits what it wrote')
})

t.test(`commits leave up to ${WAL_PAGES_PER_CHECKPOINT} pages in the WAL before one copies them into the database`, async (t) => {
  const { path, db, group } = await tableOnDisk(t, 'pages (v BLOB NOT NULL)')
  const before = walCommits(`${path}-wal`)
  // 12 commits of 128 rows of a page each: ~1,550 pages, past SQLite's default of 1,000.
  const insert = db.prepare('INSERT INTO pages (v) VALUES (?)')
  for (let commit = 0; commit < 12; commit++) {
    for (let row = 0; row < 128; row++) insert.run(Buffer.alloc(4000, row))
    await group.durable()
  }
  t.equal(walCommits(`${path}-wal`), before + 12, 'all twelve are still in the WAL: no checkpoint restarted it')
  t.same(onDisk(path, 'SELECT count(*) AS n FROM pages'), [{ n: 12 * 128 }], 'and another connection reads them all')
})

t.test('a group the database rolled back is reported to whoever waits, and the next group starts clean', async (t) => {
  const path = tempFile(t, 'h.db')
  const db = openDatabase(path)
  t.teardown(() => closeDatabase(db))
  const group = GroupCommit.of(db)!
  db.exec(`CREATE TABLE n (v TEXT NOT NULL);
    CREATE TEMP TRIGGER boom BEFORE INSERT ON n WHEN NEW.v = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'the whole transaction goes'); END;`)
  await group.durable()
  const insert = db.prepare('INSERT INTO n (v) VALUES (?)')
  insert.run('lost')
  const pending = group.durable()!
  t.throws(() => insert.run('boom'), /the whole transaction goes/)
  await t.rejects(pending, /rolled back/, 'the group that lost its writes is not acknowledged')
  insert.run('kept')
  await group.durable()
  t.same(onDisk(path, 'SELECT v FROM n'), [{ v: 'kept' }])
})

t.test('a pragma and closing commit what is pending first', async (t) => {
  const path = tempFile(t, 'h.db')
  const db = openDatabase(path)
  db.exec('CREATE TABLE n (v INTEGER)')
  db.prepare('INSERT INTO n VALUES (1)').run()
  db.pragma('foreign_keys = OFF')
  t.equal(db.pragma('foreign_keys', { simple: true }), 0, 'the pragma took effect (it does nothing inside a transaction)')
  t.same(onDisk(path, 'SELECT v FROM n'), [{ v: 1 }], 'committed before the pragma')
  db.pragma('foreign_keys = ON')
  db.prepare('INSERT INTO n VALUES (2)').run()
  t.same(db.transaction(() => {
    db.prepare('INSERT INTO n VALUES (3)').run()
    return db.pragma('foreign_key_check')
  })(), [], 'a pragma inside a transaction function belongs to it')
  t.same(onDisk(path, 'SELECT v FROM n ORDER BY v'), [{ v: 1 }], 'and commits nothing under it')
  closeDatabase(db)
  t.same(onDisk(path, 'SELECT v FROM n ORDER BY v'), [{ v: 1 }, { v: 2 }, { v: 3 }], 'committed at close')
})

t.test('an answer to a write leaves only once the write is on disk', async (t) => {
  const path = tempFile(t, 'h.db')
  const app = buildApp({ clock: Clock.manual(START), config: { db: path, logLevel: 'silent' } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const headers = { 'x-api-key': 'k', 'content-type': 'application/json' }
  // Several creates in flight at once; each answer is checked against the disk.
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => fetch(`http://127.0.0.1:${port}/v2/deployments`, {
    method: 'POST', headers, body: JSON.stringify(dockerDeployment({ name: `durable-${i}` })),
  }).then(async (response) => {
    const body = await response.json() as { id: string }
    const rows = onDisk(path, `SELECT d.id, count(r.seq) AS revisions FROM deployments d JOIN revisions r ON r.deployment_seq = d.seq WHERE d.id = '${body.id}' GROUP BY d.id`)
    return { status: response.status, rows }
  })))
  for (const [i, answer] of answers.entries()) {
    t.equal(answer.status, 201)
    t.same(answer.rows.length, 1, `deployment ${i} and its revision were on disk when its answer arrived`)
  }
})
