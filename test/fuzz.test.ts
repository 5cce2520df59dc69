// Property-based fuzzing of every route (issue 7). Requests are random, malformed or hostile —
// bodies of every shape and size, odd ids and query strings, wrong or missing credentials — and
// hangar must never answer 5xx, must keep answering, must answer every 4xx with the real
// service's error body, and must not change anything it stores when it rejects a request.
// The routes come from hangar's own /openapi.json (plus the copies it leaves out), the bodies
// from the schemas in it; path ids are real (a small world is created first) or odd.
//   property A  anything, per family of routes: no 5xx, hangar answers /ok, 4xx bodies are FastAPI's
//   property B  batches of requests each invalid in one way: all refused (4xx), the store unchanged
//   sweeps      every body field and query parameter, wrong (422, nothing stored) and at its edges (no 5xx)
//   raw bytes   over a real socket: bad UTF-8, bad escapes, bad framing, oversized bodies
//   findings    one test per bug the fuzzing found, with the smallest request that shows it
// fast-check runs with a fixed seed; a failure prints the seed, the path and the shrunk request.
// Generators live in fuzz-arbitraries.ts.

import net from 'node:net'
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { App } from '../src/app.js'
import { API_KEY, START, TENANT_A, TENANT_B, clientFor, dockerDeployment, githubDeployment, makeApp, serveApp } from './helpers.js'
import {
  API_KEY_HEADER, BUSY, CONTENT_TYPES, DEPLOYED_PREFIX, NASTY, SAMPLE_UUID, UNPARSABLE,
  deep, describe, encode, fillPath, jsonBody, meant5xx, noiseBodyArb, objectOf, oddIdArb, oneFieldWrong, operationsFrom, pointsOf, printable,
  problemsOf, queryArb, rawBody, sample, sized, someEdgeValues, someWrongValues, surelyRejects, validArb, withLeaf, wrongQueryValues,
  type Answer, type Family, type FuzzRequest, type Operation, type Pools, type Schema, type Segment,
} from './fuzz-arbitraries.js'

const SEED = 20250107
const LIMIT = 1024 * 1024
const CONFIG = { revisionSpeed: 'instant' as const, apiKeys: [API_KEY] }
const NO_PLAN_WORKSPACE = '00000000-0000-4000-8000-00000000f403'
const GITHUB_INTEGRATION = '6f1a0c1e-1b43-4a9a-9f57-2f5f7f2d9a10'
const FORGE_INTEGRATION = 'b4c1d2e3-5f60-4a71-8b92-a3b4c5d6e7f8'
const GOOD = { [API_KEY_HEADER]: API_KEY }
const JSON_TYPE = { 'content-type': 'application/json' }
/** What `langgraph deploy` sends with its upload to a signed URL. */
const UPLOAD_HEADERS = { 'content-type': 'application/gzip', 'x-goog-content-length-range': '0,209715200' }

/**
 * How many requests each property sends: per family (property A), and batches of one to eight
 * (property B). With every property passing the file takes about 30 s on two busy cores.
 */
const RUNS = { perFamily: 500, rejected: 300 }

// ---------------------------------------------------------------------------------------------
// The world the requests aim at: one of everything, so that path ids can be real.

interface World {
  /** Real values for each path parameter, by its name. */
  ids: Record<string, string[]>
  /** Deployments whose agent server answers (READY), and one that never will. */
  serving: string[]
  broken: string
  /** Requests the schema accepts but a rule of the service refuses (400, 404, 409, …). */
  refused: FuzzRequest[]
  /** A signed upload URL of the remote build deployment (path and query). */
  uploadUrl: string
}

async function buildWorld(app: App): Promise<World> {
  const api = clientFor(app)
  const ok = async (what: string, status: number, pending: Promise<{ status: number; body: any; text: string }>) => {
    const res = await pending
    if (res.status !== status) throw new Error(`building the fuzz world: ${what} answered ${res.status} ${res.text}`)
    return res.body
  }
  // Workspaces the requests may name are seeded first (a workspace is seeded the first time it is seen).
  for (const tenant of [TENANT_A, TENANT_B, NO_PLAN_WORKSPACE]) await ok('seed workspace', 200, api.get('/v2/deployments', { 'x-tenant-id': tenant }))

  const ready = await ok('docker deployment', 201, api.post('/v2/deployments', dockerDeployment({ name: 'ready' })))
  const github = await ok('github deployment', 201, api.post('/v2/deployments', githubDeployment()))
  await ok('patch', 200, api.patch(`/v2/deployments/${github.id}`, { source_revision_config: { repo_ref: 'dev' } }))
  const broken = await ok('failing deployment', 201, api.post('/v2/deployments', dockerDeployment({ name: 'broken', source_revision_config: { image_uri: 'hangar/fail-create' } })))
  const revisions = (await ok('revisions', 200, api.get(`/v2/deployments/${github.id}/revisions`))).resources.map((r: any) => r.id)
  // A deployment being deleted (at the manual speed it stays so), which takes no more changes.
  const leaving = await ok('leaving deployment', 201, api.post('/v2/deployments', dockerDeployment({ name: 'leaving' })))
  await ok('manual speed', 200, api.post(`/_hangar/deployments/${leaving.id}/speed`, { speed: 'manual' }))
  await ok('delete', 204, api.delete(`/v2/deployments/${leaving.id}`))
  // What `langgraph deploy` makes: a remote build (with a source uploaded to its signed URL) and a local one.
  const remote = await ok('remote build deployment', 201, api.post('/v2/deployments', { name: 'remote', source: 'internal_source', source_config: { deployment_type: 'dev' }, source_revision_config: { langgraph_config_path: 'langgraph.json' }, secrets: [{ name: 'KEY', value: 'fuzz-secret-value' }] }))
  const local = await ok('local build deployment', 201, api.post('/v2/deployments', { name: 'local', source: 'internal_docker', source_config: { deployment_type: 'dev' }, source_revision_config: { image_uri: 'registry.example.com/agent:1' }, secrets: [] }))
  const upload = await ok('upload url', 200, api.post(`/v2/deployments/${remote.id}/upload-url`))
  const uploadUrl = new URL(upload.upload_url)
  const put = await app.inject({ method: 'PUT', url: uploadUrl.pathname + uploadUrl.search, headers: UPLOAD_HEADERS, payload: gzipSync('not a tar archive') })
  if (put.statusCode !== 200) throw new Error(`building the fuzz world: the upload answered ${put.statusCode} ${put.body}`)
  const built = await ok('remote build', 200, api.patch(`/v2/deployments/${remote.id}`, { revision_source: 'internal_source', source_revision_config: { source_tarball_path: upload.object_path, langgraph_config_path: 'langgraph.json' } }))
  const listener = await ok('listener', 201, api.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'cluster-1', compute_config: { k8s_namespaces: ['default'] } }))
  await ok('provider', 200, api.post('/v2/auth/providers', { provider_id: 'fuzz', name: 'Fuzz', client_id: 'fuzz-client', auth_url: 'https://auth.example/authorize', token_url: 'https://auth.example/token' }))

  // One OAuth flow, all the way: authenticate → consent screen → callback.
  const pending = await ok('authenticate', 200, api.post('/v2/auth/authenticate', { provider: 'github', scopes: ['repo'], agent_id: 'agent-1' }))
  const consent = new URL(pending.url)
  const redirect = await app.inject({ method: 'GET', url: consent.pathname + consent.search })
  const callback = new URL(String(redirect.headers.location))
  const done = JSON.parse((await app.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { accept: 'application/json' } })).body)
  const connections = (await ok('connections', 200, api.get('/v2/auth/agents/agent-1/connections'))).data

  // The agent server at the root and a deployment's own: threads with a finished run each.
  const agentWorld = async (base: string) => {
    const thread = (await ok('thread', 200, api.post(`${base}/threads`, {}))).thread_id as string
    await ok('run', 200, api.post(`${base}/threads/${thread}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hello' }] }, feedback_keys: ['helpful'] }))
    const run = (await ok('runs', 200, api.get(`${base}/threads/${thread}/runs`)))[0].run_id as string
    const checkpoint = (await ok('state', 200, api.get(`${base}/threads/${thread}/state`))).checkpoint_id as string
    // Items in its store, one of them with a ttl, for the store's routes to find.
    await ok('store item', 204, api.put(`${base}/store/items`, { namespace: ['users', 'u1'], key: 'prefs', value: { theme: 'dark', n: 1 } }))
    await ok('store item with a ttl', 204, api.put(`${base}/store/items`, { namespace: ['users', 'u2', 'notes'], key: 'n1', value: { text: 'hello' }, ttl: 5 }))
    // A cron on its thread and a stateless one, for the cron routes to find (they fire only when the clock moves).
    const cron = (await ok('thread cron', 200, api.post(`${base}/threads/${thread}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *', input: { messages: [] } }))).cron_id as string
    const statelessCron = (await ok('stateless cron', 200, api.post(`${base}/runs/crons`, { assistant_id: 'agent', schedule: '30 8 * * 1-5', timezone: 'Europe/Paris', enabled: false }))).cron_id as string
    return { thread, run, checkpoint, crons: [cron, statelessCron] }
  }
  const root = await agentWorld('')
  const deployed = await agentWorld(`/deployments/${ready.id}/agent`)
  // A deployment's agent server seeds its system assistants on first use: every serving one is used once here.
  await ok('deployed agent', 200, api.post(`/deployments/${github.id}/agent/assistants/search`, {}))
  const bare = (await ok('bare thread', 200, api.post('/threads', {}))).thread_id as string
  const assistant = (await ok('assistant', 200, api.post('/assistants', { graph_id: 'agent', name: 'fuzzed' }))).assistant_id as string
  const token = (await ok('feedback tokens', 200, api.get(`/api/v1/feedback/tokens?run_id=${root.run}`)))[0].id as string
  const feedback = (await ok('feedback', 200, api.post(`/api/v1/feedback/tokens/${token}`, { score: 1 }))).id as string
  const projectOfRoot = (await ok('run trace', 200, api.get(`/api/v1/runs/${root.run}`))).session_id as string

  const ids: Record<string, string[]> = {
    deployment_id: [ready.id, github.id, broken.id, remote.id, local.id],
    revision_id: [...revisions, ready.latest_revision_id, built.latest_revision_id, local.latest_revision_id],
    listener_id: [listener.id],
    integration_id: [GITHUB_INTEGRATION, FORGE_INTEGRATION],
    provider_id: ['github', 'slack', 'google', 'fuzz'],
    auth_id: [done.auth_id],
    token_id: [done.token_id],
    agent_id: ['agent-1'],
    connection_id: connections.map((c: any) => c.id),
    assistant_id: [assistant, 'agent', 'fe096781-5601-53d2-b2f6-0d3403f7e9ca'],
    thread_id: [root.thread, deployed.thread, bare],
    run_id: [root.run, deployed.run],
    checkpoint_id: [root.checkpoint, deployed.checkpoint],
    cron_id: [...root.crons, ...deployed.crons],
    token: [token],
    feedback_id: [feedback],
    session_id: [projectOfRoot],
    fault_id: [],
    file: ['index.html', 'swagger-ui.css'],
  }

  // Requests every part of which is well-formed, refused by a rule (or by what exists).
  const refused: FuzzRequest[] = []
  const refuse = (why: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    refused.push(printable({ kind: `refused: ${why}`, method, url, headers: { ...GOOD, ...JSON_TYPE, ...headers }, body: body === undefined ? undefined : jsonBody(body) }))
  const gh = githubDeployment().source_config
  for (const prefix of ['', '/api-host']) {
    refuse('a deployment name is unique', 'POST', `${prefix}/v2/deployments`, dockerDeployment({ name: 'ready' }))
    refuse('an unknown integration', 'POST', `${prefix}/v2/deployments`, githubDeployment({ name: 'n1', source_config: { ...gh, integration_id: SAMPLE_UUID } }))
    refuse('an unknown listener', 'POST', `${prefix}/v2/deployments`, dockerDeployment({ name: 'n2', source_config: { deployment_type: 'dev', listener_id: SAMPLE_UUID } }))
    refuse('a github source needs a config path', 'POST', `${prefix}/v2/deployments`, githubDeployment({ name: 'n3', source_revision_config: { repo_ref: 'main' } }))
    refuse('a docker source needs an image', 'POST', `${prefix}/v2/deployments`, dockerDeployment({ name: 'n4', source_revision_config: {} }))
    refuse('deployment_type cannot change', 'PATCH', `${prefix}/v2/deployments/${github.id}`, { source_config: { deployment_type: 'prod' } })
    refuse('a finished revision cannot be interrupted', 'POST', `${prefix}/v2/deployments/${ready.id}/revisions/${ready.latest_revision_id}/interrupt`)
    refuse('bulk delete of nothing', 'DELETE', `${prefix}/v2/deployments?deployment_ids=${SAMPLE_UUID}`)
    refuse('min_scale 0 outside dev_zero', 'POST', `${prefix}/v2/deployments`, dockerDeployment({ name: 'n5', source_config: { resource_spec: { min_scale: 0 } } }))
    refuse('an internal_template needs its template_id', 'POST', `${prefix}/v2/deployments`, { name: 'n6', source: 'internal_template', source_config: {}, source_revision_config: {}, secrets: [] })
    refuse('an internal_source tarball without its config path', 'POST', `${prefix}/v2/deployments`, { name: 'n7', source: 'internal_source', source_config: {}, source_revision_config: { source_tarball_path: 'uploads/x.tar.gz' }, secrets: [] })
    refuse('a revision body that changes what cannot change', 'POST', `${prefix}/v2/deployments/${github.id}/revisions`, { source_config: { repo_url: 'https://elsewhere' } })
    refuse('a deployment being deleted takes no PATCH', 'PATCH', `${prefix}/v2/deployments/${leaving.id}`, { display_name: 'x' })
    refuse('a deployment being deleted takes no revision', 'POST', `${prefix}/v2/deployments/${leaving.id}/revisions`, {})
    refuse('upload URLs only for internal_source', 'POST', `${prefix}/v2/deployments/${local.id}/upload-url`)
    refuse('push tokens only for internal_docker', 'POST', `${prefix}/v2/deployments/${remote.id}/push-token`)
    refuse('an upload URL of an unknown deployment', 'POST', `${prefix}/v2/deployments/${SAMPLE_UUID}/upload-url`)
    refuse('the logs of another deployment\'s revision', 'GET', `${prefix}/v2/deployments/${remote.id}/revisions/${revisions[0]}/logs?type=build`)
    refuse('a log cursor hangar did not write', 'POST', `${prefix}/v1/projects/${remote.id}/deploy_logs`, { offset: 'bm90IGEgY3Vyc29y' })
    refuse('build logs of an unknown revision', 'POST', `${prefix}/v1/projects/${remote.id}/revisions/${SAMPLE_UUID}/build_logs`, { order: 'desc', limit: 30 })
    refuse('a compute_id is unique', 'POST', `${prefix}/v2/listeners`, { compute_type: 'k8s', compute_id: 'cluster-1', compute_config: {} })
    refuse('no listeners without the plan', 'POST', `${prefix}/v2/listeners`, { compute_type: 'k8s', compute_id: 'c2', compute_config: {} }, { 'x-tenant-id': NO_PLAN_WORKSPACE })
    refuse('a provider id is unique', 'POST', `${prefix}/v2/auth/providers`, { provider_id: 'github', name: 'G', client_id: 'c', auth_url: 'https://a', token_url: 'https://t' })
    refuse('discovery needs http(s)', 'POST', `${prefix}/v2/auth/providers/mcp-discover`, { provider_id: 'mcp', name: 'M', mcp_server_url: 'ftp://mcp.example' })
    refuse('an unknown provider', 'POST', `${prefix}/v2/auth/authenticate`, { provider: 'nope', scopes: [] })
    refuse('an unknown token', 'POST', `${prefix}/v2/auth/authenticate`, { provider: 'github', scopes: ['repo'], token_id: SAMPLE_UUID })
    refuse('already connected', 'POST', `${prefix}/v2/auth/agents/agent-1/connections`, { oauth_token_id: done.token_id })
    refuse('a token that is not the caller\'s', 'POST', `${prefix}/v2/auth/agents/agent-2/connections`, { oauth_token_id: SAMPLE_UUID })
    refuse('a code nobody issued', 'POST', `${prefix}/v2/auth/callback/github`, { code: 'x', state: 'y' })
    refuse('a callback with an error', 'GET', `${prefix}/v2/auth/callback/github?error=access_denied&state=y`)
    refuse('a callback without code', 'GET', `${prefix}/v2/auth/setup/github?state=y`)
  }
  refuse('a consent for no flow', 'GET', `/_hangar/oauth/authorize?response_type=code&client_id=x&redirect_uri=${encode('http://x/v2/auth/callback/github')}&state=nope`)
  refuse('an unknown graph', 'POST', '/assistants', { graph_id: 'nope' })
  refuse('an assistant id is unique', 'POST', '/assistants', { graph_id: 'agent', assistant_id: assistant })
  refuse('no such version', 'POST', `/assistants/${assistant}/latest`, { version: 999 })
  refuse('a thread id is unique', 'POST', '/threads', { thread_id: root.thread })
  refuse('a superstep on a node that does not exist', 'POST', '/threads', { metadata: { graph_id: 'agent' }, supersteps: [{ updates: [{ values: { messages: [] }, as_node: 'nope' }] }] })
  refuse('a superstep on a thread without a graph', 'POST', '/threads', { supersteps: [{ updates: [{ values: { a: 1 }, as_node: 'x' }] }] })
  refuse('a state update on an unknown node', 'POST', `/threads/${root.thread}/state`, { values: { messages: [] }, as_node: 'nope' })
  refuse('a state update on a thread without a graph', 'POST', `/threads/${bare}/state`, { values: { a: 1 } })
  refuse('an unknown checkpoint', 'GET', `/threads/${root.thread}/state/${SAMPLE_UUID}`)
  refuse('a superstep input without values', 'POST', '/threads', { metadata: { graph_id: 'agent' }, supersteps: [{ updates: [{ values: null, as_node: '__input__' }] }] })
  refuse('a superstep without updates', 'POST', '/threads', { metadata: { graph_id: 'agent' }, supersteps: [{ updates: [] }] })
  refuse('a metadata patch of a thread without checkpoints', 'PATCH', `/threads/${bare}/state`, { metadata: { a: 1 } })
  refuse('a metadata patch of an unknown checkpoint', 'PATCH', `/threads/${root.thread}/state`, { metadata: { a: 1 }, checkpoint_id: SAMPLE_UUID })
  refuse('a search extract path outside the thread', 'POST', '/threads/search', { extract: { a: 'state.messages' } })
  refuse('a store namespace label with a period', 'PUT', '/store/items', { namespace: ['users.u1'], key: 'k', value: { a: 1 } })
  refuse('an empty store namespace label', 'DELETE', '/store/items', { namespace: ['users', ''], key: 'prefs' })
  refuse('an empty store namespace', 'PUT', '/store/items', { namespace: [], key: 'k', value: {} })
  refuse('the reserved store namespace root', 'PUT', '/store/items', { namespace: ['langgraph'], key: 'k', value: {} })
  refuse('an empty label in a store read', 'GET', '/store/items?key=prefs&namespace=users..u1')
  refuse('a store search prefix with a period', 'POST', '/store/items/search', { namespace_prefix: ['a.b'] })
  refuse('a store filter operator the store does not know', 'POST', '/store/items/search', { namespace_prefix: ['users'], filter: { n: { $in: [1] } } })
  refuse('a namespace suffix with an empty label', 'POST', '/store/namespaces', { suffix: [''] })
  refuse('a cron of an unknown assistant', 'POST', '/runs/crons', { assistant_id: 'nope', schedule: '0 9 * * *' })
  refuse('a cron on an unknown thread', 'POST', `/threads/${SAMPLE_UUID}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *' })
  refuse('a cron schedule that does not parse', 'POST', `/threads/${root.thread}/runs/crons`, { assistant_id: 'agent', schedule: 'every day' })
  refuse('a cron schedule out of range', 'POST', '/runs/crons', { assistant_id: 'agent', schedule: '0 25 * * *' })
  refuse('a cron timezone that does not exist', 'POST', '/runs/crons', { assistant_id: 'agent', schedule: '0 9 * * *', timezone: 'Mars/Olympus' })
  refuse('a cron patch with a bad schedule', 'PATCH', `/runs/crons/${root.crons[0]}`, { schedule: '* *' })
  refuse('a cron patch with a bad timezone', 'PATCH', `/runs/crons/${root.crons[0]}`, { timezone: 'Nowhere/Special' })
  refuse('an unknown cron', 'GET', `/runs/crons/${SAMPLE_UUID}`)
  refuse('a patch of an unknown cron', 'PATCH', `/runs/crons/${SAMPLE_UUID}`, { enabled: false })
  refuse('a deletion of an unknown cron', 'DELETE', `/runs/crons/${SAMPLE_UUID}`)
  refuse('a deployment\'s cron from the root agent server', 'GET', `/runs/crons/${deployed.crons[0]}`)
  refuse('runs to cancel by status and by id at once', 'POST', '/runs/cancel', { status: 'all', thread_id: root.thread, run_ids: [root.run] })
  refuse('runs to cancel by a thread without run ids', 'POST', '/runs/cancel', { thread_id: root.thread })
  refuse('no run to cancel', 'POST', '/runs/cancel?action=rollback', { status: 'running' })
  refuse('a run of an unknown assistant', 'POST', `/threads/${root.thread}/runs`, { assistant_id: 'nope' })
  refuse('a run of an unknown assistant on a thread to create', 'POST', `/threads/${SAMPLE_UUID}/runs/wait`, { assistant_id: 'nope', if_not_exists: 'create' })
  refuse('a run on an unknown thread', 'POST', `/threads/${SAMPLE_UUID}/runs`, { assistant_id: 'agent' })
  refuse('a stateless run of an unknown assistant', 'POST', '/runs/wait', { assistant_id: 'nope' })
  refuse('a batch with one unknown assistant', 'POST', '/runs/batch', [{ assistant_id: 'agent', input: { messages: [] }, on_completion: 'keep' }, { assistant_id: 'nope' }])
  refuse('a deployment agent that is not serving', 'GET', `/deployments/${broken.id}/agent/threads/${root.thread}`)
  refuse('a deployment agent that does not exist', 'POST', `/deployments/${SAMPLE_UUID}/agent/threads`, {})
  for (const prefix of ['/api/v1', '']) {
    refuse('feedback tokens where one run is unknown', 'POST', `${prefix}/feedback/tokens`, [{ run_id: root.run, feedback_key: 'k1' }, { run_id: SAMPLE_UUID, feedback_key: 'k2' }])
    refuse('a feedback token for an unknown run', 'POST', `${prefix}/feedback/tokens`, { run_id: SAMPLE_UUID, feedback_key: 'k' })
    refuse('feedback on an unknown run', 'POST', `${prefix}/feedback`, { key: 'k', run_id: SAMPLE_UUID })
    refuse('a feedback id is unique', 'POST', `${prefix}/feedback`, { key: 'k', id: feedback })
    refuse('an unknown feedback token', 'POST', `${prefix}/feedback/tokens/${SAMPLE_UUID}`, { score: 1 })
    refuse('an unknown feedback token (GET)', 'GET', `${prefix}/feedback/tokens/${SAMPLE_UUID}?score=1`)
    refuse('an update of unknown feedback', 'PATCH', `${prefix}/feedback/${SAMPLE_UUID}`, { score: 1 })
    refuse('a deletion of unknown feedback', 'DELETE', `${prefix}/feedback/${SAMPLE_UUID}`)
    refuse('feedback naming a project that is not its run\'s', 'POST', `${prefix}/feedback`, { key: 'k', run_id: root.run, session_id: SAMPLE_UUID })
    refuse('feedback on a project alone', 'POST', `${prefix}/feedback`, { key: 'k', session_id: SAMPLE_UUID })
    refuse('an unknown run trace', 'GET', `${prefix}/runs/${SAMPLE_UUID}`)
    refuse('a run query over an unknown project', 'POST', `${prefix}/runs/query`, { session: [SAMPLE_UUID] })
    refuse('a run filter that does not parse', 'POST', `${prefix}/runs/query`, { filter: 'eq(name, "agent"' })
    refuse('a run filter on an unknown field', 'POST', `${prefix}/runs/query`, { filter: 'gt(total_tokens, 5)' })
    refuse('a full-text run query', 'POST', `${prefix}/runs/query`, { query: 'hello' })
    refuse('a run query cursor hangar did not write', 'POST', `${prefix}/runs/query`, { cursor: 'bm90IGEgY3Vyc29y' })
    refuse('an unknown project', 'GET', `${prefix}/sessions/${SAMPLE_UUID}`)
  }
  refuse('a v2 run in a project that does not hold it', 'GET', `/api/v2/runs/${root.run}?project_id=${SAMPLE_UUID}`)
  refuse('an unknown v2 run', 'GET', `/api/v2/runs/${SAMPLE_UUID}?project_id=${SAMPLE_UUID}`)
  const v2Query = (why: string, body: Record<string, unknown>, headers?: Record<string, string>) => refuse(why, 'POST', '/api/v2/runs/query', body, headers)
  v2Query('a v2 run query without projects', {})
  v2Query('a v2 run query over an unknown project', { project_ids: [projectOfRoot, SAMPLE_UUID] })
  v2Query('a v2 run query over a dataset hangar does not have', { reference_dataset_id: SAMPLE_UUID })
  v2Query('a v2 run query over projects and a dataset', { project_ids: [projectOfRoot], reference_dataset_id: SAMPLE_UUID })
  v2Query('a v2 run filter that does not parse', { project_ids: [projectOfRoot], filter: 'eq(name, "agent"' })
  v2Query('a v2 trace filter on an unknown field', { project_ids: [projectOfRoot], trace_filter: 'gt(total_tokens, 5)' })
  v2Query('a v2 run query cursor hangar did not write', { project_ids: [projectOfRoot], cursor: 'bm90IGEgY3Vyc29y' })
  v2Query('a v2 run query window that ends before it starts', { project_ids: [projectOfRoot], min_start_time: '2025-01-02T00:00:00Z', max_start_time: '2025-01-01T00:00:00Z' })
  v2Query('a feedback time bound without a feedback condition', { project_ids: [projectOfRoot], min_feedback_modified_at: '2025-01-01T00:00:00Z' })
  v2Query('AI search without the event-stream Accept', { project_ids: [projectOfRoot], ai_search: 'runs that used tools' })
  v2Query('AI search, not available offline', { project_ids: [projectOfRoot], ai_search: 'runs that used tools' }, { accept: 'text/event-stream' })
  v2Query('the streamed v2 run query', { project_ids: [projectOfRoot] }, { accept: 'text/event-stream' })
  refuse('set needs "to"', 'POST', '/_hangar/clock', { action: 'set' })
  refuse('advance needs "ms"', 'POST', '/_hangar/clock', { action: 'advance' })
  refuse('set needs an instant', 'POST', '/_hangar/clock', { action: 'set', to: 'garbage' })
  refuse('a finished revision cannot advance', 'POST', `/_hangar/deployments/${ready.id}/revisions/${ready.latest_revision_id}/advance`)
  refuse('a finished revision cannot be forced', 'POST', `/_hangar/deployments/${ready.id}/revisions/${ready.latest_revision_id}/status`, { status: 'DEPLOYED' })
  refuse('an unknown fault', 'DELETE', `/_hangar/faults/${SAMPLE_UUID}`)
  refuse('a deletion that was never started cannot advance', 'POST', `/_hangar/deployments/${ready.id}/deletion/advance`)
  refuse('an unknown deployment\'s deletion cannot advance', 'POST', `/_hangar/deployments/${SAMPLE_UUID}/deletion/advance`)
  // State documents that are not ones: each is a 400 and must change nothing.
  const doc = JSON.parse((await app.inject({ method: 'GET', url: '/_hangar/state' })).body)
  const tables = Object.keys(doc.tables)
  const withTable = (name: string, rows: unknown) => ({ ...doc, tables: { ...doc.tables, [name]: rows } })
  const someTable = tables.find((name) => doc.tables[name].length > 0)!
  const row = doc.tables[someTable][0]
  for (const bad of [
    {}, { hangar_state: 2, tables: {} }, { ...doc, schema_version: doc.schema_version + 1 }, withTable('no_such_table', []),
    withTable(someTable, 'rows'), withTable(someTable, [...doc.tables[someTable], { ...row, no_such_column: 1 }]),
    withTable(someTable, [...doc.tables[someTable], row]),
    ...tables.filter((name) => doc.tables[name].length > 0).map((name) => withTable(name, [...doc.tables[name], Object.fromEntries(Object.keys(doc.tables[name][0]).map((c) => [c, { not: 'a value' }]))])),
    ...(doc.tables.runs?.length ? [withTable('runs', doc.tables.runs.map((r: any) => ({ ...r, thread_seq: 999_999 })))] : []),
  ]) refuse('not a state document', 'PUT', '/_hangar/state', bad)

  return { ids, serving: [ready.id, github.id], broken: broken.id, refused, uploadUrl: uploadUrl.pathname + uploadUrl.search }
}

// ---------------------------------------------------------------------------------------------
// The harness: an app, its world, its operations, and a way back to the world after each request.

interface Harness {
  app: App
  world: World
  ops: Operation[]
  send(request: FuzzRequest): Promise<Answer>
  /** Everything a request could change: all stored state, the clock and the fault rules (not the journal). */
  store(): Promise<string>
  baseline: string
  restore(): Promise<void>
}

async function harness(t: Test, config: Record<string, unknown> = {}): Promise<Harness> {
  const { app } = await makeApp(t, { config: { ...CONFIG, ...config } })
  const world = await buildWorld(app)
  const ops = operationsFrom(JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body))
  const admin = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: string) =>
    app.inject({ method, url, payload, headers: payload === undefined ? {} : JSON_TYPE })
  const state = async () => (await admin('GET', '/_hangar/state')).body
  const store = async () => [await state(), (await admin('GET', '/_hangar/clock')).body, (await admin('GET', '/_hangar/faults')).body].join('\n')
  const saved = await state()
  const baseline = await store()
  const restore = async () => {
    await admin('DELETE', '/_hangar/faults')
    await admin('POST', '/_hangar/clock', JSON.stringify({ action: 'set', to: START }))
    await admin('POST', '/_hangar/clock', JSON.stringify({ action: 'freeze' }))
    const put = await admin('PUT', '/_hangar/state', saved)
    if (put.statusCode !== 204) throw new Error(`restoring the fuzz world: PUT /_hangar/state answered ${put.statusCode} ${put.body}`)
  }
  const send = async (request: FuzzRequest): Promise<Answer> => {
    const res = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.body?.bytes() })
    return { status: res.statusCode, headers: res.headers, body: res.body }
  }
  return { app, world, ops, send, store, baseline, restore }
}

/** What changed between two stores: tables whose rows differ (with one differing row each), clock, faults. */
function changes(before: string, after: string): string {
  const [stateA, clockA, faultsA] = before.split('\n')
  const [stateB, clockB, faultsB] = after.split('\n')
  const out: string[] = []
  const a = JSON.parse(stateA).tables as Record<string, unknown[]>
  const b = JSON.parse(stateB).tables as Record<string, unknown[]>
  for (const table of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const rowsA = (a[table] ?? []).map((r) => JSON.stringify(r))
    const rowsB = (b[table] ?? []).map((r) => JSON.stringify(r))
    if (rowsA.join() === rowsB.join()) continue
    const added = rowsB.filter((r) => !rowsA.includes(r))
    const removed = rowsA.filter((r) => !rowsB.includes(r))
    out.push(`table ${table}: ${rowsA.length} → ${rowsB.length} rows` +
      (added[0] ? `; new/changed: ${added[0].slice(0, 300)}` : '') + (removed[0] ? `; was: ${removed[0].slice(0, 300)}` : ''))
  }
  if (clockA !== clockB) out.push(`clock: ${clockA} → ${clockB}`)
  if (faultsA !== faultsB) out.push(`faults: ${faultsA} → ${faultsB}`)
  return out.join('\n')
}

/** Runs a property with the fixed seed; a failure is one tap failure carrying fast-check's report (seed, path, shrunk request). */
async function holds<T>(t: Test, name: string, arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>) {
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns })
  if (!details.failed) return t.pass(`${name}: ${details.numRuns} runs (seed ${SEED})`)
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
  t.fail(`${name}: ${error.split('\n')[0]}`, {
    seed: SEED, path: details.counterexamplePath, request: details.counterexample ? fc.stringify(details.counterexample[0]) : undefined,
    error, report: fc.defaultReportMessage(details),
  })
}

// ---------------------------------------------------------------------------------------------
// Request arbitraries

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND']
const pathParams = (op: Operation) => op.params.filter((p) => p.in === 'path')
const real = (world: World, op: Operation, name: string) =>
  name === 'deployment_id' && op.family === 'deployed-agent' && op.path.startsWith(DEPLOYED_PREFIX) ? world.serving : world.ids[name] ?? []
const segment = (value: string): Segment => ({ raw: encode(value) })

/** Real ids for every path parameter (one of the world's, chosen at random). */
function realSegments(world: World, op: Operation): fc.Arbitrary<Record<string, Segment>> {
  return fc.record(Object.fromEntries(pathParams(op).map((p) => {
    const pool = real(world, op, p.name)
    return [p.name, pool.length > 0 ? fc.constantFrom(...pool).map(segment) : fc.constant(segment(SAMPLE_UUID))]
  })))
}

/** Real ids, the broken deployment's, random UUIDs and odd strings, malformed escapes included. */
function anySegments(world: World, op: Operation): fc.Arbitrary<Record<string, Segment>> {
  return fc.record(Object.fromEntries(pathParams(op).map((p) => {
    const pool = [...real(world, op, p.name), ...(p.name === 'deployment_id' ? [world.broken] : [])]
    return [p.name, fc.oneof(
      { weight: 3, arbitrary: pool.length > 0 ? fc.constantFrom(...pool).map(segment) : fc.constant(segment(SAMPLE_UUID)) },
      { weight: 2, arbitrary: oddIdArb(pool) },
    )]
  })))
}

const credentialsArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Record<string, string>>(GOOD) },
  { weight: 2, arbitrary: fc.constantFrom<Record<string, string>>(
    {}, { authorization: `Bearer ${API_KEY}` }, { authorization: `bearer   ${API_KEY}  ` }, { [API_KEY_HEADER]: 'not-the-key' },
    { authorization: 'Basic dGVzdDp0ZXN0' }, { [API_KEY_HEADER]: ' ' }, { authorization: 'Bearer' }, { authorization: 'Bearer a b' },
    { 'x-hangar-admin-token': API_KEY }, { [API_KEY_HEADER]: `${API_KEY},${API_KEY}` },
  ) },
)
const tenantArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.constantFrom(TENANT_A, TENANT_A.toUpperCase(), ` ${TENANT_B} `, NO_PLAN_WORKSPACE, 'not-a-uuid', '', ' ', TENANT_A.replace(/-/g, ''), `{${TENANT_A}}`, '00000000-0000-0000-0000-000000000000').map((v) => ({ 'x-tenant-id': v })) },
  { weight: 1, arbitrary: fc.uuid().map((v) => ({ 'x-tenant-id': v })) },
)
const extraHeadersArb = fc.subarray<Record<string, string>>([
  { 'last-event-id': '-1' }, { 'last-event-id': '0' }, { 'last-event-id': 'abc' }, { 'last-event-id': '-2' }, { 'last-event-id': '99999999999999999999' },
  { accept: 'application/json' }, { accept: 'text/event-stream' }, { accept: 'text/html;q=0.1, */*' },
  { 'x-forwarded-host': 'evil.example:8443' }, { 'x-forwarded-host': 'a b' }, { 'x-forwarded-host': '[::1' }, { 'x-forwarded-proto': 'gopher' },
  { 'x-forwarded-proto': 'https,http' }, { host: 'example.com:99999' }, { host: '[' }, { origin: 'http://evil.example' },
  { 'access-control-request-method': 'POST' }, { 'content-encoding': 'gzip' }, { 'x-request-id': 'nul' },
], { maxLength: 3 }).map((list) => Object.assign({}, ...list) as Record<string, string>)
const contentTypeArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Record<string, string>>(JSON_TYPE) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES).map((type) => ({ 'content-type': type })) },
  { weight: 1, arbitrary: fc.constant<Record<string, string>>({}) },
)

/** Real values for body and query fields, by field name (the path pools plus the names bodies use for the same things). */
function bodyPools(world: World): Pools {
  const { ids } = world
  return {
    ...ids, assistant_id: [],
    oauth_token_id: ids.token_id, provider: ids.provider_id, run: ids.run_id, workspace: [TENANT_A, TENANT_B, NO_PLAN_WORKSPACE],
    deployment_ids: [ids.deployment_id.join(','), ids.deployment_id[0]], graph_id: ['agent', 'pipeline', 'flaky', 'approval'],
    name: ['ready', 'broken', 'my_deployment'], compute_id: ['cluster-1'], key: ['helpful'], feedback_key: ['helpful'],
  }
}

/** Real ids for the otherwise-valid parts of a request built to be invalid (the ids of things, not names that clash). */
function samplePools(world: World): Pools {
  const { ids } = world
  return { run_id: ids.run_id, thread_id: [], integration_id: ids.integration_id, oauth_token_id: ids.token_id, provider: ids.provider_id, graph_id: ['agent'], feedback_key: ['helpful'], key: ['helpful'] }
}

/** Graphs that finish without the clock moving (so that a valid run can never wait forever). */
const QUICK_ASSISTANTS = ['agent', 'flaky', 'approval']
/** A run body the schema accepts, on a graph that ends at once; run options that wait on the clock are left out. */
function quickRunArb(schema: Schema, world: World): fc.Arbitrary<unknown> | undefined {
  const object = objectOf(schema)
  const item = object ? undefined : objectOf(schema.items ?? {})
  const run = object ?? item
  if (!run?.properties?.assistant_id) return undefined
  const fields = Object.entries<Schema>(run.properties).filter(([k]) => !['assistant_id', 'after_seconds', 'multitask_strategy'].includes(k))
  const one = fc.record({
    assistant_id: fc.constantFrom(...QUICK_ASSISTANTS, world.ids.assistant_id[0]),
    ...Object.fromEntries(fields.map(([k, s]) => [k, validArb(s, bodyPools(world), k)])),
  }, { requiredKeys: ['assistant_id'] })
  return item ? fc.array(one, { minLength: 1, maxLength: 2 }) : one
}

/** Anything at all aimed at one of `ops`: the request of property A. */
function anythingArb(world: World, ops: Operation[]): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...ops).chain((op) => {
    const quick = op.body ? quickRunArb(op.body, world) : undefined
    const body = quick
      ? fc.oneof({ weight: 1, arbitrary: quick.map((v) => jsonBody(v, 'valid run')) }, { weight: 3, arbitrary: noiseBodyArb(op, LIMIT, bodyPools(world)) })
      : noiseBodyArb(op, LIMIT, bodyPools(world))
    return fc.record({
      method: fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
      segments: anySegments(world, op),
      query: queryArb(op.params, bodyPools(world)),
      tail: fc.oneof({ weight: 20, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '/zz-nope', '/..', '/%2e%2e') }),
      credentials: credentialsArb,
      tenant: tenantArb,
      extra: extraHeadersArb,
      contentType: contentTypeArb,
      body,
    }).map((r) => printable({
      kind: `${op.method} ${op.path}`,
      method: r.method,
      url: fillPath(op.path, r.segments) + r.tail + (r.query ? `?${r.query}` : ''),
      headers: { ...r.credentials, ...r.tenant, ...r.extra, ...(r.body ? r.contentType : {}) },
      body: r.body,
    }))
  })
}

// What makes a request invalid, for property B: each must be refused (4xx).
type Kind =
  | 'body-field' | 'body-unparsable' | 'body-deep' | 'body-as-text' | 'body-missing' | 'body-too-large' | 'path-format'
  | 'path-unknown' | 'query-wrong' | 'query-missing' | 'no-credentials' | 'wrong-credentials' | 'tenant-invalid' | 'method-wrong'
  | 'unknown-subpath'
/**
 * Path parameters naming something whose absence is not an error (a wait answers not_found, a list
 * is empty, a connection is made; a subgraph namespace that names none answers `{}`, as the real server does).
 */
const ABSENCE_IS_FINE = ['auth_id', 'integration_id', 'agent_id', 'namespace']
const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE']

function kindsFor(op: Operation, methodsOfPath: Set<string>, pools: Pools): Kind[] {
  // `/subgraphs/{namespace}` answers any namespace (`{}` for one that names no subgraph, as the real server does).
  const kinds: Kind[] = op.path.endsWith('/subgraphs') ? [] : ['unknown-subpath']
  if (op.body) {
    if (oneFieldWrong(op.body, pools)) kinds.push('body-field')
    kinds.push('body-unparsable', 'body-deep')
    if (surelyRejects(op.body, '{"a": 1}')) kinds.push('body-as-text')
    if (surelyRejects(op.body, null)) kinds.push('body-missing')
  }
  if (BODY_METHODS.includes(op.method)) kinds.push('body-too-large')
  const path = pathParams(op)
  if (path.some((p) => p.schema.format === 'uuid')) kinds.push('path-format')
  // The setup callback answers its page for any provider (an app installation needs no flow).
  if (path.some((p) => !ABSENCE_IS_FINE.includes(p.name)) && !op.path.includes('/v2/auth/setup/')) kinds.push('path-unknown')
  const query = op.params.filter((p) => p.in === 'query')
  if (query.some((p) => wrongQueryValues(p.schema).length > 0)) kinds.push('query-wrong')
  if (query.some((p) => p.required)) kinds.push('query-missing')
  if (op.gated) kinds.push('no-credentials', 'wrong-credentials')
  if (op.gated && ['control-plane', 'auth', 'feedback'].includes(op.family)) kinds.push('tenant-invalid')
  if (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].some((m) => !methodsOfPath.has(m))) kinds.push('method-wrong')
  return kinds
}

const validQuery = (op: Operation, pools: Pools = {}) =>
  op.params.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${encode(String(sample(p.schema, pools, p.name)))}`)

/** One request built to be invalid in exactly one way (of `kind`); everything else is valid, ids are real. */
function invalidArb(world: World, op: Operation, kind: Kind, methodsOfPath: Set<string>): fc.Arbitrary<FuzzRequest> {
  const pools = samplePools(world)
  const base = fc.record({ segments: realSegments(world, op), tenant: fc.constantFrom<Record<string, string>>({}, {}, { 'x-tenant-id': TENANT_A }) })
  const build = (parts: { segments: Record<string, Segment>; tenant: Record<string, string> }, change: Partial<FuzzRequest> & { query?: string[]; tail?: string }) => {
    const query = change.query ?? validQuery(op, pools)
    const body = 'body' in change ? change.body : op.body ? jsonBody(sample(op.body, pools), 'sample') : undefined
    return printable({
      kind: `${kind} ${op.method} ${op.path}`,
      method: change.method ?? op.method,
      url: fillPath(op.path, parts.segments) + (change.tail ?? '') + (query.length ? `?${query.join('&')}` : ''),
      headers: change.headers ?? { ...GOOD, ...parts.tenant, ...(body ? JSON_TYPE : {}) },
      body,
    })
  }
  const headersWith = (parts: { tenant: Record<string, string> }, extra: Record<string, string>) => ({ ...GOOD, ...parts.tenant, ...JSON_TYPE, ...extra })
  switch (kind) {
    case 'body-field':
      return fc.tuple(base, oneFieldWrong(op.body!, pools)!).map(([parts, { at, body }]) => build(parts, { body: jsonBody(body, `wrong at ${at}:`) }))
    case 'body-unparsable': {
      const text = JSON.stringify(sample(op.body!, pools))
      const prefixes = text.length > 1 ? [fc.integer({ min: 1, max: text.length - 1 }).map((n) => rawBody(text.slice(0, n), 'truncated'))] : []
      return fc.tuple(base, fc.oneof(fc.constantFrom(...UNPARSABLE).map((s) => rawBody(s, 'unparsable')), ...prefixes)).map(([parts, body]) => build(parts, { body }))
    }
    case 'body-deep':
      return fc.tuple(base, fc.constantFrom(1001, 5000), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([parts, depth, shape]) => build(parts, { body: deep(depth, shape) }))
    case 'body-as-text':
      return base.map((parts) => build(parts, { body: jsonBody(sample(op.body!, pools), 'as text/plain:'), headers: headersWith(parts, { 'content-type': 'text/plain' }) }))
    case 'body-missing':
      return base.map((parts) => build(parts, { body: undefined }))
    case 'body-too-large':
      return fc.tuple(base, fc.constantFrom(LIMIT + 1, 2 * LIMIT)).map(([parts, size]) => build(parts, { body: sized(size) }))
    case 'path-format': {
      const uuids = pathParams(op).filter((p) => p.schema.format === 'uuid').map((p) => p.name)
      const wrong = fc.constantFrom('not-a-uuid', 'zz', '1234', `${SAMPLE_UUID}0`, SAMPLE_UUID.slice(0, 35), 'g'.repeat(32), ...NASTY.filter((s) => s !== '' && !s.includes('/') && !['.', '..'].includes(s)))
      return fc.tuple(base, fc.constantFrom(...uuids), wrong).map(([parts, name, value]) => build({ ...parts, segments: { ...parts.segments, [name]: segment(value) } }, {}))
    }
    case 'path-unknown':
      return fc.tuple(base, fc.constantFrom(...pathParams(op).filter((p) => !ABSENCE_IS_FINE.includes(p.name)).map((p) => p.name)), fc.uuid()).map(([parts, name, value]) => build({ ...parts, segments: { ...parts.segments, [name]: segment(value) } }, {}))
    case 'query-wrong': {
      const params = op.params.filter((p) => p.in === 'query' && wrongQueryValues(p.schema).length > 0)
      return fc.tuple(base, fc.constantFrom(...params).chain((p) => fc.constantFrom(...wrongQueryValues(p.schema)).map((v) => `${p.name}=${encode(v)}`)))
        .map(([parts, pair]) => build(parts, { query: [...validQuery(op, pools).filter((q) => !q.startsWith(`${pair.split('=')[0]}=`)), pair] }))
    }
    case 'query-missing':
      return fc.tuple(base, fc.constantFrom(...op.params.filter((p) => p.in === 'query' && p.required).map((p) => p.name)))
        .map(([parts, name]) => build(parts, { query: validQuery(op, pools).filter((q) => !q.startsWith(`${name}=`)) }))
    case 'no-credentials':
      return base.map((parts) => build(parts, { headers: { ...(op.body ? JSON_TYPE : {}) } }))
    case 'wrong-credentials':
      return fc.tuple(base, fc.constantFrom<Record<string, string>>({ [API_KEY_HEADER]: 'not-the-key' }, { authorization: 'Bearer not-the-key' }))
        .map(([parts, credentials]) => build(parts, { headers: { ...parts.tenant, ...credentials, ...(op.body ? JSON_TYPE : {}) } }))
    case 'tenant-invalid':
      return fc.tuple(base, fc.constantFrom('not-a-uuid', `${TENANT_A}0`, 'g'.repeat(32), TENANT_A.replace(/1$/, 'g'), '{}'))
        .map(([parts, tenant]) => build(parts, { headers: { ...GOOD, 'x-tenant-id': tenant, ...(op.body ? JSON_TYPE : {}) } }))
    case 'method-wrong': {
      const others = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !methodsOfPath.has(m))
      return fc.tuple(base, fc.constantFrom(...others)).map(([parts, method]) => build(parts, { method, body: undefined }))
    }
    case 'unknown-subpath':
      return base.map((parts) => build(parts, { tail: '/zz-nope' }))
  }
}

function rejectedArb(world: World, ops: Operation[]): fc.Arbitrary<FuzzRequest> {
  const methods = new Map<string, Set<string>>()
  for (const op of ops) methods.set(op.path, new Set([...(methods.get(op.path) ?? []), op.method]))
  const generated = fc.constantFrom(...ops).chain((op) => {
    const own = methods.get(op.path)!
    return fc.constantFrom(...kindsFor(op, own, samplePools(world))).chain((kind) => invalidArb(world, op, kind, own))
  })
  return fc.oneof(
    { weight: 5, arbitrary: generated },
    { weight: 1, arbitrary: fc.constantFrom(...world.refused) },
  )
}

// ---------------------------------------------------------------------------------------------
// The properties

/**
 * Whether a request may have left the world unfit for the next one (gone ids, a moved or broken clock,
 * fault rules, a reset): then it is restored. Other changes (a new thread, a renamed assistant) do not matter.
 */
const mayUnsettle = (request: FuzzRequest, answer: Answer) =>
  request.url.startsWith('/_hangar') || answer.status >= 500 || (answer.status < 400 && request.method !== 'GET' && request.method !== 'POST')

const FAMILIES: Family[] = ['control-plane', 'auth', 'agent', 'deployed-agent', 'feedback', 'admin', 'system']

t.test('the fuzzed routes are read from the app, and each of them is served', async (t) => {
  const h = await harness(t)
  const counts = Object.fromEntries(FAMILIES.map((f) => [f, h.ops.filter((op) => op.family === f).length]))
  t.comment(`operations fuzzed, by family: ${JSON.stringify(counts)} (${h.ops.length} in all)`)
  for (const family of FAMILIES) t.ok(counts[family] > 0, `${family}: ${counts[family]} operations`)
  t.ok(h.ops.some((op) => op.path.startsWith('/api-host/v2/deployments')), 'the /api-host copies are included')
  t.ok(h.ops.some((op) => op.path === `${DEPLOYED_PREFIX}/threads/{thread_id}/runs/stream`), 'the deployed agent copies are included')
  t.ok(h.ops.some((op) => op.path === '/feedback/tokens/{token}'), 'feedback without /api/v1 is included')
  // Each operation, with real ids and nothing else, reaches its route: no router 404 nor 405.
  for (const op of h.ops) {
    const segments = Object.fromEntries(pathParams(op).map((p) => [p.name, segment(real(h.world, op, p.name)[0] ?? SAMPLE_UUID)]))
    const res = await h.send({ kind: 'route', method: op.method, url: fillPath(op.path, segments), headers: GOOD })
    // (A route may answer 405 itself, as GET /mcp/ does: the router's 405 is FastAPI's body.)
    const detail = res.status === 404 || res.status === 405 ? JSON.parse(res.body).detail : undefined
    const routed = !(res.status === 405 && detail === 'Method Not Allowed') && !(res.status === 404 && detail === 'Not Found')
    t.ok(routed, `${op.method} ${op.path} is served (answered ${res.status})`)
    if (mayUnsettle({ kind: 'route', method: op.method, url: op.path, headers: {} }, res)) await h.restore()
  }
})

for (const family of FAMILIES) {
  t.test(`${family}: random and malformed requests never get a 5xx, hangar keeps answering, every 4xx has the real error body`, async (t) => {
    const h = await harness(t)
    const ops = h.ops.filter((op) => op.family === family)
    await holds(t, `property A over ${ops.length} ${family} operations`, anythingArb(h.world, ops), RUNS.perFamily, async (request) => {
      const answer = await h.send(request)
      const problems = problemsOf(request, answer)
      const alive = await h.app.inject({ method: 'GET', url: '/ok' })
      if (alive.statusCode !== 200) problems.push(`afterwards GET /ok answered ${alive.statusCode}`)
      if (mayUnsettle(request, answer)) await h.restore()
      if (problems.length > 0) throw new Error(problems.join('\n'))
    })
  })
}

t.test('requests hangar rejects change nothing it stores (state, clock, faults)', async (t) => {
  const h = await harness(t)
  let dirty = false
  // A batch of invalid requests, then one look at the store; shrinking a failing batch leaves the request to blame.
  const batches = fc.array(rejectedArb(h.world, h.ops), { minLength: 1, maxLength: 8 })
  await holds(t, `property B over ${h.ops.length} operations and ${h.world.refused.length} refused requests`, batches, RUNS.rejected, async (batch) => {
    if (dirty) await h.restore()
    dirty = true
    const problems: string[] = []
    for (const request of batch) {
      const answer = await h.send(request)
      problems.push(...problemsOf(request, answer).map((p) => `${request.kind}: ${p}`))
      if (!(answer.status >= 400 && answer.status < 500) && !meant5xx(answer)) problems.push(`${request.kind}: a request built to be invalid was answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    }
    const after = await h.store()
    dirty = after !== h.baseline
    if (dirty && problems.length === 0) problems.push(`every request was rejected, but the store changed:\n${changes(h.baseline, after)}`)
    if (problems.length > 0) throw new Error(problems.join('\n'))
  })
})

// ---------------------------------------------------------------------------------------------
// The signed upload URL (Cloud Storage's part, left out of /openapi.json, so not among the routes
// above): whatever is sent to it is an upload or one of Cloud Storage's XML errors, never a 5xx,
// and a refused upload keeps nothing.

const STORAGE_ERROR = /^<\?xml version='1\.0' encoding='UTF-8'\?><Error><Code>[A-Za-z]+<\/Code><Message>[^<]*<\/Message>(<Details>[^<]*<\/Details>)?<\/Error>$/

t.test('the signed upload URL: any signature, headers, body or time is an upload or Cloud Storage\'s XML error, and a refused one keeps nothing', async (t) => {
  const h = await harness(t)
  const signed = new URL(h.world.uploadUrl, 'http://hangar')
  const deploymentId = signed.pathname.split('/')[4]
  const uploads = async () => (await h.app.inject({ method: 'GET', url: `/_hangar/deployments/${deploymentId}/uploads` })).body
  const request = fc.record({
    signature: fc.oneof(fc.constant(signed.searchParams.get('X-Goog-Signature')!), fc.string({ maxLength: 80 }), fc.stringMatching(/^[0-9a-f]{64}$/)),
    path: fc.constantFrom(signed.pathname, signed.pathname.replace('.tar.gz', '.tgz'), '/storage/another-bucket/deployments/x.tar.gz', `/api-host${signed.pathname}`, '/storage/hangar-source-uploads/'),
    contentType: fc.option(fc.constantFrom('application/gzip', 'APPLICATION/GZIP', 'application/octet-stream', 'application/json', 'text/plain; charset=utf-8', 'application/gzip; x=1')),
    range: fc.option(fc.constantFrom('0,209715200', '0, 209715200', '0,1', '', 'garbage', '209715200,0')),
    body: fc.uint8Array({ maxLength: 2048 }),
    late: fc.boolean(),
  })
  await holds(t, 'uploads to the signed URL', request, 200, async (r) => {
    const before = await uploads()
    const url = new URL(signed)
    url.pathname = r.path
    url.searchParams.set('X-Goog-Signature', r.signature)
    if (r.late) h.app.clock.advance(901_000)
    const headers: Record<string, string> = {}
    if (r.contentType !== null) headers['content-type'] = r.contentType
    if (r.range !== null) headers['x-goog-content-length-range'] = r.range
    const res = await h.app.inject({ method: 'PUT', url: url.pathname + url.search, headers, payload: Buffer.from(r.body) })
    const problems: string[] = []
    if (res.statusCode >= 500) problems.push(`answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
    if (res.statusCode === 200 && (r.late || res.body !== '')) problems.push(`an upload was accepted ${r.late ? 'after the URL expired' : `with a body: ${res.body}`}`)
    if (res.statusCode !== 200 && res.statusCode !== 404 && !(STORAGE_ERROR.test(res.body) && String(res.headers['content-type']).startsWith('application/xml'))) {
      problems.push(`refused (${res.statusCode}) without Cloud Storage's XML error: ${res.body.slice(0, 300)}`)
    }
    if (res.statusCode !== 200 && await uploads() !== before) problems.push(`refused (${res.statusCode}) but the upload changed`)
    if (r.late || res.statusCode === 200) await h.restore()
    if (problems.length > 0) throw new Error(problems.join('\n'))
  })
})

// ---------------------------------------------------------------------------------------------
// Body limit

t.test('a body over the limit is 413 on every route that takes a body; at the limit it is read', async (t) => {
  const h = await harness(t)
  const bodyOps = h.ops.filter((op) => BODY_METHODS.includes(op.method))
  const url = (op: Operation) => fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, segment(real(h.world, op, p.name)[0] ?? SAMPLE_UUID)])))
  for (const op of bodyOps) {
    const res = await h.send({ kind: 'over', method: op.method, url: url(op), headers: { ...GOOD, ...JSON_TYPE }, body: sized(LIMIT + 1) })
    t.equal(res.status, 413, `${op.method} ${op.path}: ${LIMIT + 1} bytes`)
    t.same(JSON.parse(res.body), { detail: 'Request Entity Too Large' })
  }
  // At exactly the limit the body is read (one route per family: each reads a whole MiB).
  const seen = new Set<Family>()
  for (const op of bodyOps.filter((o) => o.body && !seen.has(o.family) && seen.add(o.family))) {
    const res = await h.send({ kind: 'at', method: op.method, url: url(op), headers: { ...GOOD, ...JSON_TYPE }, body: sized(LIMIT) })
    t.ok(res.status !== 413 && res.status < 500, `${op.method} ${op.path}: ${LIMIT} bytes are read (answered ${res.status})`)
    await h.restore()
  }
})

t.test('HANGAR_BODY_LIMIT is honoured on every route that takes a body, to the byte', async (t) => {
  const limit = 4096
  const h = await harness(t, { bodyLimit: limit })
  const bodyOps = h.ops.filter((o) => BODY_METHODS.includes(o.method))
  const url = (op: Operation) => fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, segment(real(h.world, op, p.name)[0] ?? SAMPLE_UUID)])))
  for (const op of bodyOps) {
    const over = await h.send({ kind: 'over', method: op.method, url: url(op), headers: { ...GOOD, ...JSON_TYPE }, body: sized(limit + 1) })
    t.equal(over.status, 413, `${op.method} ${op.path}: ${limit + 1} bytes`)
  }
  // Read bodies may change the world (no restore: the state document itself is over this limit), so they come last.
  for (const op of bodyOps) {
    const at = await h.send({ kind: 'at', method: op.method, url: url(op), headers: { ...GOOD, ...JSON_TYPE }, body: sized(limit) })
    t.ok(at.status !== 413 && at.status < 500, `${op.method} ${op.path}: ${limit} bytes are read (answered ${at.status})`)
  }
})

// ---------------------------------------------------------------------------------------------
// Sweeps: every field of every body and every query parameter, each in turn (on the routes at their
// own paths; the copies run the same handlers). Where a property samples, these leave nothing out,
// and they list every failing request at once.

/** Operations at their own paths: not the /api-host, deployed-agent or un-prefixed feedback copies. */
const ownPath = (op: Operation) =>
  !op.path.startsWith('/api-host/') && !op.path.startsWith(DEPLOYED_PREFIX) && !(op.family === 'feedback' && !op.path.startsWith('/api/v1/'))

/** The operation's URL with the world's first real id for every path parameter and its required query parameters. */
function realUrl(world: World, op: Operation, query: string[] = validQuery(op, samplePools(world))): string {
  const segments = Object.fromEntries(pathParams(op).map((p) => [p.name, segment(real(world, op, p.name)[0] ?? SAMPLE_UUID)]))
  return fillPath(op.path, segments) + (query.length ? `?${query.join('&')}` : '')
}

/**
 * Sends each request and collects every problem. With `unchanged`, the store is looked at after each
 * batch of rejected requests; when it changed, the batch is replayed one request at a time to name
 * the culprit. Without, the world is restored only when a request may have unsettled it.
 */
async function sweep(h: Harness, requests: (FuzzRequest & { expect?: number })[], options: { unchanged: boolean }) {
  const failures: string[] = []
  const report = (request: FuzzRequest, problems: string[]) => {
    if (problems.length > 0) failures.push(`${describe(request)}\n    → ${problems.join('\n    → ')}`)
  }
  const check = (request: FuzzRequest & { expect?: number }, answer: Answer) => {
    const problems = problemsOf(request, answer)
    if (request.expect !== undefined && answer.status !== request.expect) problems.push(`answered ${answer.status} (expected ${request.expect}): ${answer.body.slice(0, 200)}`)
    return problems
  }
  if (!options.unchanged) {
    for (const request of requests) {
      const answer = await h.send(request)
      report(request, check(request, answer))
      if (mayUnsettle(request, answer)) await h.restore()
    }
    return failures
  }
  for (let i = 0; i < requests.length; i += 20) {
    const batch = requests.slice(i, i + 20)
    const rejected: typeof batch = []
    for (const request of batch) {
      const answer = await h.send(request)
      report(request, check(request, answer))
      if (answer.status >= 400 && answer.status < 500) rejected.push(request)
    }
    if (await h.store() === h.baseline) continue
    await h.restore()
    // Something changed the store: each rejected request again, alone, to name the one to blame.
    for (const request of rejected) {
      const answer = await h.send(request)
      const after = await h.store()
      if (after === h.baseline) continue
      report(request, [`rejected with ${answer.status} but the store changed: ${changes(h.baseline, after)}`])
      await h.restore()
    }
  }
  return failures
}

t.test('every field of every body, made wrong, is a 422 that changes nothing', async (t) => {
  const h = await harness(t)
  const pools = samplePools(h.world)
  const requests: (FuzzRequest & { expect: number })[] = []
  for (const op of h.ops.filter((o) => o.body && ownPath(o))) {
    for (const point of pointsOf(op.body!)) {
      for (const value of someWrongValues(point.schema)) {
        requests.push(Object.assign(printable({
          kind: 'field made wrong', method: op.method, url: realUrl(h.world, op), headers: { ...GOOD, ...JSON_TYPE },
          body: jsonBody(withLeaf(op.body!, point.path, value, pools), `${point.path.join('.')} = ${JSON.stringify(value)}:`),
        }), { expect: 422 }))
      }
    }
  }
  t.strictSame(await sweep(h, requests, { unchanged: true }), [], `${requests.length} requests, each with one field wrong`)
})

t.test('every field of every body, at the edges of what it accepts, never gets a 5xx', async (t) => {
  const h = await harness(t)
  const pools = samplePools(h.world)
  let turn = 0
  const requests: FuzzRequest[] = []
  for (const op of h.ops.filter((o) => o.body && ownPath(o))) {
    for (const point of pointsOf(op.body!)) {
      for (const value of someEdgeValues(point.schema, 3, turn++)) {
        requests.push(printable({
          kind: 'field at an edge', method: op.method, url: realUrl(h.world, op), headers: { ...GOOD, ...JSON_TYPE },
          body: jsonBody(withLeaf(op.body!, point.path, value, pools), `${point.path.join('.')} = ${JSON.stringify(value)?.slice(0, 60)}:`),
        }))
      }
    }
  }
  t.strictSame(await sweep(h, requests, { unchanged: false }), [], `${requests.length} requests, each with one field at an edge`)
})

t.test('every query parameter, wrong, is a 422 that changes nothing; at its edges, never a 5xx', async (t) => {
  const h = await harness(t)
  const pools = samplePools(h.world)
  const wrong: (FuzzRequest & { expect?: number })[] = []
  const edges: FuzzRequest[] = []
  for (const op of h.ops.filter(ownPath)) {
    const valid = validQuery(op, pools)
    for (const p of op.params.filter((q) => q.in === 'query')) {
      const others = valid.filter((q) => !q.startsWith(`${p.name}=`))
      const url = (value: string) => realUrl(h.world, op, [...others, `${p.name}=${encode(value)}`])
      for (const value of wrongQueryValues(p.schema)) {
        wrong.push(Object.assign(printable({ kind: 'query made wrong', method: op.method, url: url(value), headers: { ...GOOD } }), { expect: 422 }))
      }
      const edgeTexts = [...someEdgeValues(p.schema, 4, edges.length).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))), '', 'x'.repeat(10_000)]
      for (const value of edgeTexts.filter((v) => !surelyRejects(p.schema, v))) {
        edges.push(printable({ kind: 'query at an edge', method: op.method, url: url(value), headers: { ...GOOD } }))
      }
    }
  }
  t.strictSame(await sweep(h, wrong, { unchanged: true }), [], `${wrong.length} requests, each with one query parameter wrong`)
  t.strictSame(await sweep(h, edges, { unchanged: false }), [], `${edges.length} requests, each with one query parameter at an edge`)
})

// ---------------------------------------------------------------------------------------------
// Bytes no HTTP client library would send, over a real socket.

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes `bytes` to hangar, half-closes, and reads what comes back (undefined when nothing does). */
function exchange(port: number, bytes: Buffer | string): Promise<RawAnswer | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (!text.startsWith('HTTP/1.1 ') || end < 0) return resolve(undefined)
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
      let body = text.slice(end + 4)
      if (headers['transfer-encoding'] === 'chunked') {
        let decoded = ''
        for (let at = 0; ;) {
          const eol = body.indexOf('\r\n', at)
          const size = parseInt(body.slice(at, eol), 16)
          if (!(size > 0)) break
          decoded += body.slice(eol + 2, eol + 2 + size)
          at = eol + 2 + size + 2
        }
        body = decoded
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') })
    })
  })
}

const request = (line: string, headers: string[], body: Buffer | string = '') =>
  Buffer.concat([Buffer.from(`${line}\r\n${['host: hangar', 'connection: close', ...headers].join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1')])
const KEY = `${API_KEY_HEADER}: ${API_KEY}`

/** FastAPI's `{"detail": …}`, or what uvicorn answers a request it cannot parse as HTTP. */
const isRealErrorBody = (answer: RawAnswer) =>
  answer.body === 'Invalid HTTP request received.' ||
  problemsOf({ kind: 'raw', method: 'GET', url: '/', headers: {} }, { status: answer.status, headers: answer.headers, body: answer.body }).length === 0

t.test('bodies that are not UTF-8 and escapes that decode to nothing get the real error bodies', async (t) => {
  const { port } = await serveApp(t, CONFIG)
  const notUtf8 = await exchange(port, request('POST /threads HTTP/1.1', [KEY, 'content-type: application/json', 'content-length: 4'], Buffer.from([0x22, 0xff, 0xfe, 0x22])))
  t.equal(notUtf8?.status, 400)
  t.same(notUtf8 && JSON.parse(notUtf8.body), { detail: 'There was an error parsing the body' })
  const query = await exchange(port, request('GET /v2/deployments?limit=%ZZ&name_contains=%E0%A4%A HTTP/1.1', [KEY]))
  t.equal(query?.status, 422, 'a malformed escape in the query is kept as text, as Python keeps it')
  t.ok(query && isRealErrorBody(query), `422 body: ${query?.body}`)
  for (const path of ['/threads/%ZZ', '/v2/deployments/%E0%A4%A', `/v2/deployments/${encode('\ud800')}`, '/assistants/%', '/deployments/%C0%AF/agent/ok', `/v2/deployments/${'a'.repeat(2049)}`]) {
    const answer = await exchange(port, request(`GET ${path} HTTP/1.1`, [KEY]))
    t.ok(answer && answer.status >= 400 && answer.status < 500, `GET ${path.slice(0, 60)}: a 4xx (answered ${answer?.status})`)
    t.ok(answer && isRealErrorBody(answer), `GET ${path.slice(0, 60)}: the body is FastAPI's {"detail": …}, not ${answer?.body.slice(0, 120)}`)
  }
})

t.test('requests that are not HTTP get a 4xx of the real form, and hangar keeps answering', async (t) => {
  const { port, base } = await serveApp(t, CONFIG)
  const cases: [string, Buffer][] = [
    ['a chunk size that is not hex', request('POST /threads HTTP/1.1', [KEY, 'content-type: application/json', 'transfer-encoding: chunked'], 'zz\r\n{}\r\n0\r\n\r\n')],
    ['a NUL in the request line', request('GET /threads/a\u0000b HTTP/1.1', [KEY])],
    ['a request line that is not one', Buffer.from('GARBAGE\r\n\r\n')],
    ['a header without a colon', request('GET /ok HTTP/1.1', ['no colon here'])],
    ['both Content-Length and chunked', request('POST /threads HTTP/1.1', [KEY, 'content-type: application/json', 'content-length: 2', 'transfer-encoding: chunked'], '2\r\n{}\r\n0\r\n\r\n')],
    ['headers over 16 KiB', request('GET /ok HTTP/1.1', [`x-padding: ${'p'.repeat(20_000)}`])],
  ]
  for (const [name, bytes] of cases) {
    const answer = await exchange(port, bytes)
    t.ok(answer && answer.status >= 400 && answer.status < 500, `${name}: a 4xx (answered ${answer?.status})`)
    t.ok(answer && isRealErrorBody(answer), `${name}: FastAPI's {"detail": …} or uvicorn's "Invalid HTTP request received.", not ${answer?.body.slice(0, 120)}`)
  }
  // A body cut short: uvicorn closes without an answer; any answer must be a 4xx of the real form.
  const short = await exchange(port, request('POST /threads HTTP/1.1', [KEY, 'content-type: application/json', 'content-length: 10'], '{}'))
  t.ok(short === undefined || (short.status >= 400 && short.status < 500 && isRealErrorBody(short)), `a body shorter than its Content-Length: ${short?.status ?? 'no answer'} ${short?.body.slice(0, 120) ?? ''}`)
  // Over the limit, whether announced or streamed in chunks: 413 with FastAPI's body.
  const announced = await exchange(port, request('POST /threads HTTP/1.1', [KEY, 'content-type: application/json', `content-length: ${LIMIT + 1}`], '{}'))
  t.equal(announced?.status, 413, 'a Content-Length over the limit')
  t.same(announced && JSON.parse(announced.body), { detail: 'Request Entity Too Large' })
  const half = (LIMIT / 2 + 1).toString(16)
  const chunked = await exchange(port, request('POST /threads HTTP/1.1', [KEY, 'content-type: application/json', 'transfer-encoding: chunked'],
    `${half}\r\n${'x'.repeat(LIMIT / 2 + 1)}\r\n${half}\r\n${'x'.repeat(LIMIT / 2 + 1)}\r\n0\r\n\r\n`))
  t.equal(chunked?.status, 413, 'a chunked body over the limit')
  t.same(chunked && JSON.parse(chunked.body), { detail: 'Request Entity Too Large' })
  t.equal((await fetch(`${base}/ok`)).status, 200, 'hangar still answers')
})

// ---------------------------------------------------------------------------------------------
// What the fuzzing found, one behaviour each, with the smallest request that shows it.

async function small(t: Test) {
  const { app, clock } = await makeApp(t, { config: CONFIG })
  const api = clientFor(app)
  const state = async () => (await app.inject({ method: 'GET', url: '/_hangar/state' })).body
  const finishedRun = async (base = '') => {
    const thread = (await api.post(`${base}/threads`, {})).body.thread_id as string
    await api.post(`${base}/threads/${thread}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } })
    return { thread, run: (await api.get(`${base}/threads/${thread}/runs`)).body[0].run_id as string }
  }
  return { app, clock, api, state, finishedRun }
}

t.test('a thread whose supersteps are refused is not created', async (t) => {
  const { api, state } = await small(t)
  const before = await state()
  const res = await api.post('/threads', { thread_id: SAMPLE_UUID, metadata: { graph_id: 'agent' }, supersteps: [{ updates: [{ values: { messages: [] }, as_node: 'nope' }] }] })
  t.equal(res.status, 400)
  t.equal((await api.get(`/threads/${SAMPLE_UUID}`)).status, 404, 'no thread is left behind')
  t.equal(await state(), before, 'nothing is stored')
})

t.test('feedback tokens asked for in a list, one of them for an unknown run, are none of them created', async (t) => {
  const { api, state, finishedRun } = await small(t)
  const { run } = await finishedRun()
  const before = await state()
  const res = await api.post('/api/v1/feedback/tokens', [{ run_id: run, feedback_key: 'first' }, { run_id: SAMPLE_UUID, feedback_key: 'second' }])
  t.equal(res.status, 404)
  t.same((await api.get(`/api/v1/feedback/tokens?run_id=${run}`)).body, [], 'no token of the list was created')
  t.equal(await state(), before, 'nothing is stored')
})

t.test('a run batch with one unknown assistant starts none of its runs', async (t) => {
  const { api, state } = await small(t)
  const before = await state()
  const res = await api.post('/runs/batch', [{ assistant_id: 'agent', input: { messages: [] }, on_completion: 'keep' }, { assistant_id: 'nope' }])
  t.equal(res.status, 404)
  t.equal((await api.post('/threads/count', {})).body, 0, 'no thread was kept')
  t.equal(await state(), before, 'nothing is stored')
})

t.test('a run refused on a busy thread leaves the thread as it was', async (t) => {
  const { api } = await small(t)
  const thread = (await api.post('/threads', {})).body.thread_id as string
  // The pipeline graph waits on the (frozen) clock: the thread stays busy.
  t.equal((await api.post(`/threads/${thread}/runs`, { assistant_id: 'pipeline', input: { messages: [{ role: 'user', content: 'x' }] } })).status, 200)
  const before = (await api.get(`/threads/${thread}`)).body
  const res = await api.post(`/threads/${thread}/runs`, { assistant_id: 'agent', input: {}, metadata: { x: 1 } })
  t.equal(res.status, 422)
  t.equal(res.body.detail, BUSY)
  t.same((await api.get(`/threads/${thread}`)).body.metadata, before.metadata, 'the refused run did not rewrite the thread\'s graph_id and assistant_id')
})

t.test('a request refused for want of credentials under a deployment\'s agent writes nothing', async (t) => {
  const { api, app, state } = await small(t)
  const deployment = (await api.post('/v2/deployments', dockerDeployment())).body
  const before = await state()
  const res = await app.inject({ method: 'GET', url: `/deployments/${deployment.id}/agent/assistants/agent` })
  t.equal(res.statusCode, 403)
  t.equal(await state(), before, 'the refused request did not seed the agent server\'s assistants')
})

t.test('the clock refuses instants no date can hold, and keeps working', async (t) => {
  const { api } = await small(t)
  for (const change of [{ action: 'set', to: 1e300 }, { action: 'set', to: 8.64e15 + 1 }, { action: 'advance', ms: 1e300 }, { action: 'advance', ms: -1e17 }]) {
    const res = await api.post('/_hangar/clock', change)
    t.ok(res.status >= 400 && res.status < 500, `${JSON.stringify(change)} is refused (answered ${res.status} ${res.text})`)
    const now = await api.get('/_hangar/clock')
    t.equal(now.status, 200, 'GET /_hangar/clock still answers')
    t.equal(now.body.now_ms, START, 'and the clock did not move')
    await api.post('/_hangar/clock', { action: 'set', to: START })
  }
})

t.test('a page offset beyond what SQLite binds reads as an empty page, never a 5xx', async (t) => {
  const { api } = await small(t)
  const huge = '9'.repeat(400)
  for (const url of [`/v2/listeners?limit=1&offset=${huge}`, `/v2/deployments?offset=${huge}`, '/v2/deployments?offset=9223372036854775807']) {
    const res = await api.get(url)
    t.equal(res.status, 200, url.slice(0, 40))
    t.same(res.body.resources, [], 'past the end: nothing')
  }
  const threads = await api.post('/threads/search', { offset: 1e30 })
  t.equal(threads.status, 200)
  t.same(threads.body, [])
})

t.test('a feedback token expiry no date can hold is refused, and nothing is stored', async (t) => {
  const { api, state, finishedRun } = await small(t)
  const { run } = await finishedRun()
  const before = await state()
  for (const expires_in of [{ days: 1e9 }, { hours: 2 ** 53 }, { minutes: -(2 ** 53) }]) {
    const res = await api.post('/api/v1/feedback/tokens', { run_id: run, feedback_key: 'k', expires_in })
    t.ok(res.status >= 400 && res.status < 500, `expires_in ${JSON.stringify(expires_in)} is refused (answered ${res.status} ${res.text})`)
  }
  t.equal((await api.get(`/api/v1/feedback/tokens?run_id=${run}`)).status, 200, 'the run\'s tokens can still be listed')
  t.equal(await state(), before, 'nothing is stored')
})

t.test('date-time fields take only real instants, as pydantic does', async (t) => {
  const { api, state, finishedRun } = await small(t)
  const { run } = await finishedRun()
  const before = await state()
  for (const expires_at of ['yesterday', '2025-02-30T00:00:00Z', '2025-13-01T00:00:00Z', '+275760-09-13T00:00:00.001Z']) {
    const res = await api.post('/api/v1/feedback/tokens', { run_id: run, feedback_key: 'k', expires_at })
    t.equal(res.status, 422, `expires_at ${expires_at} is refused (answered ${res.status} ${res.text.slice(0, 120)})`)
    // The body is a union (one token or a list), so pydantic names the member in between.
    t.same(Array.isArray(res.body.detail) && res.body.detail[0].loc, ['body', 'FeedbackIngestTokenCreateSchema', 'expires_at'], 'the error points at expires_at')
  }
  t.equal(await state(), before, 'nothing is stored')
  const clock = await api.post('/_hangar/clock', { action: 'freeze', to: 'yesterday' })
  t.equal(clock.status, 422, 'the clock\'s "to" is a date-time too')
})

t.test('OPTIONS that is not a CORS preflight is answered as FastAPI answers it', async (t) => {
  const { app } = await small(t)
  for (const headers of [{}, { origin: 'http://app.example' }]) {
    const res = await app.inject({ method: 'OPTIONS', url: '/v2/deployments', headers })
    t.equal(res.statusCode, 405, `OPTIONS with ${JSON.stringify(headers)}`)
    t.equal(res.body, JSON.stringify({ detail: 'Method Not Allowed' }), `OPTIONS with ${JSON.stringify(headers)}: FastAPI's body, not ${JSON.stringify(res.body)}`)
    t.ok(res.headers.allow, 'with Allow')
  }
  const preflight = await app.inject({ method: 'OPTIONS', url: '/v2/deployments', headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' } })
  t.ok(preflight.statusCode < 300, 'a real preflight is still answered')
})
