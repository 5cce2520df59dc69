// The agent server's store (long-term memory), driven by the official SDK's `client.store` over a
// real listening hangar, and by raw requests where the SDK would refuse to send them: items and
// their timestamps, ttl on hangar's clock (never slept), search with filters, operators, pages and
// a query, namespace listings, one store per agent server, resets, and every refusal's body.

import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { buildTestApp, clientFor, dockerDeployment, serveApp, START, TENANT_A, TENANT_B } from './helpers.js'

const MINUTE = 60_000
const at = (ms: number) => new Date(START + ms).toISOString()

async function serve(t: Test) {
  const served = await serveApp(t, { revisionSpeed: 'instant' })
  const sdk = (apiUrl = served.base) => new Client({ apiUrl, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  /** A raw request to the agent server at `prefix`: status and parsed body (null when empty). */
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${served.base}${path}`, {
      method,
      headers: { 'x-api-key': 'k', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text), type: response.headers.get('content-type') }
  }
  return { ...served, client: sdk(), sdk, call }
}

const keysOf = (result: { items: { key: string }[] }) => result.items.map((item) => item.key)

t.test('an item is stored, read back with its timestamps, replaced and deleted', async (t) => {
  const { client, clock, call } = await serve(t)
  await client.store.putItem(['users', 'u1'], 'prefs', { theme: 'dark', size: 3 })
  const item = await client.store.getItem(['users', 'u1'], 'prefs')
  t.same(item, {
    namespace: ['users', 'u1'], key: 'prefs', value: { theme: 'dark', size: 3 },
    created_at: at(0), updated_at: at(0), createdAt: at(0), updatedAt: at(0),
  }, 'the item as the SDK reads it (it adds createdAt/updatedAt)')
  const raw = await call('GET', '/store/items?key=prefs&namespace=users.u1')
  t.equal(raw.status, 200)
  t.same(Object.keys(raw.body), ['namespace', 'key', 'value', 'created_at', 'updated_at'], 'the fields of the document\'s Item, in its order')

  clock.advance(5 * MINUTE)
  await client.store.putItem(['users', 'u1'], 'prefs', { theme: 'light' })
  const replaced = await client.store.getItem(['users', 'u1'], 'prefs')
  t.same(replaced?.value, { theme: 'light' }, 'a put replaces the whole value')
  t.equal(replaced?.createdAt, at(0), 'created_at is kept')
  t.equal(replaced?.updatedAt, at(5 * MINUTE), 'updated_at moves')

  await client.store.deleteItem(['users', 'u1'], 'prefs')
  t.equal(await client.store.getItem(['users', 'u1'], 'prefs'), null, 'gone')
  const again = await call('DELETE', '/store/items', { namespace: ['users', 'u1'], key: 'prefs' })
  t.same([again.status, again.body], [204, undefined], 'deleting what is not there is no error')
})

t.test('a missing item is 200 with null, as the real server answers, in any namespace form', async (t) => {
  const { client, call } = await serve(t)
  t.equal(await client.store.getItem(['nobody'], 'nothing'), null)
  const missing = await call('GET', '/store/items?key=nothing&namespace=nobody')
  t.same([missing.status, missing.body, missing.type], [200, null, 'application/json; charset=utf-8'])
  t.same((await call('GET', '/store/items?key=nothing')).body, null, 'no namespace: nothing lives in the empty namespace')
  await client.store.putItem(['a', 'b'], 'k', { v: 1 })
  t.same((await call('GET', '/store/items?key=k&namespace=a&namespace=b')).body?.value, { v: 1 }, 'the document\'s form: one label per repeated parameter')
  t.same((await call('GET', '/store/items?key=k&namespace=a')).body, null, 'a namespace is matched whole, not by prefix')
})

t.test('an item past its ttl (minutes, on hangar\'s clock) is gone; reads refresh it unless told not to', async (t) => {
  const { client, clock, call } = await serve(t)
  await client.store.putItem(['cache'], 'short', { v: 1 }, { ttl: 1 })
  await client.store.putItem(['cache'], 'forever', { v: 2 })
  clock.advance(30_000)
  t.ok(await client.store.getItem(['cache'], 'short', { refreshTtl: false }), 'alive after 30 s (read without refreshing)')
  clock.advance(30_000)
  t.equal(await client.store.getItem(['cache'], 'short', { refreshTtl: false }), null, 'gone at one minute')
  t.same(keysOf(await client.store.searchItems(['cache'])), ['forever'], 'nor found by search')
  t.same((await client.store.listNamespaces()).namespaces, [['cache']])

  // A read refreshes by default (the store's refresh_on_read): the minute starts again.
  await client.store.putItem(['cache'], 'read', { v: 3 }, { ttl: 1 })
  clock.advance(50_000)
  t.ok(await client.store.getItem(['cache'], 'read'), 'read at 50 s, which refreshes')
  clock.advance(50_000)
  t.ok(await client.store.getItem(['cache'], 'read', { refreshTtl: false }), 'alive at 100 s: the read moved its expiry to 110 s')
  clock.advance(10_000)
  t.equal(await client.store.getItem(['cache'], 'read'), null, 'gone at 110 s')

  // Search refreshes the items it returns, unless refresh_ttl is false.
  await client.store.putItem(['s'], 'kept', { v: 1 }, { ttl: 2 })
  await client.store.putItem(['s'], 'lapsed', { v: 1 }, { ttl: 2 })
  clock.advance(MINUTE)
  t.same(keysOf(await client.store.searchItems(['s'], { filter: { v: 1 }, limit: 1, refreshTtl: true })), ['lapsed'], 'the page is the most recent item')
  t.same(keysOf(await client.store.searchItems(['s'], { refreshTtl: false })), ['lapsed', 'kept'])
  clock.advance(MINUTE + 1)
  t.same(keysOf(await client.store.searchItems(['s'])), ['lapsed'], 'only the item on the refreshed page outlived its first two minutes')

  // An item written again after it expired is a new item.
  await client.store.putItem(['cache'], 'short', { v: 9 }, { ttl: 1 })
  const reborn = await call('GET', '/store/items?key=short&namespace=cache&refresh_ttl=false')
  t.same([reborn.body.value, reborn.body.created_at], [{ v: 9 }, at(290_001)], 'created anew, at the current time (290.001 s)')
  t.same((await call('PUT', '/store/items', { namespace: ['cache'], key: 'past', value: {}, ttl: -1 })).status, 204)
  t.equal(await client.store.getItem(['cache'], 'past'), null, 'a ttl of no time at all has already lapsed')
})

t.test('search lists the items under a prefix, most recently written first, ten to a page by default', async (t) => {
  const { client, clock } = await serve(t)
  for (let i = 0; i < 12; i++) {
    await client.store.putItem(['docs', i % 2 ? 'odd' : 'even'], `d${i}`, { i })
    clock.advance(1000)
  }
  await client.store.putItem(['docsx'], 'other', { i: 99 })
  await client.store.putItem(['docs', 'even'], 'd0', { i: 0, rewritten: true })
  const all = await client.store.searchItems(['docs'])
  t.same(keysOf(all), ['d0', 'd11', 'd10', 'd9', 'd8', 'd7', 'd6', 'd5', 'd4', 'd3'], 'ten, the rewritten item first; docsx is not under docs')
  t.same(keysOf(await client.store.searchItems(['docs'], { limit: 3, offset: 10 })), ['d2', 'd1'], 'the last page')
  t.same(keysOf(await client.store.searchItems(['docs', 'odd'], { limit: 100 })), ['d11', 'd9', 'd7', 'd5', 'd3', 'd1'])
  t.same(keysOf(await client.store.searchItems([], { limit: 2 })), ['d0', 'other'], 'an empty prefix is every namespace')
  t.same(keysOf(await client.store.searchItems(['docs'], { limit: 0 })), [], 'limit 0: an empty page')
  t.notOk('score' in all.items[0], 'no score without a query')
})

t.test('search filters on top-level fields: values, nested containment and the six comparison operators', async (t) => {
  const { client, call } = await serve(t)
  await client.store.putItem(['f'], 'a', { n: 5, tag: 'x', meta: { lang: 'en', level: 1 }, tags: ['red', 'big'] })
  await client.store.putItem(['f'], 'b', { n: 10, tag: 'y', meta: { lang: 'fr', level: 2 } })
  await client.store.putItem(['f'], 'c', { n: '7', tag: 'z' })
  await client.store.putItem(['f'], 'd', { note: 'no n' })
  const found = async (filter: Record<string, unknown>) => keysOf(await client.store.searchItems(['f'], { filter })).sort()
  t.same(await found({ tag: 'x' }), ['a'], 'equality')
  t.same(await found({ tag: 'x', n: 10 }), [], 'every field must match')
  t.same(await found({ meta: { lang: 'fr' } }), ['b'], 'an object matches by containment')
  t.same(await found({ tags: ['big'] }), ['a'], 'a list matches when it holds the elements')
  t.same(await found({ 'meta.lang': 'en' }), [], 'a dotted key is a field name, not a path')
  t.same(await found({ n: { $eq: 5 } }), ['a'])
  t.same(await found({ n: { $ne: 5 } }), ['b', 'c', 'd'], '$ne holds for items without the field')
  t.same(await found({ n: { $gt: 5 } }), ['b'], 'numbers compare with numbers only: "7" is a string')
  t.same(await found({ n: { $gte: 5 } }), ['a', 'b'])
  t.same(await found({ n: { $lt: 10 } }), ['a'])
  t.same(await found({ n: { $lte: 10 } }), ['a', 'b'])
  t.same(await found({ n: { $gt: 4, $lt: 6 } }), ['a'], 'operators together are a range')
  t.same(await found({ tag: { $gte: 'y' } }), ['b', 'c'], 'strings compare with strings')
  const refused = await call('POST', '/store/items/search', { namespace_prefix: ['f'], filter: { n: { $in: [5] } } })
  t.same([refused.status, refused.body], [422, { detail: 'Unsupported operator: $in' }])
  const mixed = await call('POST', '/store/items/search', { namespace_prefix: [], filter: { n: { $gt: 1, lang: 'en' } } })
  t.same([mixed.status, mixed.body], [422, { detail: 'Unsupported operator: lang' }], 'an object with an operator is all operators')
})

t.test('a query ranks items by the share of its words they hold, with that score on each result', async (t) => {
  const { client, call } = await serve(t)
  await client.store.putItem(['m'], 'apples', { text: 'I like red apples' })
  await client.store.putItem(['m'], 'both', { text: 'Red apples, green pears' })
  await client.store.putItem(['m'], 'none', { text: 'blue sky' })
  await client.store.putItem(['m'], 'hidden', { text: 'red apples and pears' }, { index: false })
  await client.store.putItem(['m'], 'title', { title: 'pears', body: 'red apples' }, { index: ['title'] })
  const result = await client.store.searchItems(['m'], { query: 'red APPLES pears!' })
  t.same(result.items.map((item) => [item.key, item.score]), [
    ['both', 1], ['apples', 2 / 3], ['title', 1 / 3], ['none', 0],
  ], 'all three words, two, one (only the indexed title counts), none; an item indexed false is left out')
  t.same((await client.store.searchItems(['m'], { query: 'apples', limit: 1, offset: 1 })).items.map((i) => i.key), ['apples'], 'ties keep the listing order, then the page is cut')
  const raw = await call('POST', '/store/items/search', { namespace_prefix: ['m'], query: 'sky', limit: 1 })
  t.same(Object.keys(raw.body.items[0]), ['namespace', 'key', 'value', 'created_at', 'updated_at', 'score'])
  t.same(keysOf(await client.store.searchItems(['m'], { query: '' })), ['title', 'hidden', 'none', 'both', 'apples'], 'an empty query lists, without scores')
  await client.store.putItem(['lists'], 'tagged', { tags: ['Green', 'pears'], note: 'apples' }, { index: ['tags[*]'] })
  await client.store.putItem(['lists'], 'last', { tags: ['red', 'apples'] }, { index: ['tags[-1]'] })
  t.same((await client.store.searchItems(['lists'], { query: 'green apples' })).items.map((i) => [i.key, i.score]), [['last', 0.5], ['tagged', 0.5]],
    'every element of a list ([*]) or one from its end ([-1]); the unindexed note does not count; the tie in listing order')
})

t.test('namespaces are listed by prefix, suffix (with * for any label) and depth, sorted and paged', async (t) => {
  const { client } = await serve(t)
  for (const namespace of [['users', 'u2', 'docs', 'x'], ['users', 'u1'], ['orgs', 'o1', 'docs'], ['users', 'u2']]) {
    await client.store.putItem(namespace, 'k', { v: 1 })
  }
  const list = async (options: Parameters<typeof client.store.listNamespaces>[0] = {}) => (await client.store.listNamespaces(options)).namespaces
  t.same(await list(), [['orgs', 'o1', 'docs'], ['users', 'u1'], ['users', 'u2'], ['users', 'u2', 'docs', 'x']])
  t.same(await list({ prefix: ['users'] }), [['users', 'u1'], ['users', 'u2'], ['users', 'u2', 'docs', 'x']])
  t.same(await list({ prefix: ['users', 'u2'] }), [['users', 'u2'], ['users', 'u2', 'docs', 'x']])
  t.same(await list({ suffix: ['docs'] }), [['orgs', 'o1', 'docs']])
  t.same(await list({ prefix: ['*', '*', 'docs'] }), [['orgs', 'o1', 'docs'], ['users', 'u2', 'docs', 'x']], '* matches any label')
  t.same(await list({ suffix: ['docs', '*'] }), [['users', 'u2', 'docs', 'x']])
  t.same(await list({ maxDepth: 2 }), [['orgs', 'o1'], ['users', 'u1'], ['users', 'u2']], 'cut to two labels, each once')
  t.same(await list({ maxDepth: 1 }), [['orgs'], ['users']])
  t.same(await list({ prefix: ['users'], limit: 1, offset: 1 }), [['users', 'u2']])
  t.same(await list({ prefix: ['nobody'] }), [])
  await client.store.deleteItem(['users', 'u1'], 'k')
  t.same(await list({ prefix: ['users'], maxDepth: 2 }), [['users', 'u2']], 'a namespace whose items are all gone is gone')
})

t.test('each agent server has its own store: the root one and each deployment\'s', async (t) => {
  const { sdk, call } = await serve(t)
  const deployed = async (tenant: string) => {
    const created = await call('POST', '/v2/deployments', dockerDeployment({ name: 'memory' }), { 'x-tenant-id': tenant })
    t.equal(created.status, 201)
    return sdk(created.body.url)
  }
  const [root, first, second] = [sdk(), await deployed(TENANT_A), await deployed(TENANT_B)]
  await root.store.putItem(['shared'], 'k', { who: 'root' })
  await first.store.putItem(['shared'], 'k', { who: 'first' })
  t.same((await root.store.getItem(['shared'], 'k'))?.value, { who: 'root' })
  t.same((await first.store.getItem(['shared'], 'k'))?.value, { who: 'first' }, 'the same namespace and key, another item')
  t.equal(await second.store.getItem(['shared'], 'k'), null, 'a third agent server has none')
  t.same((await second.store.searchItems([])).items, [])
  t.same((await second.store.listNamespaces()).namespaces, [])
  await first.store.deleteItem(['shared'], 'k')
  t.same((await root.store.getItem(['shared'], 'k'))?.value, { who: 'root' }, 'a delete stays in its own store')
})

t.test('a workspace reset empties its deployments\' stores; a full reset empties every store', async (t) => {
  const { sdk, call } = await serve(t)
  const created = await call('POST', '/v2/deployments', dockerDeployment({ name: 'memory' }), { 'x-tenant-id': TENANT_A })
  const [root, deployed] = [sdk(), sdk(created.body.url)]
  await root.store.putItem(['n'], 'k', { v: 'root' })
  await deployed.store.putItem(['n'], 'k', { v: 'deployed' })

  t.equal((await call('POST', '/_hangar/reset', { workspace: TENANT_A })).status, 204)
  t.equal((await call('GET', `/deployments/${created.body.id}/agent/store/items?key=k&namespace=n`)).status, 404, 'the deployment went with its workspace')
  t.same((await root.store.getItem(['n'], 'k'))?.value, { v: 'root' }, 'the root agent server\'s store is not a workspace\'s')

  t.equal((await call('POST', '/_hangar/reset', {})).status, 204)
  t.equal(await root.store.getItem(['n'], 'k'), null, 'a full reset empties it')
})

t.test('bad requests get the real refusals: label rules as a sentence, schema errors as pydantic lists', async (t) => {
  const { call } = await serve(t)
  const labels = (received: string) => [422, { detail: `Namespace labels cannot be empty or contain periods. Received: ${received}` }]
  const answer = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body)
    return [res.status, res.body]
  }
  t.same(await answer('PUT', '/store/items', { namespace: ['a.b'], key: 'k', value: {} }), labels('a.b'), 'a label with a period')
  t.same(await answer('PUT', '/store/items', { namespace: ['a', ''], key: 'k', value: {} }), labels('a.'), 'an empty label')
  t.same(await answer('PUT', '/store/items', { namespace: [], key: 'k', value: {} }), [422, { detail: 'Namespace is required' }])
  t.same(await answer('PUT', '/store/items', { namespace: ['langgraph', 'x'], key: 'k', value: {} }), [422, { detail: 'Root label for namespace cannot be "langgraph". Received: langgraph.x' }])
  t.same(await answer('DELETE', '/store/items', { namespace: ['a.b'], key: 'k' }), labels('a.b'))
  t.same(await answer('GET', '/store/items?key=k&namespace=a..b'), labels('a..b'), 'a GET names its labels joined by periods')
  t.same(await answer('GET', '/store/items?key=k&namespace='), labels(''))
  t.same(await answer('POST', '/store/items/search', { namespace_prefix: ['p', ''] }), labels('p.'))
  t.same(await answer('POST', '/store/namespaces', { prefix: ['a.b'] }), labels('a.b'))
  t.same(await answer('POST', '/store/namespaces', { suffix: [''] }), labels(''))

  t.same(await answer('PUT', '/store/items', { namespace: 'a', key: 1, value: [1], ttl: 'soon', index: true }), [422, { detail: [
    { type: 'list_type', loc: ['body', 'namespace'], msg: 'Input should be a valid list', input: 'a' },
    { type: 'string_type', loc: ['body', 'key'], msg: 'Input should be a valid string', input: 1 },
    { type: 'dict_type', loc: ['body', 'value'], msg: 'Input should be a valid dictionary', input: [1] },
    { type: 'literal_error', loc: ['body', 'index', 'literal[False]'], msg: 'Input should be False', input: true, ctx: { expected: 'False' } },
    { type: 'list_type', loc: ['body', 'index', 'list[str]'], msg: 'Input should be a valid list', input: true },
    { type: 'float_parsing', loc: ['body', 'ttl'], msg: 'Input should be a valid number, unable to parse string as a number', input: 'soon' },
  ] }])
  t.same(await answer('PUT', '/store/items', { namespace: ['a'], key: 'k' }), [422, { detail: [
    { type: 'missing', loc: ['body', 'value'], msg: 'Field required', input: { namespace: ['a'], key: 'k' } },
  ] }])
  t.same(await answer('PUT', '/store/items', { namespace: ['a', 1], key: 'k', value: null }), [422, { detail: [
    { type: 'string_type', loc: ['body', 'namespace', 1], msg: 'Input should be a valid string', input: 1 },
    { type: 'dict_type', loc: ['body', 'value'], msg: 'Input should be a valid dictionary', input: null },
  ] }])
  t.same(await answer('DELETE', '/store/items', { namespace: ['a'] }), [422, { detail: [
    { type: 'missing', loc: ['body', 'key'], msg: 'Field required', input: { namespace: ['a'] } },
  ] }])
  t.same(await answer('GET', '/store/items?namespace=a&refresh_ttl=maybe'), [422, { detail: [
    { type: 'missing', loc: ['query', 'key'], msg: 'Field required', input: null },
    { type: 'bool_parsing', loc: ['query', 'refresh_ttl'], msg: 'Input should be a valid boolean, unable to interpret input', input: 'maybe' },
  ] }])
  t.same(await answer('POST', '/store/items/search', { limit: -1, offset: 'x', filter: [], query: 3, refresh_ttl: 'x' }), [422, { detail: [
    { type: 'dict_type', loc: ['body', 'filter'], msg: 'Input should be a valid dictionary', input: [] },
    { type: 'greater_than_equal', loc: ['body', 'limit'], msg: 'Input should be greater than or equal to 0', input: -1, ctx: { ge: 0 } },
    { type: 'int_parsing', loc: ['body', 'offset'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
    { type: 'string_type', loc: ['body', 'query'], msg: 'Input should be a valid string', input: 3 },
    { type: 'bool_parsing', loc: ['body', 'refresh_ttl'], msg: 'Input should be a valid boolean, unable to interpret input', input: 'x' },
  ] }])
  t.same(await answer('POST', '/store/namespaces', { max_depth: 0, limit: 'x' }), [422, { detail: [
    { type: 'greater_than_equal', loc: ['body', 'max_depth'], msg: 'Input should be greater than or equal to 1', input: 0, ctx: { ge: 1 } },
    { type: 'int_parsing', loc: ['body', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
  ] }])
  t.same(await answer('POST', '/store/items/search'), [422, { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] }], 'the document requires a body')
  const nothing = await call('POST', '/store/items/search', { namespace_prefix: [] })
  t.same(nothing.body, { items: [] }, 'and none of the refused writes was stored')
})

t.test('items and their expiry outlive a restart of hangar on the same database file', async (t) => {
  const db = join(t.testdir(), 'store.db')
  const { app: first, clock } = buildTestApp({ config: { db } })
  await first.ready()
  const before = clientFor(first)
  t.equal((await before.put('/store/items', { namespace: ['keep'], key: 'k', value: { v: 1 } })).status, 204)
  t.equal((await before.put('/store/items', { namespace: ['keep'], key: 'ttl', value: { v: 2 }, ttl: 1 })).status, 204)
  await first.close()

  const { app: second } = buildTestApp({ clock, config: { db } })
  t.teardown(() => second.close())
  await second.ready()
  const after = clientFor(second)
  t.same((await after.get('/store/items?key=k&namespace=keep')).body.value, { v: 1 })
  t.same((await after.get('/store/items?key=ttl&namespace=keep&refresh_ttl=false')).body.value, { v: 2 })
  clock.advance(MINUTE)
  t.same((await after.get('/store/items?key=ttl&namespace=keep')).body, null, 'its ttl ran on across the restart')
})
