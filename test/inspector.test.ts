// The inspector page's files at /_hangar/ui, and the two admin reads written for it: the workspaces
// hangar knows, and where each revision of a deployment stands with the time left to its next step.

import net from 'node:net'
import t from 'tap'
import { buildInspector } from './inspector-build.js'
import { clientFor, dockerDeployment, githubDeployment, makeApp, serveApp, START, TENANT_A } from './helpers.js'

const DEFAULT_WORKSPACE = '00000000-0000-4000-8000-68616e676172'
const NO_PLAN_WORKSPACE = '00000000-0000-4000-8000-00000000f403'
const GHOST = '5f0c5d4e-8a47-4b7e-9d43-6f2b1e0a9c11'

t.before(buildInspector)

t.test('the page, its style sheet and every script it imports are served with their types, uncached, from hangar itself', async (t) => {
  const { app } = await makeApp(t)
  const page = await app.inject({ method: 'GET', url: '/_hangar/ui' })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(page.headers['cache-control'], 'no-cache')
  t.match(page.headers['content-security-policy'], /script-src 'self'/)
  t.match(page.body, '<script type="module" src="/_hangar/ui/main.js"></script>')
  t.notMatch(page.body, /(src|href)="https?:/, 'nothing is loaded from another host')
  t.equal((await app.inject({ method: 'GET', url: '/_hangar/ui/' })).body, page.body, 'with a trailing slash too')

  const css = await app.inject({ method: 'GET', url: '/_hangar/ui/style.css' })
  t.equal(css.statusCode, 200)
  t.equal(css.headers['content-type'], 'text/css; charset=utf-8')

  // Follow the module graph from main.js: every import must be served, as JavaScript.
  const seen = new Set<string>()
  const pending = ['main.js']
  while (pending.length > 0) {
    const name = pending.pop()!
    if (seen.has(name)) continue
    seen.add(name)
    const script = await app.inject({ method: 'GET', url: `/_hangar/ui/${name}` })
    t.equal(script.statusCode, 200, `${name} is served`)
    t.equal(script.headers['content-type'], 'text/javascript; charset=utf-8', `${name} is JavaScript`)
    t.equal(script.headers['cache-control'], 'no-cache')
    for (const [, imported] of script.body.matchAll(/from ['"]\.\/([a-z0-9-]+\.js)['"]/g)) pending.push(imported)
  }
  t.ok(seen.size >= 5, `the page's scripts: ${[...seen].join(', ')}`)
})

t.test('the page needs no admin token (it holds no data); what it reads still does', async (t) => {
  const { app } = await makeApp(t, { config: { adminToken: 's3cret' } })
  for (const url of ['/_hangar/ui', '/_hangar/ui/style.css', '/_hangar/ui/main.js']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} without the token`)
  }
  for (const url of ['/_hangar/events', '/_hangar/workspaces', `/_hangar/deployments/${GHOST}/revisions`]) {
    const denied = await app.inject({ method: 'GET', url })
    t.equal(denied.statusCode, 401, `${url} without the token`)
    t.same(denied.json(), { detail: 'Admin token required' })
  }
  const workspaces = await app.inject({ method: 'GET', url: '/_hangar/workspaces', headers: { 'x-hangar-admin-token': 's3cret' } })
  t.equal(workspaces.statusCode, 200, 'with the token')
})

t.test('unknown files are 404, and no name reaches outside the page\'s directories', async (t) => {
  const { app } = await makeApp(t)
  for (const url of ['/_hangar/ui/nothing.js', '/_hangar/ui/package.json', '/_hangar/ui/..%2f..%2fpackage.json', '/_hangar/ui/..%2fsrc%2fapp.ts',
    '/_hangar/ui/%2e%2e%2f%2e%2e%2fpackage.json', '/_hangar/ui/Main.js', '/_hangar/ui/main.js.map', '/_hangar/ui/src/main.ts', '/_hangar/ui/..']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, url)
    t.same(res.json(), { detail: 'Not Found' }, `${url}: FastAPI's body`)
  }
  // Dot segments as sent on the wire, without a client that would resolve them first.
  const { port } = await serveApp(t)
  const raw = await new Promise<string>((resolve, reject) => {
    let answer = ''
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /_hangar/ui/../../package.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
    socket.on('data', (chunk) => (answer += chunk))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
  t.match(raw, /^HTTP\/1\.1 404 /)
  t.notMatch(raw, /"name": "hangar"/, 'package.json stays where it is')
})

t.test('loading the page is neither journaled nor faulted', async (t) => {
  const { app } = await makeApp(t)
  await clientFor(app, {}).post('/_hangar/faults', { path: '**', status: 503 })
  t.equal((await app.inject({ method: 'GET', url: '/_hangar/ui' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/_hangar/ui/main.js' })).statusCode, 200)
  t.equal(app.emulator.journal.size, 0)
})

t.test('the new admin routes are in /openapi.json under Emulator; the page\'s files are not', async (t) => {
  const { app } = await makeApp(t)
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  for (const path of ['/_hangar/events', '/_hangar/workspaces', '/_hangar/deployments/{deployment_id}/revisions']) {
    t.same(doc.paths[path]?.get?.tags, ['Emulator'], path)
  }
  t.ok(doc.paths['/_hangar/events'].get.responses['200'].content['text/event-stream'], 'the stream is documented as one')
  t.same(Object.keys(doc.paths).filter((p) => p.startsWith('/_hangar/ui')), [])
})

t.test('GET /_hangar/workspaces: the default first, then the fixtures\' and any a request named, with their names', async (t) => {
  const { api } = await makeApp(t)
  await api.get('/v2/deployments', { 'x-tenant-id': TENANT_A })
  const res = await api.get('/_hangar/workspaces')
  t.equal(res.status, 200)
  t.same(res.body.workspaces, [
    { id: DEFAULT_WORKSPACE, name: 'Default workspace', self_hosted_enterprise: true, default: true },
    { id: NO_PLAN_WORKSPACE, name: 'Cloud workspace without a self-hosted enterprise plan (listeners answer 403)', self_hosted_enterprise: false, default: false },
    { id: TENANT_A, name: null, self_hosted_enterprise: true, default: false },
  ])
  await api.post('/_hangar/reset', { workspace: TENANT_A })
  t.same((await api.get('/_hangar/workspaces')).body.workspaces.map((w: { id: string }) => w.id), [DEFAULT_WORKSPACE, NO_PLAN_WORKSPACE], 'a reset workspace is forgotten')
})

t.test('GET /_hangar/deployments/{id}/revisions: each revision, its next status and the time left at its speed', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', dockerDeployment(), { 'x-tenant-id': TENANT_A })).body
  const schedule = async () => {
    const res = await api.get(`/_hangar/deployments/${d.id}/revisions`)
    t.equal(res.status, 200)
    return res.body
  }
  t.same(await schedule(), {
    deployment_id: d.id, workspace: TENANT_A, speed: 'fast', now: new Date(START).toISOString(),
    revisions: [{ id: d.latest_revision_id, status: 'CREATING', speed: 'fast', next_status: 'QUEUED', next_at: new Date(START + 1000).toISOString(), next_in_ms: 1000 }],
    deletion: null,
  }, 'no X-Tenant-Id needed: the admin API reaches every workspace')

  clock.advance(1400)
  t.match((await schedule()).revisions[0], { status: 'QUEUED', next_status: 'AWAITING_DEPLOY', next_in_ms: 600 }, 'the clock moved it on and runs down the time left')

  await api.post(`/_hangar/deployments/${d.id}/speed`, { speed: 'manual' })
  t.match(await schedule(), { speed: 'manual', revisions: [{ status: 'QUEUED', speed: 'manual', next_status: 'AWAITING_DEPLOY', next_at: null, next_in_ms: null }] },
    'manual: it has a next status but no time')
  await api.post(`/_hangar/deployments/${d.id}/speed`, { speed: 'realistic' })
  t.match((await schedule()).revisions[0], { speed: 'realistic', next_in_ms: 30_000 }, 'a new speed restarts the step\'s timer: QUEUED lasts 30 s')

  const second = (await api.post(`/v2/deployments/${d.id}/revisions`, {}, { 'x-tenant-id': TENANT_A })).body
  const both = (await schedule()).revisions
  t.same(both.map((r: { id: string }) => r.id), [second.id, d.latest_revision_id], 'newest first')
  t.match(both[1], { status: 'SKIPPED', next_status: null, next_at: null, next_in_ms: null }, 'a finished revision has no next step')
  t.match(both[0], { status: 'CREATING', speed: 'realistic', next_in_ms: 10_000 })

  await api.post(`/_hangar/deployments/${d.id}/revisions/${second.id}/status`, { status: 'DEPLOYED' })
  t.match((await schedule()).revisions[0], { status: 'DEPLOYED', next_status: null, next_at: null })
})

t.test('GET /_hangar/deployments/{id}/revisions: a failing revision\'s track, poll speed, and the errors', async (t) => {
  const { api, clock } = await makeApp(t)
  const failing = (await api.post('/v2/deployments', githubDeployment({ source_revision_config: { repo_ref: 'hangar/fail-build', langgraph_config_path: 'langgraph.json' } }))).body
  await api.post(`/_hangar/deployments/${failing.id}/speed`, { speed: 'poll' })
  const steps: string[] = []
  for (;;) {
    const revision = (await api.get(`/_hangar/deployments/${failing.id}/revisions`)).body.revisions[0]
    t.equal(revision.next_at, null, 'poll: no time')
    steps.push(`${revision.status}→${revision.next_status}`)
    if (revision.next_status === null) break
    await api.get(`/v2/deployments/${failing.id}/revisions/${revision.id}`)
  }
  t.same(steps, ['CREATING→QUEUED', 'QUEUED→AWAITING_BUILD', 'AWAITING_BUILD→BUILDING', 'BUILDING→BUILD_FAILED', 'BUILD_FAILED→null'],
    'the admin read does not move a poll revision; the client\'s read does')

  const missing = await api.get(`/_hangar/deployments/${GHOST}/revisions`)
  t.equal(missing.status, 404)
  t.same(missing.body, { detail: `Deployment ID ${GHOST} not found.` })
  const deleted = (await api.post('/v2/deployments', dockerDeployment({ name: 'gone' }))).body
  await api.delete(`/v2/deployments/${deleted.id}`)
  t.match((await api.get(`/_hangar/deployments/${deleted.id}/revisions`)).body.deletion, { status: 'AWAITING_DELETE', next_status: 'AWAITING_FINAL_DELETE', next_in_ms: 2000 }, 'a deployment being deleted')
  clock.advance(3000)
  t.equal((await api.get(`/_hangar/deployments/${deleted.id}/revisions`)).status, 404, 'a deleted deployment')
  const invalid = await api.get('/_hangar/deployments/not-a-uuid/revisions')
  t.equal(invalid.status, 422)
  t.equal(invalid.body.detail[0].type, 'uuid_parsing')
})
