// Statements compile at their first use (src/store/lazy-statement.ts), so an app is built without
// compiling the ~165 statements its repositories hold. What must still hold: every statement's SQL
// compiles, a statement behaves as compiled at once whatever was set on it before (pluck, bind),
// and what it writes still joins the group commit.

import t from 'tap'
import { defaultConfig } from '../src/config.js'
import { Clock } from '../src/clock.js'
import { buildServices } from '../src/services.js'
import { openDatabase } from '../src/store/db.js'
import { GroupCommit } from '../src/store/group-commit.js'
import { START } from './helpers.js'

t.test('every statement the services hold compiles', async (t) => {
  const services = buildServices({ ...defaultConfig(), db: ':memory:', logLevel: 'silent' }, Clock.manual(START))
  t.teardown(() => services.stateful.close())
  const group = GroupCommit.of(services.db)!
  const compiled = group.prepareAll()
  t.ok(compiled > 100, `${compiled} statements were not compiled until now`)
  t.equal(group.prepareAll(), 0, 'and none is left')
})

t.test('SQL that does not compile fails when the statement is compiled, with SQLite\'s error', async (t) => {
  const db = openDatabase(':memory:')
  t.teardown(() => db.close())
  const broken = db.prepare('SELEC 1')
  t.throws(() => GroupCommit.of(db)!.prepareAll(), /syntax error/)
  t.throws(() => broken.get(), /syntax error/, 'and again at its use')
})

t.test('modes and bound values set before the first use apply to it; a write joins the open group', async (t) => {
  const db = openDatabase(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE n (v INTEGER)')
  const count = db.prepare('SELECT count(*) FROM n').pluck()
  const insert = db.prepare('INSERT INTO n VALUES (?)').bind(7)
  const rows = db.prepare('SELECT v FROM n').raw()
  t.equal(count.get(), 0, 'plucked before it compiled')
  insert.run()
  t.same(rows.all(), [[7]], 'bound before it compiled; raw rows')
  t.ok(db.inTransaction, 'the insert opened the shared transaction')
  t.equal(insert.readonly, false)
  t.equal(count.readonly, true)
  t.equal(count.pluck(false).get() !== 0, true, 'a mode changed after it compiled applies too')
  t.same(count.get(), { 'count(*)': 1 })
  await GroupCommit.of(db)!.durable()
  t.notOk(db.inTransaction, 'committed once the writing stopped')
})
