// The OpenAPI document's `security` against what the auth gates really do: every operation that
// needs credentials declares them, public ones declare none, and each declared alternative, sent
// alone, gets through its gate. Every documented operation is called over HTTP, so a route moved
// to another scope (or a gate added or dropped) cannot leave the document behind.

import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Config } from '../src/config.js'
import { serveApp, TENANT_A } from './helpers.js'

type Requirement = Record<string, string[]>
interface Operation { method: string; path: string; security?: Requirement[] }

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete'])

/** The bodies the gates answer with when they turn a request away (FastAPI's texts, as the real services send them). */
const GATE_REFUSALS = new Set([
  '401 Missing authentication headers', '401 Invalid token', '403 requires workspace specification', // control plane, Auth Service, tracing
  '403 Missing authentication headers', '403 Invalid API key', // agent server
  '401 Admin token required', // /_hangar
])

async function documented(t: Test, config: Partial<Config>) {
  const { base } = await serveApp(t, config)
  const doc = await (await fetch(`${base}/openapi.json`)).json() as {
    paths: Record<string, Record<string, { security?: Requirement[] }>>
    components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> }
  }
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.has(method)) operations.push({ method: method.toUpperCase(), path, security: operation.security })
    }
  }
  return { base, operations, schemes: doc.components.securitySchemes }
}

/** Whether the operation's gate turned the request away; answers are read as far as their status and first bytes. */
async function refusedByGate(base: string, operation: Operation, headers: Record<string, string>): Promise<boolean> {
  // Any value fills a path parameter: the gates run before parameters are validated.
  const url = base + operation.path.replace(/\{[^}]+\}/g, '5f3c6a1e-8d2b-4c7e-9a1f-0b6e2d4c8a10')
  const abort = new AbortController()
  const response = await fetch(url, { method: operation.method, headers, signal: abort.signal })
  if (response.status !== 401 && response.status !== 403) {
    abort.abort() // event streams stay open: their status is all this needs
    return false
  }
  const body = await response.json() as { detail?: unknown }
  return GATE_REFUSALS.has(`${response.status} ${body.detail}`)
}

/** The headers that present one alternative of a `security` list. */
function present(requirement: Requirement, credentials: { apiKey: string; adminToken: string }): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const scheme of Object.keys(requirement)) {
    if (scheme === 'API Key') headers['x-api-key'] = credentials.apiKey
    else if (scheme === 'Bearer Auth') headers.authorization = `Bearer ${credentials.apiKey}`
    else if (scheme === 'Tenant ID') headers['x-tenant-id'] = TENANT_A
    else if (scheme === 'Admin Token') headers['x-hangar-admin-token'] = credentials.adminToken
    else throw new Error(`unknown security scheme ${scheme}`)
  }
  return headers
}

/** A users file for the agent server's `users` mode (HANGAR_AGENT_USERS), in the test's own directory. */
const agentUsers = (t: Test) => ({ agentAuth: 'users' as const, agentUsers: join(t.testdir({ 'users.json': JSON.stringify([{ token: 'alice-token', identity: 'alice' }]) }), 'users.json') })

const SETTINGS: Array<{ name: string; config: Partial<Config> | ((t: Test) => Partial<Config>); apiKey: string; adminToken: string }> = [
  { name: 'the defaults', config: {}, apiKey: 'any-key', adminToken: '' },
  { name: 'API keys, an admin token and a required workspace', config: { apiKeys: ['ci-key'], adminToken: 'sesame', requireTenant: true }, apiKey: 'ci-key', adminToken: 'sesame' },
  { name: 'auth off', config: { auth: 'off' }, apiKey: 'any-key', adminToken: '' },
  { name: 'no agent-server credential (HANGAR_AGENT_AUTH=none)', config: { agentAuth: 'none' }, apiKey: 'any-key', adminToken: '' },
  // A user's token is also a key the control plane admits (it accepts any while HANGAR_API_KEYS is empty).
  { name: 'agent-server users (HANGAR_AGENT_AUTH=users)', config: agentUsers, apiKey: 'alice-token', adminToken: '' },
]

for (const setting of SETTINGS) {
  t.test(`with ${setting.name}, every operation declares exactly what its gate asks for`, async (t) => {
    const { base, operations } = await documented(t, typeof setting.config === 'function' ? setting.config(t) : setting.config)
    t.ok(operations.length > 100, `the document lists the operations (${operations.length})`)
    const wrong: string[] = []
    for (const operation of operations) {
      const name = `${operation.method} ${operation.path}`
      const security = operation.security ?? []
      const optional = security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0)
      const refused = await refusedByGate(base, operation, {})
      if (refused && optional) wrong.push(`${name}: refused without credentials, but declares ${JSON.stringify(operation.security ?? 'none')}`)
      if (!refused && !optional) wrong.push(`${name}: admitted without credentials, but declares ${JSON.stringify(security)}`)
      for (const requirement of security) {
        if (await refusedByGate(base, operation, present(requirement, setting))) wrong.push(`${name}: refused with ${JSON.stringify(requirement)} alone`)
      }
    }
    t.same(wrong, [], 'no operation declares more or less than its gate enforces')
  })
}

t.test('the schemes are the real documents\' (API Key, Tenant ID, Bearer Auth), declared per family as the gates admit them', async (t) => {
  const { operations, schemes } = await documented(t, {})
  t.same(schemes['API Key'], { type: 'apiKey', in: 'header', name: 'X-Api-Key' })
  t.match(schemes['Tenant ID'], { type: 'apiKey', in: 'header', name: 'X-Tenant-Id' })
  t.match(schemes['Bearer Auth'], { type: 'http', scheme: 'bearer' })
  t.notOk('Admin Token' in schemes, 'no admin token scheme while the admin API is open')
  const securityOf = (method: string, path: string) => operations.find((o) => o.method === method && o.path === path)?.security
  const credential = [{ 'API Key': [], 'Tenant ID': [] }, { 'Bearer Auth': [], 'Tenant ID': [] }, { 'API Key': [] }, { 'Bearer Auth': [] }]
  t.same(securityOf('GET', '/v2/deployments'), credential, 'control plane: an API key or a Bearer token, with or without a workspace')
  t.same(securityOf('GET', '/api/v1/feedback'), credential, 'tracing API: the same')
  t.same(securityOf('GET', '/v2/auth/providers'), [...credential, { 'Tenant ID': [] }], 'Auth Service: also the workspace header alone')
  t.same(securityOf('POST', '/threads/search'), [{ 'API Key': [] }, { 'Bearer Auth': [] }], 'agent server: its key')
  for (const [method, path] of [['GET', '/ok'], ['GET', '/info'], ['GET', '/v2/auth/callback/{provider_id}'], ['POST', '/api/v1/feedback/tokens/{token}'], ['GET', '/_hangar/clock']]) {
    t.equal(securityOf(method, path), undefined, `${method} ${path}: public`)
  }

  const guarded = await documented(t, { adminToken: 'sesame' })
  t.same(guarded.schemes['Admin Token'], { type: 'apiKey', in: 'header', name: 'X-Hangar-Admin-Token' })
  t.same(guarded.operations.find((o) => o.path === '/_hangar/clock')?.security, [{ 'Admin Token': [] }], 'the admin API asks for the token once one is set')
  t.equal(guarded.operations.find((o) => o.path === '/_hangar/oauth/authorize')?.security, undefined, 'the OAuth consent page stays outside the admin gate')
})
