// What an operator or a frontend developer checks first: /info, the OpenAPI document and its docs
// page, and CORS for a local frontend.

import cors from '@fastify/cors'
import Fastify from 'fastify'
import t from 'tap'
import { CORS_OPTIONS } from '../src/cors.js'
import { VERSION } from '../src/version.js'
import { makeApp, START } from './helpers.js'

t.test('/info: the agent-server answer, plus version, uptime and the effective settings with secrets hidden', async (t) => {
  const { app, clock } = await makeApp(t, { config: { apiKeys: ['secret-key'], adminToken: 'sesame', revisionSpeed: 'instant' } })
  clock.advance(3_600_000)
  const response = await app.inject({ method: 'GET', url: '/info' })
  t.equal(response.statusCode, 200, 'no credentials needed: UIs call it to see whether the server is there')
  const info = response.json()
  t.equal(info.version, VERSION)
  t.same(info.flags, { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: true })
  t.equal(info.hangar.version, VERSION)
  t.ok(info.hangar.uptime_s >= 0 && info.hangar.uptime_s < 60, 'uptime is real time: the clock moved an hour, uptime did not')
  t.ok(Date.parse(info.hangar.started_at) > START, 'started_at is real time too')
  t.equal(info.hangar.settings.HANGAR_REVISION_SPEED, 'instant')
  t.equal(info.hangar.settings.HANGAR_DB, ':memory:')
  t.same(info.hangar.settings.HANGAR_API_KEYS, ['<hidden>'])
  t.equal(info.hangar.settings.HANGAR_ADMIN_TOKEN, '<hidden>')
  t.notMatch(response.body, /secret-key|sesame/, 'no secret anywhere in the answer')
})

t.test('/openapi.json documents every part once; /docs serves an interactive page without network', async (t) => {
  const { app } = await makeApp(t)
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const paths = Object.keys(doc.paths)
  for (const path of ['/v2/deployments', '/v2/auth/providers', '/v2/listeners', '/threads/{thread_id}/runs/stream', '/assistants/search',
    '/api/v1/feedback/tokens/{token}', '/_hangar/clock', '/_hangar/state', '/ok', '/info']) {
    t.ok(paths.includes(path), `documents ${path}`)
  }
  t.same(paths.filter((p) => p.startsWith('/api-host') || p.startsWith('/deployments/')), [], 'the copies under a second prefix are left out')
  const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((op: any) => op.operationId)).filter(Boolean)
  t.equal(new Set(ids).size, ids.length, 'every operationId is unique, as OpenAPI requires')
  t.match(doc.info.description, /\/deployments\/\{deployment_id\}\/agent/)

  const page = await app.inject({ method: 'GET', url: '/docs' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /swagger-ui/i)
  const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
  t.equal(initializer.statusCode, 200)
  const bundle = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' })
  t.equal(bundle.statusCode, 200, 'the UI\'s script comes from hangar itself, not a CDN')
  t.notMatch(page.body, /https?:\/\/(?!localhost)[a-z0-9.-]+\.(com|net|org|io)\//i, 'the page loads nothing from the network')
  const json = await app.inject({ method: 'GET', url: '/docs/json' })
  t.same(Object.keys(json.json().paths), paths, 'the page reads the same document')
})

t.test('CORS: any origin by default, with the headers the SDKs send and read', async (t) => {
  const { app } = await makeApp(t)
  const preflight = await app.inject({
    method: 'OPTIONS', url: '/threads/search',
    headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], '*')
  for (const header of ['x-api-key', 'x-tenant-id', 'authorization', 'last-event-id', 'content-type']) {
    t.match(preflight.headers['access-control-allow-headers'], header)
  }
  const actual = await app.inject({ method: 'GET', url: '/ok', headers: { origin: 'http://localhost:5173' } })
  t.equal(actual.headers['access-control-allow-origin'], '*')
  t.match(actual.headers['access-control-expose-headers'], /content-location/)
  t.match(actual.headers['access-control-expose-headers'], /(^|,\s*)location/)
})

t.test('CORS: a list of origins admits only those; "none" sends no CORS headers', async (t) => {
  const { app } = await makeApp(t, { config: { corsOrigins: ['http://localhost:3000'] } })
  const allowed = await app.inject({ method: 'GET', url: '/ok', headers: { origin: 'http://localhost:3000' } })
  t.equal(allowed.headers['access-control-allow-origin'], 'http://localhost:3000')
  const other = await app.inject({ method: 'GET', url: '/ok', headers: { origin: 'http://evil.test' } })
  t.equal(other.headers['access-control-allow-origin'], undefined)

  const { app: closed } = await makeApp(t, { config: { corsOrigins: ['none'] } })
  const none = await closed.inject({ method: 'GET', url: '/ok', headers: { origin: 'http://localhost:3000' } })
  t.equal(none.statusCode, 200)
  t.equal(none.headers['access-control-allow-origin'], undefined)
})

t.test('CORS: every answer and preflight carries the headers @fastify/cors itself gives for the same options', async (t) => {
  // hangar's own hook and preflight route (src/cors.ts, cheaper) against the library, answer for answer.
  const requests = [
    { method: 'GET', url: '/ok', headers: {} },
    { method: 'GET', url: '/ok', headers: { origin: 'http://localhost:3000' } },
    { method: 'GET', url: '/ok', headers: { origin: 'http://evil.test' } },
    { method: 'OPTIONS', url: '/threads/search', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key' } },
    { method: 'OPTIONS', url: '/threads/search', headers: { origin: 'http://evil.test', 'access-control-request-method': 'POST' } },
    { method: 'OPTIONS', url: '/no/such/path', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'DELETE' } },
  ] as const
  const cors_ = (headers: Record<string, unknown>, method: string) => Object.fromEntries(Object.entries(headers)
    .filter(([name]) => name.startsWith('access-control-') || name === 'vary' || (method === 'OPTIONS' && name === 'content-length')))
  for (const origins of [['*'], ['http://localhost:3000', 'https://app.example.com']]) {
    const library = Fastify()
    t.teardown(() => library.close())
    await library.register(cors, { ...CORS_OPTIONS, origin: origins.includes('*') ? '*' : origins })
    library.get('/ok', async () => ({ ok: true }))
    library.post('/threads/search', async () => [])
    const { app } = await makeApp(t, { config: { corsOrigins: origins } })
    for (const request of requests) {
      const [theirs, ours] = [await library.inject(request), await app.inject(request)]
      t.equal(ours.statusCode, theirs.statusCode, `${origins}: ${request.method} ${JSON.stringify(request.headers)}: status`)
      const what = `${origins}: ${request.method} ${request.url} ${JSON.stringify(request.headers)}`
      t.same(cors_(ours.headers, request.method), cors_(theirs.headers, request.method), `${what}: headers`)
      t.ok(Object.keys(cors_(ours.headers, request.method)).length > 0, 'some CORS header is there to compare')
      if (request.method === 'OPTIONS') t.equal(ours.body, theirs.body, `${what}: body`)
    }
  }
})
