// The routes served again under a second prefix: the control plane under /api-host, and each
// deployment's agent server under /deployments/{id}/agent. Each prefix reaches only its own
// routes, and everything that reads the path the client sent (404/405/307, the journal, fault
// rules, URLs built from the prefix) sees the prefix, as when the routes were registered twice.

import t, { type Test } from 'tap'
import { githubDeployment, makeApp, TENANT_A } from './helpers.js'

const ID = '5f0c5d4e-8a47-4b7e-9d43-6f2b1e0a9c11'

/** hangar in-process with one deployment of TENANT_A serving (its revision moved to DEPLOYED). */
async function withDeployment(t: Test) {
  const made = await makeApp(t)
  const { api, clock } = made
  const headers = { 'x-tenant-id': TENANT_A }
  const created = await api.post('/v2/deployments', githubDeployment({ name: 'copies' }), headers)
  t.equal(created.status, 201)
  const { id, latest_revision_id: revision } = created.body as { id: string; latest_revision_id: string }
  for (let poll = 0; ; poll++) {
    const { body } = await api.get(`/v2/deployments/${id}/revisions/${revision}`, headers)
    if (body.status === 'DEPLOYED') break
    if (poll > 200 || String(body.status).includes('FAILED')) throw new Error(`revision ended ${body.status}`)
    clock.advance(10_000)
  }
  return { ...made, headers, deployed: `/deployments/${id}/agent` }
}

t.test('each prefix reaches only the routes served under it', async (t) => {
  const { api, headers, deployed } = await withDeployment(t)
  // What each prefix does serve.
  t.equal((await api.get('/api-host/v2/deployments', headers)).status, 200)
  t.equal((await api.get(`${deployed}/ok`)).status, 200)
  t.equal((await api.post(`${deployed}/assistants/search`, {})).status, 200)
  // The other half, hangar's own paths and the documents are not under a prefix.
  for (const path of ['/api-host/threads', '/api-host/ok', '/api-host/assistants/search', '/api-host/_hangar/clock', '/api-host/openapi.json',
    `${deployed}/v2/deployments`, `${deployed}/v2/auth/providers`, `${deployed}/_hangar/clock`, `${deployed}/openapi.json`, `${deployed}/docs`]) {
    const res = await api.get(path, headers)
    t.equal(res.status, 404, path)
    t.same(res.body, { detail: 'Not Found' }, path)
  }
  // Nor is a prefix under another, nor one with an empty deployment id.
  t.equal((await api.get(`/api-host${deployed}/ok`)).status, 404)
  t.equal((await api.get('/deployments//agent/ok')).status, 404)
})

t.test('405 and 307 under a prefix name the prefixed path', async (t) => {
  const { app, deployed } = await withDeployment(t)
  const put = await app.inject({ method: 'PUT', url: `/api-host/v2/deployments/${ID}` })
  t.equal(put.statusCode, 405)
  t.equal(put.headers.allow, 'GET, PATCH, DELETE')
  const slash = await app.inject({ method: 'GET', url: '/api-host/v2/deployments/?limit=5' })
  t.equal(slash.statusCode, 307)
  t.equal(slash.headers.location, '/api-host/v2/deployments?limit=5')
  const ok = await app.inject({ method: 'PUT', url: `${deployed}/ok` })
  t.equal(ok.statusCode, 405)
  t.equal(ok.headers.allow, 'GET')
  const agentSlash = await app.inject({ method: 'POST', url: `${deployed}/assistants/search/` })
  t.equal(agentSlash.statusCode, 307)
  t.equal(agentSlash.headers.location, `${deployed}/assistants/search`)
  // A path served only at the root is no known path under a prefix: 404, not 405.
  const other = await app.inject({ method: 'PUT', url: `${deployed}/v2/deployments/${ID}` })
  t.equal(other.statusCode, 404)
})

t.test('an unknown deployment\'s prefix is its 404 on every path it serves, /ok too; a preflight still passes', async (t) => {
  const { app } = await withDeployment(t)
  const unknown = '99999999-9999-4999-8999-999999999999'
  for (const url of [`/deployments/${unknown}/agent/ok`, `/deployments/${unknown}/agent/info`]) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, url)
    t.same(res.json(), { detail: `Deployment ID ${unknown} not found.` }, url)
  }
  const preflight = await app.inject({
    method: 'OPTIONS', url: `/deployments/${unknown}/agent/threads`,
    headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], '*')
})

t.test('the journal records the path as sent, and a fault rule on a prefixed path applies there only', async (t) => {
  const { app, api, headers, deployed } = await withDeployment(t)
  const rule = await app.inject({ method: 'POST', url: '/_hangar/faults', payload: { path: `${deployed}/ok`, status: 503 } })
  t.equal(rule.statusCode, 201, rule.body)
  t.equal((await api.get(`${deployed}/ok`)).status, 503)
  t.equal((await api.get('/ok')).status, 200)
  t.equal((await api.get('/api-host/v2/listeners', headers)).status, 200)
  const journal = (await app.inject({ method: 'GET', url: '/_hangar/requests?limit=10' })).json()
  const paths = (journal.requests ?? journal.items ?? journal).map((r: { path: string }) => r.path)
  t.ok(paths.includes('/api-host/v2/listeners'), `journal paths: ${paths}`)
  t.ok(paths.includes(`${deployed}/ok`), `journal paths: ${paths}`)
})

t.test('the A2A card under a deployment\'s prefix points at the endpoint under it (the upload URL: deployment-builds.test.ts)', async (t) => {
  const { app, deployed } = await withDeployment(t)
  const card = await app.inject({ method: 'GET', url: `${deployed}/.well-known/agent-card.json?assistant_id=agent`, headers: { host: 'hangar.test', 'x-api-key': 'k' } })
  t.equal(card.statusCode, 200, card.body)
  t.match(card.json().url, `http://hangar.test${deployed}/a2a/`)
})
