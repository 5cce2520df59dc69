import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import t from 'tap'
import { buildTestApp, clientFor, makeApp, TENANT_A, TENANT_B } from './helpers.js'
import { completeFlow } from './oauth-helpers.js'

const REQUIRED = [
  'id', 'organization_id', 'provider_id', 'name', 'client_id', 'auth_url', 'token_url', 'uses_pkce',
  'code_challenge_method', 'provider_type', 'mcp_server_url', 'token_endpoint_auth_method', 'is_dynamic_client',
  'created_at', 'updated_at',
]

t.test('GET a provider answers every field of OAuthProviderResponse, defaults applied, never the client secret', async (t) => {
  const { api } = await makeApp(t)
  const github = await api.get('/v2/auth/providers/github')
  t.equal(github.status, 200)
  t.same(Object.keys(github.body), REQUIRED)
  t.equal(github.body.code_challenge_method, null, 'present even when null')
  t.equal(github.body.token_endpoint_auth_method, 'client_secret_post')
  t.equal(github.body.is_dynamic_client, false)
  t.notMatch(github.text, /client_secret"|hangar-github-secret/, 'the secret never leaves')
  const slack = (await api.get('/v2/auth/providers/slack')).body
  t.equal(slack.uses_pkce, true)
  t.equal(slack.code_challenge_method, 'S256')
  t.equal(slack.provider_type, 'slack')
})

t.test('every workspace starts with the fixture providers, seeded the first time it is seen', async (t) => {
  const { app } = await makeApp(t)
  for (const tenant of [TENANT_A, TENANT_B]) {
    const list = await clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': tenant }).get('/v2/auth/providers')
    t.equal(list.status, 200)
    t.same(list.body.map((p: any) => p.provider_id), ['github', 'slack', 'google'])
    t.ok(list.body.every((p: any) => p.organization_id === tenant), 'each workspace has its own providers')
  }
})

t.test('create answers 200 (not 201) with defaults; a duplicate provider_id in the workspace is 409', async (t) => {
  const { app, api } = await makeApp(t)
  const body = { provider_id: 'gitlab', name: 'GitLab', client_id: 'gl', client_secret: 's3cret', auth_url: 'https://gitlab.example/oauth/authorize', token_url: 'https://gitlab.example/oauth/token' }
  const res = await api.post('/v2/auth/providers', body)
  t.equal(res.status, 200)
  t.equal(res.body.uses_pkce, false)
  t.equal(res.body.code_challenge_method, null, 'no PKCE, no challenge method')
  t.equal(res.body.token_endpoint_auth_method, 'client_secret_post')
  t.notMatch(res.text, /s3cret/)
  const pkce = await api.post('/v2/auth/providers', { ...body, provider_id: 'gitlab-pkce', uses_pkce: true })
  t.equal(pkce.body.code_challenge_method, 'S256', 'PKCE defaults to S256')
  const dup = await api.post('/v2/auth/providers', body)
  t.equal(dup.status, 409)
  t.same(dup.body, { detail: "OAuth provider 'gitlab' already exists." })
  const elsewhere = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  t.equal((await elsewhere.post('/v2/auth/providers', body)).status, 200, 'another workspace may use the same provider_id')
  t.equal((await elsewhere.get('/v2/auth/providers/gitlab-pkce')).status, 404, 'and does not see this one\'s')
})

t.test('create validates its body like the real service', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/auth/providers', { provider_id: 'x', name: 'X', auth_url: 'a', token_url: 'b', token_endpoint_auth_method: 'magic' })
  t.equal(res.status, 422)
  t.same(res.body.detail.map((e: any) => [e.type, e.loc.join('.')]), [
    ['missing', 'body.client_id'],
    ['literal_error', 'body.token_endpoint_auth_method'],
  ])
})

t.test('patch changes the given fields; turning PKCE on defaults its method; unknown is 404', async (t) => {
  const { api, clock } = await makeApp(t)
  clock.advance(1000)
  const res = await api.patch('/v2/auth/providers/github', { name: 'GitHub Enterprise', uses_pkce: true, client_secret: 'rotated' })
  t.equal(res.status, 200)
  t.equal(res.body.name, 'GitHub Enterprise')
  t.equal(res.body.uses_pkce, true)
  t.equal(res.body.code_challenge_method, 'S256')
  t.equal(res.body.client_id, 'hangar-github-client', 'untouched fields stay')
  t.not(res.body.updated_at, res.body.created_at)
  const off = await api.patch('/v2/auth/providers/github', { uses_pkce: false })
  t.equal(off.body.code_challenge_method, null)
  t.same((await api.patch('/v2/auth/providers/nope', { name: 'x' })).body, { detail: "OAuth provider 'nope' not found." })
})

t.test('delete answers 200 and takes the provider\'s tokens with it', async (t) => {
  const { app, api } = await makeApp(t)
  await completeFlow(app, api, 'github')
  const res = await api.delete('/v2/auth/providers/github')
  t.equal(res.status, 200)
  t.same(res.body, { provider_id: 'github', deleted: true })
  t.equal((await api.get('/v2/auth/providers/github')).status, 404)
  t.same((await api.get('/v2/auth/tokens')).body, [])
  t.equal((await api.delete('/v2/auth/providers/github')).status, 404)
})

t.test('mcp-discover creates a dynamically registered PKCE client for the MCP server', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/auth/providers/mcp-discover', { provider_id: 'notes', name: 'Notes MCP', mcp_server_url: 'https://mcp.example.com/sse' })
  t.equal(res.status, 200)
  t.equal(res.body.mcp_server_url, 'https://mcp.example.com/sse')
  t.equal(res.body.auth_url, 'https://mcp.example.com/authorize')
  t.equal(res.body.token_url, 'https://mcp.example.com/token')
  t.equal(res.body.is_dynamic_client, true)
  t.equal(res.body.uses_pkce, true)
  t.equal(res.body.token_endpoint_auth_method, 'none')
  t.match(res.body.client_id, /^hangar-dcr-/)
  const bad = await api.post('/v2/auth/providers/mcp-discover', { provider_id: 'bad', name: 'Bad', mcp_server_url: 'not a url' })
  t.equal(bad.status, 400)
  t.same(bad.body, { detail: "mcp_server_url 'not a url' is not an http(s) URL." })
})

t.test('hangar\'s own OpenAPI document names the provider GET as the real service does', async (t) => {
  const { app } = await makeApp(t)
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const op = doc.paths['/v2/auth/providers/{provider_id}'].get
  t.equal(op.operationId, 'get_oauth_provider_v2_auth_providers__provider_id__get')
  t.same(op.tags, ['Auth Service (v2)'])
})

t.test('custom fixtures are seeded through the same code; an invalid fixture stops start-up with one line', async (t) => {
  const dir = t.testdir({
    'oauth-providers.json': JSON.stringify([{ provider_id: 'acme-sso', name: 'Acme SSO', client_id: 'c', auth_url: 'https://a', token_url: 'https://t' }]),
  })
  const { api } = await makeApp(t, { config: { fixtures: dir } })
  t.same((await api.get('/v2/auth/providers')).body.map((p: any) => p.provider_id), ['acme-sso'])

  const broken = t.testdir({ 'oauth-providers.json': JSON.stringify([{ provider_id: 'x', name: 'X' }]) })
  t.throws(() => buildTestApp({ config: { fixtures: broken } }), {
    message: `fixture ${join(broken, 'oauth-providers.json')}: [0].client_id: Field required`,
  })
  writeFileSync(join(broken, 'oauth-providers.json'), '{not json')
  t.throws(() => buildTestApp({ config: { fixtures: broken } }), /oauth-providers\.json: .*JSON/)
})
