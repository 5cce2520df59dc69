// Deployment reads are answered from a cache while the database is unchanged. These tests are
// what a polling dashboard relies on: the cached answer is never behind a write, a clock move or
// the address the caller used.

import t from 'tap'
import { openDatabase } from '../src/store/db.js'
import { ReadCache } from '../src/store/read-cache.js'
import { dockerDeployment, githubDeployment, makeApp, TENANT_A } from './helpers.js'

t.test('an answer is kept until any row changes, a computation that writes is not kept, and the cache is bounded', async (t) => {
  const db = openDatabase(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE n (v INTEGER)')
  const cache = new ReadCache<number>(db, 2)
  let computed = 0
  const read = (key: string) => cache.get(key, () => ++computed)
  t.equal(read('a'), 1)
  t.equal(read('a'), 1, 'kept')
  db.prepare('INSERT INTO n VALUES (1)').run()
  t.equal(read('a'), 2, 'a write anywhere drops it')
  t.throws(() => db.transaction(() => { db.prepare('UPDATE n SET v = 2').run(); throw new Error('no') })())
  t.equal(read('a'), 3, 'even a rolled-back write drops it')
  t.equal(cache.get('w', () => { db.prepare('INSERT INTO n VALUES (3)').run(); return -1 }), -1)
  t.equal(cache.get('w', () => 7), 7, 'an answer whose computation wrote was not kept')
  read('b')
  read('c')
  t.equal(computed, 5, 'b and c computed once each; the third key cleared the full cache')
  t.equal(read('c'), 5)
  t.equal(read('b'), 6, 'b was dropped when the cache filled')
})

t.test('GET and list answers follow writes, the clock and the address the caller used', async (t) => {
  const { api, clock } = await makeApp(t)
  const created = (await api.post('/v2/deployments', dockerDeployment())).body
  const first = await api.get('/v2/deployments')
  t.equal(first.body.resources[0].status, 'AWAITING_DATABASE')
  t.equal(first.headers['content-type'], 'application/json; charset=utf-8')
  t.same((await api.get('/v2/deployments')).body, first.body, 'the same answer twice')

  clock.advance(60_000)
  t.equal((await api.get('/v2/deployments')).body.resources[0].status, 'READY', 'a move of the clock alone is seen: due steps are written first')
  t.equal((await api.get(`/v2/deployments/${created.id}`)).body.status, 'READY')

  await api.patch(`/v2/deployments/${created.id}`, { secrets: [{ name: 'K', value: 'v' }] })
  t.same((await api.get(`/v2/deployments/${created.id}`)).body.secrets.map((s: any) => s.name), ['K'], 'a PATCH is seen at once')
  t.same((await api.get('/v2/deployments')).body.resources[0].secrets.map((s: any) => s.name), ['K'])

  const gh = (await api.post('/v2/deployments', githubDeployment())).body
  const here = (await api.get(`/v2/deployments/${gh.id}`, { host: 'here.test' })).body
  const there = (await api.get(`/v2/deployments/${gh.id}`, { host: 'there.test' })).body
  t.equal(here.url, `http://here.test/deployments/${gh.id}/agent`)
  t.equal(there.url, `http://there.test/deployments/${gh.id}/agent`, 'the address is part of the answer')
  t.equal((await api.get('/v2/deployments', { 'x-tenant-id': TENANT_A })).body.resources.length, 0, 'another workspace has its own answer')

  await api.request('DELETE', `/v2/deployments/${gh.id}`)
  t.equal((await api.get(`/v2/deployments/${gh.id}`)).body.status, 'AWAITING_DELETE', 'a delete is seen at once')
  clock.advance(3000)
  t.equal((await api.get(`/v2/deployments/${gh.id}`)).status, 404, 'and its end, by the clock alone')
})
