import t from 'tap'
import { clientFor, githubDeployment, makeApp, TENANT_A } from './helpers.js'

const GITHUB = '6f1a0c1e-1b43-4a9a-9f57-2f5f7f2d9a10'
const FORGE = 'b4c1d2e3-5f60-4a71-8b92-a3b4c5d6e7f8'
const GHOST = 'aaaaaaaa-0000-4000-8000-000000000000'

t.test('the GitHub installations the workspace sees are listed', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.get('/v1/integrations/github/install')
  t.equal(res.status, 200)
  t.same(res.body, [{ id: GITHUB, installation_id: 41000001, name: 'acme' }])
  t.same(Object.keys(res.body[0]), ['id', 'installation_id', 'name'], 'no fixture-only fields leak')
})

t.test('the Forge installations are listed separately', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.get('/v1/integrations/forge/github/install')
  t.equal(res.status, 200)
  t.same(res.body, [{ id: FORGE, installation_id: 41000002, name: 'acme-forge' }])
})

t.test('an integration\'s repositories carry its id as host_integration_id, in the spec\'s field order', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.get(`/v1/integrations/github/${GITHUB}/repos`)
  t.equal(res.status, 200)
  t.same(res.body, [
    { host_integration_id: GITHUB, id: 700000001, name: 'agent', owner: 'acme', url: 'https://github.com/acme/agent', default_branch: 'main' },
    {
      host_integration_id: GITHUB, id: 700000002, name: 'research-assistant', owner: 'acme',
      url: 'https://github.com/acme/research-assistant', default_branch: 'develop',
    },
  ])
  t.same(Object.keys(res.body[0]), ['host_integration_id', 'id', 'name', 'owner', 'url', 'default_branch'])
})

t.test('a Forge integration\'s repositories are listed on the Forge route', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.get(`/v1/integrations/forge/github/${FORGE}/repos`)
  t.equal(res.status, 200)
  t.same(res.body.map((r: any) => [r.host_integration_id, r.name]), [[FORGE, 'support-bot']])
})

t.test('the integration id may be sent in any UUID form', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.get(`/v1/integrations/github/${GITHUB.toUpperCase()}/repos`)
  t.equal(res.status, 200)
  t.equal(res.body.length, 2)
  t.equal(res.body[0].host_integration_id, GITHUB)
})

t.test('an integration the workspace does not see has no repositories (200 [])', async (t) => {
  const { api } = await makeApp(t)
  for (const url of [`/v1/integrations/github/${GHOST}/repos`, `/v1/integrations/forge/github/${GHOST}/repos`]) {
    const res = await api.get(url)
    t.equal(res.status, 200, url)
    t.same(res.body, [], url)
  }
})

t.test('a GitHub id on the Forge route, or the reverse, has no repositories', async (t) => {
  const { api } = await makeApp(t)
  t.same((await api.get(`/v1/integrations/forge/github/${GITHUB}/repos`)).body, [])
  t.same((await api.get(`/v1/integrations/github/${FORGE}/repos`)).body, [])
})

t.test('an integration id that is not a UUID is a 422 on the path', async (t) => {
  const { api } = await makeApp(t)
  for (const url of ['/v1/integrations/github/not-a-uuid/repos', '/v1/integrations/forge/github/not-a-uuid/repos']) {
    const res = await api.get(url)
    t.equal(res.status, 422, url)
    t.same(res.body, {
      detail: [{
        type: 'uuid_parsing', loc: ['path', 'integration_id'],
        msg: 'Input should be a valid UUID, invalid character: found `n` at 1', input: 'not-a-uuid',
        ctx: { error: 'invalid character: found `n` at 1' },
      }],
    }, url)
  }
})

t.test('a fixture integration limited to some workspaces is invisible to others', async (t) => {
  const dir = t.testdir({
    'integrations.json': JSON.stringify([{
      kind: 'github', id: GITHUB, installation_id: 7, name: 'private', workspaces: [TENANT_A],
      repos: [{ id: 1, name: 'r', owner: 'o', url: 'https://github.com/o/r', default_branch: 'main' }],
    }]),
  })
  const { app, api } = await makeApp(t, { config: { fixtures: dir } })
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': TENANT_A })
  t.same((await a.get('/v1/integrations/github/install')).body, [{ id: GITHUB, installation_id: 7, name: 'private' }])
  t.equal((await a.get(`/v1/integrations/github/${GITHUB}/repos`)).body.length, 1)
  t.same((await api.get('/v1/integrations/github/install')).body, [], 'the default workspace sees none')
  t.same((await api.get(`/v1/integrations/github/${GITHUB}/repos`)).body, [])
  t.same((await a.get('/v1/integrations/forge/github/install')).body, [], 'no forge fixtures, no forge installations')
})

t.test('integrations are also served under /api-host', async (t) => {
  const { api } = await makeApp(t)
  t.same((await api.get('/api-host/v1/integrations/github/install')).body, (await api.get('/v1/integrations/github/install')).body)
  t.equal((await api.get(`/api-host/v1/integrations/forge/github/${FORGE}/repos`)).body.length, 1)
})

t.test('integrations need credentials like every control-plane route', async (t) => {
  const { app } = await makeApp(t)
  const res = await app.inject({ method: 'GET', url: '/v1/integrations/github/install' })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { detail: 'Missing authentication headers' })
})

t.test('a listed repository\'s url and default branch, with its integration id, create a github deployment', async (t) => {
  const { api } = await makeApp(t)
  const [integration] = (await api.get('/v1/integrations/github/install')).body
  const repo = (await api.get(`/v1/integrations/github/${integration.id}/repos`)).body[1]
  const res = await api.post('/v2/deployments', githubDeployment({
    source_config: { integration_id: repo.host_integration_id, repo_url: repo.url, deployment_type: 'dev' },
    source_revision_config: { repo_ref: repo.default_branch, langgraph_config_path: 'langgraph.json' },
  }))
  t.equal(res.status, 201)
  t.equal(res.body.source_config.integration_id, integration.id)
  t.equal(res.body.source_config.repo_url, 'https://github.com/acme/research-assistant')
  t.equal(res.body.source_revision_config.repo_ref, 'develop')
})

t.test('a Forge repository creates a github deployment too', async (t) => {
  const { api } = await makeApp(t)
  const [repo] = (await api.get(`/v1/integrations/forge/github/${FORGE}/repos`)).body
  const res = await api.post('/v2/deployments', githubDeployment({
    source_config: { integration_id: repo.host_integration_id, repo_url: repo.url },
    source_revision_config: { repo_ref: repo.default_branch, langgraph_config_path: 'langgraph.json' },
  }))
  t.equal(res.status, 201)
  t.equal(res.body.source_config.integration_id, FORGE)
})
