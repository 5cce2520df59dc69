// The tenant isolation matrix: every resource workspace A owns, asked for by workspace B through
// every route that can name it (at the root and under /api-host), is a 404 or is left out of B's
// lists — never A's data — and nothing B tries changes A's resources.

import t, { type Test } from 'tap'
import { clientFor, githubDeployment, makeApp, TENANT_A, TENANT_B } from './helpers.js'
import { completeFlow } from './oauth-helpers.js'

async function worldOfA(t: Test) {
  const { app } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const a = clientFor(app, { 'x-api-key': 'shared-key', 'x-tenant-id': TENANT_A })
  const b = clientFor(app, { 'x-api-key': 'shared-key', 'x-tenant-id': TENANT_B })
  const deployment = (await a.post('/v2/deployments', githubDeployment())).body
  const listener = (await a.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'cluster-a', compute_config: { k8s_namespaces: ['a'] } })).body
  await a.post('/v2/auth/providers', { provider_id: 'acme-sso', name: 'Acme SSO', client_id: 'c', client_secret: 's', auth_url: 'https://sso.acme.test/authorize', token_url: 'https://sso.acme.test/token' })
  const flow = await completeFlow(app, a, 'acme-sso', { agentId: 'agent-a' })
  const connection = (await a.get('/v2/auth/agents/agent-a/connections')).body.data[0]
  const pending = (await a.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'] })).body

  // A run on A's deployed agent, with feedback.
  const agent = `/deployments/${deployment.id}/agent`
  const thread = (await a.post(`${agent}/threads`, {})).body
  const run = (await a.post(`${agent}/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } }))
  const runId = /runs\/([0-9a-f-]+)/.exec(run.headers['content-location'] as string)![1]
  const feedback = (await a.post('/api/v1/feedback', { run_id: runId, key: 'helpful', score: 1 })).body
  const ids = { deployment: deployment.id, revision: deployment.latest_revision_id, listener: listener.id, provider: 'acme-sso',
    token: flow.tokenId, connection: connection.id, authId: pending.auth_id, thread: thread.thread_id, run: runId, feedback: feedback.id }
  return { app, a, b, ids, agent, token: flow.token }
}

t.test('every route that names a resource of workspace A answers workspace B with a 404 and no data', async (t) => {
  const { a, b, ids, agent } = await worldOfA(t)
  t.ok(Object.values(ids).every((id) => typeof id === 'string' && id.length > 0), 'workspace A has one of everything')
  const d = `/v2/deployments/${ids.deployment}`
  const controlPlane: [string, string, unknown?][] = [
    ['GET', d], ['PATCH', d, { source_revision_config: { repo_ref: 'b-was-here' } }], ['DELETE', d],
    ['GET', `${d}/revisions`], ['POST', `${d}/revisions`, {}], ['GET', `${d}/revisions/${ids.revision}`],
    ['POST', `${d}/revisions/${ids.revision}/redeploy`], ['POST', `${d}/revisions/${ids.revision}/interrupt`],
    ['DELETE', `/v2/deployments?deployment_ids=${ids.deployment}`],
    ['GET', `/v2/listeners/${ids.listener}`], ['PATCH', `/v2/listeners/${ids.listener}`, { compute_config: { k8s_namespaces: ['b'] } }],
    ['DELETE', `/v2/listeners/${ids.listener}`],
    ['GET', `/v2/auth/providers/${ids.provider}`], ['PATCH', `/v2/auth/providers/${ids.provider}`, { name: 'B' }],
    ['DELETE', `/v2/auth/providers/${ids.provider}`], ['POST', '/v2/auth/authenticate', { provider: ids.provider, scopes: ['read'] }],
    ['PATCH', `/v2/auth/tokens/${ids.token}/metadata`, { label: 'b' }], ['DELETE', `/v2/auth/tokens/${ids.token}`],
    ['POST', '/v2/auth/agents/agent-a/connections', { oauth_token_id: ids.token }],
    ['DELETE', `/v2/auth/agents/agent-a/connections/${ids.connection}`],
  ]
  for (const prefix of ['', '/api-host']) {
    for (const [method, path, body] of controlPlane) {
      const res = await b.request(method, prefix + path, body === undefined ? {} : { body })
      t.equal(res.status, 404, `${method} ${prefix}${path}`)
      t.same(Object.keys(res.body ?? {}), ['detail'], 'an error body and nothing else')
    }
  }
  const others: [string, string, unknown?][] = [
    ['GET', `/api/v1/runs/${ids.run}`], ['GET', `/runs/${ids.run}`], ['GET', `/api/v1/feedback/${ids.feedback}`],
    ['POST', '/api/v1/feedback', { run_id: ids.run, key: 'b', score: 0 }], ['POST', '/api/v1/feedback/tokens', { run_id: ids.run, feedback_key: 'b' }],
    ['GET', `${agent}/threads/${ids.thread}`], ['POST', `${agent}/threads/search`, {}],
  ]
  for (const [method, path, body] of others) {
    const res = await b.request(method, path, body === undefined ? {} : { body })
    t.equal(res.status, 404, `${method} ${path}`)
    t.same(Object.keys(res.body ?? {}), ['detail'])
  }

  const waited = await b.get(`/v2/auth/wait/${ids.authId}?timeout=0`)
  t.equal(waited.body.status, 'not_found', 'B cannot wait on A\'s OAuth flow')
  t.equal(waited.body.token, null, 'and no token')

  // Nothing B tried changed A's resources.
  t.equal((await a.get(d)).body.source_revision_config.repo_ref, 'main')
  t.equal((await a.get(`${d}/revisions`)).body.resources.length, 1, 'no revision was added')
  t.same((await a.get(`/v2/listeners/${ids.listener}`)).body.compute_config, { k8s_namespaces: ['a'] })
  t.equal((await a.get(`/v2/auth/providers/${ids.provider}`)).body.name, 'Acme SSO')
  t.equal((await a.get(`/v2/auth/agents/agent-a/connections`)).body.data.length, 1)
  t.equal((await a.get(`/v2/auth/tokens/exists?provider_id=${ids.provider}`)).body.has_token, true)
  t.equal((await a.get(`/api/v1/feedback?run=${ids.run}`)).body.length, 1, 'and no feedback was added to A\'s run')
})

t.test('workspace B\'s lists never show workspace A\'s resources', async (t) => {
  const { a, b, ids } = await worldOfA(t)
  const lists: [string, (body: any) => unknown[]][] = [
    ['/v2/deployments', (body) => body.resources.map((r: any) => r.id)],
    [`/v2/deployments?deployment_ids=${ids.deployment}`, (body) => body.resources.map((r: any) => r.id)],
    ['/v2/listeners', (body) => body.resources.map((r: any) => r.id)],
    ['/v2/auth/providers', (body) => body.data?.map((p: any) => p.provider_id) ?? body.map((p: any) => p.provider_id)],
    ['/v2/auth/tokens', (body) => (body.data ?? body).map((token: any) => token.id)],
    ['/v2/auth/agents/agent-a/connections', (body) => body.data.map((c: any) => c.id)],
    [`/api/v1/feedback?run=${ids.run}`, (body) => body.map((f: any) => f.id)],
    [`/api/v1/feedback/tokens?run_id=${ids.run}`, (body) => body.map((token: any) => token.id)],
  ]
  const all = Object.values(ids)
  for (const [path, idsIn] of lists) {
    const seenByA = await a.get(path)
    const seenByB = await b.get(path)
    t.equal(seenByB.status, 200, path)
    const leaked = (idsIn(seenByB.body) as string[]).filter((id) => all.includes(id))
    t.same(leaked, [], `${path}: none of A's ids`)
    t.notMatch(seenByB.text, new RegExp(ids.deployment), 'not even in passing')
    t.equal(seenByA.status, 200)
  }
  t.equal((await b.get(`/v2/auth/tokens/exists?provider_id=${ids.provider}`)).body.has_token, false)
  t.ok((await a.get('/v2/deployments')).body.resources.some((r: any) => r.id === ids.deployment), 'A still lists its own')
})

t.test('a bulk delete from workspace B deletes only what B owns', async (t) => {
  const { a, b, ids } = await worldOfA(t)
  const own = (await b.post('/v2/deployments', githubDeployment({ name: 'b_one' }))).body
  const res = await b.delete(`/v2/deployments?deployment_ids=${own.id}&deployment_ids=${ids.deployment}`)
  t.equal(res.status, 207)
  t.same(res.body, { deleted_ids: [own.id], failed: [{ deployment_id: ids.deployment, detail: `Deployment ID ${ids.deployment} not found.` }] })
  t.equal((await a.get(`/v2/deployments/${ids.deployment}`)).status, 200)
})
