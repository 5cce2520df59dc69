// The in-process API as a test suite uses it: start hangar, drive it over HTTP, wait for a revision
// by moving the clock, reset between tests, close.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { startHangar, waitForRevision } from '../src/index.js'
import { githubDeployment, SHIPPED_GRAPHS, TENANT_B } from './helpers.js'

const json = (body: unknown, tenant?: string) => ({
  method: 'POST',
  headers: { 'x-api-key': 'k', 'content-type': 'application/json', ...(tenant ? { 'x-tenant-id': tenant } : {}) },
  body: JSON.stringify(body),
})

t.test('start, create a deployment, wait for DEPLOYED without sleeping, reset, close', async (t) => {
  const hangar = await startHangar()
  t.teardown(() => hangar.close())
  t.match(hangar.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'a free port on the loopback interface')
  t.equal(hangar.clock.frozen, true, 'the clock only moves when the test moves it')
  const before = hangar.clock.now()

  const created = await (await fetch(`${hangar.url}/v2/deployments`, json(githubDeployment()))).json() as any
  const revision = await waitForRevision(hangar, created.id, created.latest_revision_id)
  t.equal(revision.status, 'DEPLOYED')
  t.equal(revision.id, created.latest_revision_id)
  t.ok(hangar.clock.now() > before, 'the wait moved the clock instead of sleeping')
  const agent = new Client({ apiUrl: created.url, apiKey: 'k' })
  t.equal((await agent.assistants.search({ limit: 100 })).length, SHIPPED_GRAPHS.length, 'the deployment serves its agent server (a system assistant per shipped graph)')

  await hangar.reset()
  const gone = await fetch(`${hangar.url}/v2/deployments/${created.id}`, { headers: { 'x-api-key': 'k' } })
  t.equal(gone.status, 404, 'reset forgot the deployment')

  await hangar.close()
  await t.rejects(fetch(`${hangar.url}/ok`), 'closed: nothing listens any more')
})

t.test('waitForRevision says how a revision ended when it is not the status awaited', async (t) => {
  const hangar = await startHangar({ config: { adminToken: 'sesame', apiKeys: ['ci'] } })
  t.teardown(() => hangar.close())
  const headers = { 'x-api-key': 'ci', 'content-type': 'application/json', 'x-tenant-id': TENANT_B }
  const failing = githubDeployment({ source_revision_config: { repo_ref: 'hangar/fail-build', langgraph_config_path: 'langgraph.json' } })
  const created = await (await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers, body: JSON.stringify(failing) })).json() as any
  const target = { url: hangar.url, apiKey: 'ci', tenantId: TENANT_B, adminToken: 'sesame' }

  await t.rejects(waitForRevision(target, created.id, created.latest_revision_id), /ended BUILD_FAILED, not DEPLOYED/)
  const failed = await waitForRevision(target, created.id, created.latest_revision_id, 'BUILD_FAILED')
  t.equal(failed.status, 'BUILD_FAILED', 'a failure can be what the test waits for')
  const again = await waitForRevision({ ...target, adminToken: undefined }, created.id, created.latest_revision_id, 'BUILD_FAILED')
  t.equal(again.status, 'BUILD_FAILED', 'already there: no clock move needed, so no admin token either')
  await t.rejects(waitForRevision({ ...target, tenantId: undefined }, created.id, created.latest_revision_id), /404 "Deployment ID .* not found\."/,
    'another workspace does not see the deployment')

  const fresh = await (await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers, body: JSON.stringify(githubDeployment({ name: 'second' })) })).json() as any
  await t.rejects(waitForRevision({ ...target, adminToken: 'wrong' }, fresh.id, fresh.latest_revision_id), /could not advance the clock: 401/)
  await t.rejects(waitForRevision(target, fresh.id, fresh.latest_revision_id, 'DEPLOYED', { maxPolls: 1 }), /was not DEPLOYED after 1 polls/)
})

t.test('the running handle carries its own credentials: waitForRevision(hangar, …) works with API keys, an admin token and a required workspace', async (t) => {
  const hangar = await startHangar({ config: { apiKeys: ['ci-key'], adminToken: 'sesame', requireTenant: true, defaultTenant: TENANT_B } })
  t.teardown(() => hangar.close())
  t.equal(hangar.apiKey, 'ci-key', 'an API key hangar accepts')
  t.equal(hangar.adminToken, 'sesame')
  t.equal(hangar.tenantId, TENANT_B)
  const headers = { 'x-api-key': 'ci-key', 'x-tenant-id': TENANT_B, 'content-type': 'application/json' }
  const created = await (await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers, body: JSON.stringify(githubDeployment()) })).json() as any
  const revision = await waitForRevision(hangar, created.id, created.latest_revision_id)
  t.equal(revision.status, 'DEPLOYED', 'polled with the accepted key and workspace, clock moved with the admin token')
  await hangar.reset()
  const gone = await fetch(`${hangar.url}/v2/deployments/${created.id}`, { headers })
  t.equal(gone.status, 404, 'reset went through the admin gate too')
})

t.test('without API keys configured, the handle still carries a key hangar accepts and no admin token', async (t) => {
  const hangar = await startHangar()
  t.teardown(() => hangar.close())
  t.type(hangar.apiKey, 'string')
  t.not(hangar.apiKey, '')
  t.equal(hangar.adminToken, undefined)
  const listed = await fetch(`${hangar.url}/v2/deployments`, { headers: { 'x-api-key': hangar.apiKey!, 'x-tenant-id': hangar.tenantId! } })
  t.equal(listed.status, 200)
})

t.test('a port already taken is an error, and nothing is left open', async (t) => {
  const first = await startHangar()
  t.teardown(() => first.close())
  const port = Number(new URL(first.url).port)
  await t.rejects(startHangar({ port }), /EADDRINUSE/)
})

t.test('close() lets go of the server: hangars started and closed back to back do not pile up', async (t) => {
  const servers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length
  const before = servers()
  for (let i = 0; i < 5; i++) {
    const hangar = await startHangar()
    t.equal(servers(), before + 1, `hangar ${i + 1} listens on one server`)
    await hangar.close()
    t.equal(servers(), before, `and once closed, its server is gone (hangar ${i + 1})`)
  }
})
