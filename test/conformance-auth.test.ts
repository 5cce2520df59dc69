import t from 'tap'
import { conformanceRecorder, documentedStatuses } from './openapi-conformance.js'
import { makeApp, TENANT_A } from './helpers.js'
import { pathOf } from './oauth-helpers.js'

t.test('every Auth Service and Agent Connections response matches the real OpenAPI document, for every status', async (t) => {
  const { app, clock } = await makeApp(t)
  const { call, covered, problems } = conformanceRecorder(app)
  /** authenticate → consent → the redirect's code and state. */
  const approve = async (provider: string, agentId?: string) => {
    const started = (await call('POST', '/v2/auth/authenticate', { provider, scopes: ['read'], agent_id: agentId })).body
    const redirect = await app.inject({ method: 'GET', url: pathOf(started.url) })
    const location = new URL(redirect.headers.location as string)
    return { authId: started.auth_id, code: location.searchParams.get('code')!, state: location.searchParams.get('state')!, location }
  }

  // providers
  await call('GET', '/v2/auth/providers')
  const p = { provider_id: 'extra', name: 'Extra', client_id: 'c', auth_url: 'https://a', token_url: 'https://t' }
  await call('POST', '/v2/auth/providers', p)
  await call('POST', '/v2/auth/providers', p)
  await call('POST', '/v2/auth/providers', { name: 'no id' })
  await call('POST', '/v2/auth/providers/mcp-discover', { provider_id: 'mcp', name: 'MCP', mcp_server_url: 'https://mcp.example' })
  await call('POST', '/v2/auth/providers/mcp-discover', { provider_id: 'mcp', name: 'MCP', mcp_server_url: 'https://mcp.example' })
  await call('POST', '/v2/auth/providers/mcp-discover', { provider_id: 'mcp2', name: 'MCP', mcp_server_url: 'nope' })
  await call('POST', '/v2/auth/providers/mcp-discover', {})
  await call('GET', '/v2/auth/providers/github', undefined, { 'x-api-key': '', 'x-tenant-id': TENANT_A }) // the workspace header alone
  await call('GET', '/v2/auth/providers/ghost')
  await call('PATCH', '/v2/auth/providers/extra', { name: 'Renamed' })
  await call('PATCH', '/v2/auth/providers/ghost', { name: 'x' })
  await call('PATCH', '/v2/auth/providers/extra', { uses_pkce: 'sometimes' })
  await call('DELETE', '/v2/auth/providers/extra')
  await call('DELETE', '/v2/auth/providers/extra')

  // the flow
  await call('POST', '/v2/auth/authenticate', { provider: 'ghost', scopes: [] })
  await call('POST', '/v2/auth/authenticate', { provider: 'github' })
  const first = await approve('github', 'agent-1')
  await call('GET', `/v2/auth/wait/${first.authId}?timeout=0`)
  await call('GET', `/v2/auth/wait/${first.authId}?timeout=x`)
  await call('GET', pathOf(first.location.toString()), undefined, {})
  await call('GET', `/v2/auth/wait/${first.authId}`)
  await call('POST', '/v2/auth/authenticate', { provider: 'github', scopes: ['read'] })
  await call('GET', '/v2/auth/callback/github?code=used&state=nothing', undefined, {})
  await call('GET', '/v2/auth/callback/github?code=1&state=2&error=bad', undefined, {})
  const second = await approve('slack')
  await call('POST', '/v2/auth/callback/slack', { code: second.code, state: second.state })
  await call('POST', '/v2/auth/callback/slack', { code: second.code, state: second.state })
  await call('POST', '/v2/auth/callback/slack', { code: 1 })
  const third = await approve('google')
  await call('GET', `/v2/auth/setup/google?code=${third.code}&state=${third.state}`, undefined, {})
  await call('GET', '/v2/auth/setup/google?setup_action=update', undefined, {})
  await call('GET', '/v2/auth/setup/google?error=nope', undefined, {})
  await call('GET', '/v2/auth/setup/google?installation_id=abc', undefined, {})
  await call('GET', '/v2/auth/callback/github?code=1&state=2&installation_id=3&error=x', undefined, {})
  await call('GET', '/v2/auth/callback/github', undefined, {})

  // tokens
  const tokens = (await call('GET', '/v2/auth/tokens')).body
  await call('GET', '/v2/auth/tokens?provider_id=github')
  await call('GET', '/v2/auth/tokens/exists?provider_id=github')
  await call('GET', '/v2/auth/tokens/exists')
  await call('GET', '/v2/auth/tokens/workspace/slack/exists')
  await call('PATCH', `/v2/auth/tokens/${tokens[0].id}/metadata`, { provider_account_label: 'x' })
  await call('PATCH', '/v2/auth/tokens/ghost/metadata', { provider_account_label: 'x' })
  await call('PATCH', `/v2/auth/tokens/${tokens[0].id}/metadata`, { is_default: 'perhaps' })

  // agent connections
  await call('GET', '/v2/auth/agents/agent-1/connections')
  const connection = (await call('POST', '/v2/auth/agents/agent-2/connections', { oauth_token_id: tokens[0].id })).body
  await call('POST', '/v2/auth/agents/agent-2/connections', { oauth_token_id: tokens[0].id })
  await call('POST', '/v2/auth/agents/agent-2/connections', { oauth_token_id: 'ghost' })
  await call('POST', '/v2/auth/agents/agent-2/connections', {})
  await call('DELETE', `/v2/auth/agents/agent-2/connections/${connection.id}`)
  await call('DELETE', `/v2/auth/agents/agent-2/connections/${connection.id}`)
  await call('GET', '/v2/auth/agents/agent-1/connections?x=1')
  // 422 on routes whose parameters are all plain strings: a path segment cannot be missing, so
  // only the query/body-carrying ones above can answer 422; the rest are listed below as not reachable.

  await call('DELETE', `/v2/auth/tokens/${tokens[0].id}`)
  await call('DELETE', '/v2/auth/tokens/ghost')
  await call('DELETE', '/v2/auth/tokens?provider_id=google')
  await call('DELETE', '/v2/auth/tokens')
  await call('DELETE', '/v2/auth/tokens/workspace/slack')
  clock.advance(1)

  t.same(problems, [], 'every response conforms')
  const missing = [...documentedStatuses('Auth Service (v2)'), ...documentedStatuses('Agent Connections (v2)')].filter((k) => !covered.has(k))
  // A 422 needs an input that can be invalid; these routes take only strings (path segments, or
  // optional string query parameters), so no request can be a validation error.
  t.same(missing.sort(), [
    'DELETE /v2/auth/agents/{agent_id}/connections/{connection_id} 422',
    'DELETE /v2/auth/providers/{provider_id} 422',
    'DELETE /v2/auth/tokens/{token_id} 422',
    'GET /v2/auth/agents/{agent_id}/connections 422',
    'GET /v2/auth/callback/{provider_id} 422',
    'GET /v2/auth/providers/{provider_id} 422',
    'GET /v2/auth/tokens 422',
  ], 'every reachable documented status was exercised')
})
