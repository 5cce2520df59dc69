// The request journal: what it records, what it hides, how it is bounded and filtered.

import { request as httpRequest, type IncomingMessage } from 'node:http'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import type { FastifyPluginAsync } from 'fastify'
import { journalEntry, RequestJournal, type Recorded } from '../src/admin/journal.js'
import { SseWriter } from '../src/sse/writer.js'
import { githubDeployment, makeApp, serveApp, START, TENANT_A, TENANT_B, until } from './helpers.js'

/** hangar (optionally with test-only routes), optionally listening. */
async function journaled(t: Test, options: { capacity?: number; routes?: FastifyPluginAsync; listen?: boolean } = {}) {
  const config = { heartbeatMs: 0, journalSize: options.capacity ?? 1000 }
  const routes = options.routes && (() => options.routes!)
  const { app, clock, api } = options.listen ? await serveApp(t, config, { routes }) : await makeApp(t, { config, routes })
  const { journal } = app.emulator
  const entries = async (query = '') => (await api.get(`/_hangar/requests${query}`)).body.requests as any[]
  return { app, clock, journal, api, entries }
}

/** A hijacked event stream written like the run streams: `count` events, then the end (or, with `open`, it waits for the client to leave). */
const eventStream: FastifyPluginAsync = async (app) => {
  app.get('/test/events', async (request, reply) => {
    const query = request.query as { count?: string; open?: string }
    reply.hijack()
    const writer = new SseWriter(reply.raw, { heartbeatMs: 0, headers: { 'x-stream': 'test' } })
    for (let i = 0; i < Number(query.count ?? 1); i++) await writer.send({ id: String(i), event: 'tick', data: i })
    if (query.open) await new Promise((resolve) => writer.signal.addEventListener('abort', resolve))
    writer.close()
  })
}

t.test('a request is recorded with its method, path, query, status, clock time, workspace and latency', async (t) => {
  const { api, entries } = await journaled(t)
  await api.get('/v2/deployments?limit=5&offset=0', { 'x-tenant-id': TENANT_A })
  const [entry] = await entries()
  t.match(entry, {
    id: 1, time: new Date(START).toISOString(), method: 'GET', path: '/v2/deployments', query: 'limit=5&offset=0',
    status: 200, workspace: TENANT_A, request_body: null,
  })
  t.type(entry.latency_ms, 'number')
  t.ok(entry.latency_ms >= 0)
  t.equal(entry.request_headers['x-tenant-id'], TENANT_A)
  t.match(entry.response_headers['content-type'], /^application\/json/)
})

t.test('over a socket, the response headers are those that went on the wire, Node\'s own included', async (t) => {
  const { api, entries } = await journaled(t, { listen: true })
  const answer = await api.get('/v2/deployments/00000000-0000-4000-8000-000000000000')
  t.equal(answer.status, 404)
  const [entry] = await entries()
  t.equal(entry.status, 404)
  t.same(Object.keys(entry.response_headers).sort(), ['access-control-allow-origin', 'access-control-expose-headers', 'connection', 'content-length', 'content-type', 'date'])
  t.equal(entry.response_headers['content-length'], String(Buffer.byteLength(JSON.stringify(answer.body))))
  t.equal(entry.response_headers.connection, 'keep-alive')
})

t.test('a request that acts in no workspace is recorded with workspace null', async (t) => {
  const { api, entries } = await journaled(t)
  await api.post('/threads', {})
  const [entry] = await entries()
  t.equal(entry.path, '/threads')
  t.equal(entry.workspace, null)
})

t.test('a request refused by its gate and a request for an unknown path are recorded too', async (t) => {
  const { app, entries } = await journaled(t)
  await app.inject({ method: 'GET', url: '/v2/deployments' })
  await app.inject({ method: 'GET', url: '/nowhere' })
  t.same((await entries()).map((e) => [e.path, e.status]), [['/nowhere', 404], ['/v2/deployments', 401]])
})

t.test("hangar's own paths (the admin API, /ok, /openapi.json) are not recorded", async (t) => {
  const { api, entries, journal } = await journaled(t)
  await api.get('/ok')
  await api.get('/openapi.json')
  await api.get('/_hangar/requests')
  await api.delete('/_hangar/requests')
  t.same(await entries(), [])
  t.equal(journal.size, 0)
})

t.test('a 1,000-entry journal keeps the newest 1,000 of 1,001 requests and never allocates more', async (t) => {
  const { app, journal, api } = await journaled(t, { capacity: 1000 })
  t.equal(journal.allocated, 1000)
  for (let i = 1; i <= 1001; i++) await app.inject({ method: 'GET', url: `/nowhere?i=${i}` })
  const page = (await api.get('/_hangar/requests?limit=5000')).body
  t.equal(page.size, 1000)
  t.equal(page.capacity, 1000)
  t.equal(page.requests.length, 1000)
  t.equal(page.requests[0].query, 'i=1001', 'newest first')
  t.equal(page.requests.at(-1).query, 'i=2', 'the oldest request was dropped')
  t.equal(journal.allocated, 1000, 'the ring did not grow')
})

t.test('credentials, cookies and the admin token are redacted from request headers', async (t) => {
  const { app, entries } = await journaled(t)
  await app.inject({
    method: 'GET', url: '/v2/deployments',
    headers: { 'X-Api-Key': 'secret-1', authorization: 'Bearer secret-2', cookie: 'session=secret-3', 'x-hangar-admin-token': 'secret-4', 'user-agent': 'tests' },
  })
  const [entry] = await entries()
  t.match(entry.request_headers, {
    'x-api-key': '[redacted]', authorization: '[redacted]', cookie: '[redacted]', 'x-hangar-admin-token': '[redacted]', 'user-agent': 'tests',
  })
  t.notMatch(JSON.stringify(entry), /secret-/)
})

t.test('set-cookie response headers are redacted', async (t) => {
  const routes: FastifyPluginAsync = async (app) => {
    app.get('/test/cookie', async (_request, reply) => reply.header('set-cookie', ['a=secret1', 'b=secret2']).send({ ok: true }))
  }
  const { api, entries } = await journaled(t, { routes })
  await api.get('/test/cookie')
  const [entry] = await entries()
  t.equal(entry.response_headers['set-cookie'], '[redacted]')
  t.notMatch(JSON.stringify(entry), /secret1|secret2/)
})

t.test('the values of deployment secrets are redacted and their names kept', async (t) => {
  const { api, entries } = await journaled(t)
  t.equal((await api.post('/v2/deployments', githubDeployment())).status, 201)
  const body = JSON.parse((await entries())[0].request_body)
  t.same(body.secrets, [
    { name: 'OPENAI_API_KEY', value: '[redacted]' },
    { name: 'ANTHROPIC_API_KEY', value: '[redacted]' },
    { name: 'TAVILY_API_KEY', value: '[redacted]' },
  ])
  t.equal(body.name, 'my_deployment', 'everything else is kept')
})

t.test('client_secret, token, access_token, password and api_key fields are redacted at any depth', async (t) => {
  const { api, entries } = await journaled(t)
  const secrets = { client_secret: 's1', token: 's2', access_token: 's3', password: 's4', api_key: 's5' }
  await api.post('/threads', { metadata: { ...secrets, nested: [{ password: 's6', keep: 'visible' }] } })
  const body = JSON.parse((await entries())[0].request_body)
  t.same(body.metadata, {
    client_secret: '[redacted]', token: '[redacted]', access_token: '[redacted]', password: '[redacted]', api_key: '[redacted]',
    nested: [{ password: '[redacted]', keep: 'visible' }],
  })
})

t.test('a body that is not valid JSON still has its secret fields redacted', async (t) => {
  const { api, entries } = await journaled(t)
  const res = await api.request('POST', '/threads', { raw: '{"metadata": {"password": "hunter2", "note": "x"', headers: { 'content-type': 'application/json' } })
  t.equal(res.status, 422)
  const [entry] = await entries()
  t.equal(entry.status, 422)
  t.equal(entry.request_body, '{"metadata": {"password": "[redacted]", "note": "x"')
})

t.test('secret query parameters are redacted', async (t) => {
  const { app, entries } = await journaled(t)
  await app.inject({ method: 'GET', url: '/nowhere?api_key=k1&page=2&token=t1' })
  t.equal((await entries())[0].query, 'api_key=[redacted]&page=2&token=[redacted]')
})

t.test('a body without secrets is recorded exactly as sent', async (t) => {
  const { api, entries } = await journaled(t)
  const raw = '{ "metadata" : {"topic": "caf\u00e9"} }'
  await api.request('POST', '/threads', { raw, headers: { 'content-type': 'application/json' } })
  t.equal((await entries())[0].request_body, raw)
})

t.test('a body is cut to 4 KiB of text with a marker of its full size', async (t) => {
  const { api, entries } = await journaled(t)
  const sent = JSON.stringify({ metadata: { text: 'é'.repeat(5000) } })
  await api.request('POST', '/threads', { raw: sent, headers: { 'content-type': 'application/json' } })
  const body: string = (await entries())[0].request_body
  const [kept, marker] = body.split('…')
  t.ok(Buffer.byteLength(kept) <= 4096 && Buffer.byteLength(kept) >= 4095, 'at most 4 KiB, cut on a character boundary')
  t.ok(sent.startsWith(kept))
  t.equal(marker, `[truncated, ${Buffer.byteLength(sent)} bytes]`)
})

t.test('requests are filtered by method and by path, as a substring or a glob', async (t) => {
  const { api, entries } = await journaled(t)
  const thread = (await api.post('/threads', {})).body.thread_id
  await api.get(`/threads/${thread}`)
  await api.get(`/threads/${thread}/runs`)
  await api.get('/v2/deployments')
  t.same((await entries('?method=post')).map((e) => e.path), ['/threads'])
  t.same((await entries('?path=deploy')).map((e) => e.path), ['/v2/deployments'])
  t.same((await entries('?path=/threads/*')).map((e) => e.path), [`/threads/${thread}`])
  t.same((await entries('?path=/threads/**')).map((e) => e.path), [`/threads/${thread}/runs`, `/threads/${thread}`, '/threads'])
})

t.test('requests are filtered by exact status or by status class', async (t) => {
  const { app, entries } = await journaled(t)
  await app.inject({ method: 'GET', url: '/nowhere' })
  await app.inject({ method: 'GET', url: '/v2/deployments' })
  await app.inject({ method: 'GET', url: '/v2/deployments', headers: { 'x-api-key': 'k' } })
  t.same((await entries('?status=404')).map((e) => e.status), [404])
  t.same((await entries('?status=4xx')).map((e) => e.status), [401, 404])
  t.same((await entries('?status=2xx')).map((e) => e.status), [200])
})

t.test('a status filter that is neither a status nor a class is a 422', async (t) => {
  const { api } = await journaled(t)
  const res = await api.get('/_hangar/requests?status=oops')
  t.equal(res.status, 422)
  t.same(res.body.detail[0].loc, ['query', 'status'])
  t.equal(res.body.detail[0].type, 'string_pattern_mismatch')
})

t.test('requests are filtered by workspace', async (t) => {
  const { api, entries } = await journaled(t)
  await api.get('/v2/deployments', { 'x-tenant-id': TENANT_A })
  await api.get('/v2/listeners', { 'x-tenant-id': TENANT_B })
  t.same((await entries(`?workspace=${TENANT_B}`)).map((e) => e.path), ['/v2/listeners'])
})

t.test('since_id returns only later requests and limit caps the page, newest first', async (t) => {
  const { app, entries } = await journaled(t)
  for (let i = 1; i <= 5; i++) await app.inject({ method: 'GET', url: `/nowhere?i=${i}` })
  t.same((await entries('?since_id=3')).map((e) => e.id), [5, 4])
  t.same((await entries('?limit=2')).map((e) => e.id), [5, 4])
})

t.test('clearing empties the journal, and ids go on increasing', async (t) => {
  const { app, api, entries } = await journaled(t)
  await app.inject({ method: 'GET', url: '/nowhere' })
  t.equal((await api.delete('/_hangar/requests')).status, 204)
  const page = (await api.get('/_hangar/requests')).body
  t.same(page, { requests: [], size: 0, capacity: 1000 })
  await app.inject({ method: 'GET', url: '/nowhere' })
  t.same((await entries()).map((e) => e.id), [2])
})

t.test('a hijacked event stream is recorded once, with status 200 and the headers it wrote, when it ends', async (t) => {
  const { app, entries } = await journaled(t, { routes: eventStream })
  const res = await app.inject({ method: 'GET', url: '/test/events?count=3' })
  t.equal(res.statusCode, 200)
  t.equal(res.body.split('\n\n').length - 1, 3, 'three events')
  const streams = await entries('?path=/test/events')
  t.equal(streams.length, 1)
  t.equal(streams[0].status, 200)
  t.equal(streams[0].response_headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(streams[0].response_headers['x-stream'], 'test')
})

t.test('a stream the client leaves is recorded with status 200 when the connection closes, not before', async (t) => {
  const { app, journal } = await journaled(t, { routes: eventStream, listen: true })
  const port = (app.server.address() as { port: number }).port
  const req = httpRequest({ port, path: '/test/events?count=1&open=1', headers: { 'x-api-key': 'k' } })
  req.end()
  const res = await new Promise<IncomingMessage>((resolve) => req.once('response', resolve))
  await new Promise((resolve) => res.once('data', resolve))
  t.equal(journal.size, 0, 'not recorded while the stream is open')
  req.destroy()
  await until(() => journal.size > 0, 'the stream is journaled once its client left')
  const [entry] = journal.list()
  t.match(entry, { method: 'GET', path: '/test/events', query: 'count=1&open=1', status: 200 })
})

t.test('a journal of size 0 records nothing', async (t) => {
  const { app, api } = await journaled(t, { capacity: 0 })
  await app.inject({ method: 'GET', url: '/nowhere' })
  t.same((await api.get('/_hangar/requests')).body, { requests: [], size: 0, capacity: 0 })
})

// An entry's text is kept in the ring's bytes, not as the object it came as: what the journal shows
// must be what the object showed, whatever its strings hold.
// What a text encoding could lose: astral characters, Latin-1, line ends; and, in fewer strings (an
// entry holding one is kept as an object), NUL (the separator) and lone surrogates.
const special = ['a', 'Z', '😀', 'é', '\xff', 'ß', ':', ' ', '\r\n', '__proto__']
const anyText = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...special), maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...special, '\0', '\ud800', '\udc00'), maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
)
const recorded: fc.Arbitrary<Recorded> = fc.record({
  time: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  method: fc.oneof(fc.constantFrom('GET', 'POST', 'DELETE'), anyText),
  path: anyText.map((p) => `/${p}`),
  query: anyText,
  status: fc.integer({ min: 0, max: 999 }),
  latency_ms: fc.double({ min: 0, max: 1e6, noNaN: true }),
  workspace: fc.option(anyText),
  requestHeaders: fc.dictionary(anyText, fc.oneof({ weight: 5, arbitrary: anyText }, { weight: 1, arbitrary: fc.array(anyText, { maxLength: 2 }) }), { maxKeys: 6 }),
  body: fc.option(anyText.map((text) => ({ bytes: Buffer.from(text), contentType: 'text/plain', length: Buffer.byteLength(text) })), { nil: undefined }),
  responseHeaders: fc.oneof({ weight: 5, arbitrary: fc.array(fc.tuple(anyText, anyText)).map((lines) => lines.map(([n, v]) => `${n}: ${v}\r\n`).join('')) }, { weight: 1, arbitrary: fc.dictionary(anyText, anyText, { maxKeys: 3 }) }),
})

t.test('an entry kept in the ring\'s bytes shows exactly as the object it was recorded from', async (t) => {
  let kept = 0
  fc.assert(fc.property(fc.array(recorded, { minLength: 1, maxLength: 7 }), (entries) => {
    const journal = new RequestJournal(3)
    const ids = entries.map((entry) => journal.record(entry)!)
    const expected = entries.map((entry, i) => journalEntry({ ...entry, id: ids[i]! })).slice(-3).reverse()
    kept += Math.min(entries.length, 3) - journal.objectsKept
    return isDeepStrictEqual(journal.list(), expected)
  }), { numRuns: 2000 })
  t.ok(kept > 1000, `entries were kept as text (${kept}), not only as objects`)
})

t.test('an entry at the edge of a slot\'s bytes is kept whole, as text or as an object', async (t) => {
  const base: Recorded = { time: 0, method: 'GET', path: '/x', query: '', status: 200, latency_ms: 1, workspace: null, requestHeaders: {}, body: undefined, responseHeaders: 'a: b\r\n' }
  let asText = 0
  for (let n = 960; n < 1040; n++) {
    for (const tail of ['', 'é', '😀', '€']) {
      const entry = { ...base, requestHeaders: { 'x-pad': `${'p'.repeat(n)}${tail}` } }
      const journal = new RequestJournal(2)
      const id = journal.record(entry)!
      if (!isDeepStrictEqual(journal.list(), [journalEntry({ ...entry, id })])) return t.fail(`a ${n}-character value ending in ${JSON.stringify(tail)} came back changed`)
      if (journal.objectsKept === 0) asText++
    }
  }
  t.ok(asText > 0 && asText < 320, `some were kept as text (${asText}), the longest as objects`)
})

t.test('requests over a socket are kept in the ring\'s bytes; one larger than a slot as it came, shown the same', async (t) => {
  const { app, entries } = await journaled(t, { listen: true })
  const { journal } = app.emulator
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const headers = { 'x-api-key': 'k', 'content-type': 'application/json', 'x-note': 'café' }
  t.equal((await fetch(`${base}/v2/deployments?limit=2&name_contains=é`, { headers })).status, 200)
  t.equal((await fetch(`${base}/threads`, { method: 'POST', headers, body: '{"metadata":{"n":1}}' })).status, 200)
  t.equal(journal.objectsKept, 0, 'both kept as text')
  const long = 'v'.repeat(3000)
  t.equal((await fetch(`${base}/v2/deployments`, { headers: { ...headers, 'x-long': long } })).status, 200)
  t.equal(journal.objectsKept, 1, 'the request with a 3,000-byte header is kept as an object')
  const [big, post, get] = await entries()
  t.equal(big.request_headers['x-long'], long)
  t.match(post, { method: 'POST', path: '/threads', request_body: '{"metadata":{"n":1}}', status: 200 })
  t.match(get, { method: 'GET', path: '/v2/deployments', query: 'limit=2&name_contains=%C3%A9', status: 200 })
  t.equal(get.request_headers['x-note'], 'café', 'a Latin-1 byte (é is 0xE9 on the wire) is kept as its character')
  t.equal(get.request_headers['x-api-key'], '[redacted]')
  t.equal(get.response_headers['content-type'], 'application/json; charset=utf-8')
  t.match(get.response_headers, { connection: 'keep-alive', date: /GMT$/ })
})
