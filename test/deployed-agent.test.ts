// Deployments that serve agents: what a CI script does end to end. It creates a deployment, polls
// its revision until DEPLOYED (moving hangar's clock instead of sleeping), then points the official
// agent-server SDK at the deployment's `url`, streams a run with feedback keys, submits feedback and
// reads it back with the official tracing SDK.

import { WebSocket } from 'ws'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { Client as LangSmith } from 'langsmith'
import { githubDeployment, runClockUntil, serveApp, SHIPPED_GRAPHS, TENANT_A, TENANT_B } from './helpers.js'

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

async function serve(t: Test) {
  const served = await serveApp(t)
  const { base, clock } = served
  const headers = (tenant = TENANT_A) => ({ 'x-api-key': 'ci-key', 'x-tenant-id': tenant, 'content-type': 'application/json' })
  const call = async (method: string, path: string, body?: unknown, tenant?: string) => {
    const response = await fetch(`${base}${path}`, { method, headers: headers(tenant), body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await response.text()
    return { status: response.status, body: text === '' ? null : JSON.parse(text) }
  }
  /** What the CI script does: poll the revision, moving the clock 10 s between polls, until it ends. */
  const pollRevision = async (deploymentId: string, revisionId: string, tenant?: string) => {
    for (let poll = 0; poll < 200; poll++) {
      const { body } = await call('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`, undefined, tenant)
      if (body.status === 'DEPLOYED' || body.status.includes('FAILED')) return body.status as string
      clock.advance(10_000)
    }
    throw new Error('revision never finished')
  }
  const deploy = async (name: string, overrides: Record<string, unknown> = {}, tenant?: string) => {
    const created = await call('POST', '/v2/deployments', githubDeployment({ name, ...overrides }), tenant)
    t.equal(created.status, 201)
    return created.body as { id: string; url: string; latest_revision_id: string; source_config: Record<string, unknown> }
  }
  const sdk = (apiUrl: string) => new Client({ apiUrl, apiKey: 'ci-key', callerOptions: { maxRetries: 0 } })
  return { ...served, call, pollRevision, deploy, sdk }
}

t.test('create, poll until DEPLOYED, then the SDK streams from the deployment url and feedback lands', async (t) => {
  const { base, call, pollRevision, deploy, sdk } = await serve(t)
  const deployment = await deploy('support_bot')
  t.equal(deployment.url, `${base}/deployments/${deployment.id}/agent`, 'the deployment says where its agent server answers')
  t.equal(deployment.source_config.custom_url, deployment.url, 'a github deployment shows it as its read-only custom_url too')

  const agent = sdk(deployment.url)
  await t.rejects(agent.assistants.search(), /HTTP 503.*not serving yet/, 'no revision DEPLOYED yet: the agent server is not up')

  t.equal(await pollRevision(deployment.id, deployment.latest_revision_id), 'DEPLOYED')
  t.equal((await call('GET', `/v2/deployments/${deployment.id}`)).body.status, 'READY')

  const assistants = await agent.assistants.search({ limit: 100 })
  t.same(assistants.map((a) => a.graph_id).sort(), [...SHIPPED_GRAPHS], 'each graph has its system assistant')
  const thread = await agent.threads.create()
  const parts: { event: string; data: any }[] = []
  for await (const part of agent.runs.stream(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'where is my parcel?' }] }, feedbackKeys: ['helpful'],
  })) parts.push(part)
  t.same(parts.map((p) => p.event).filter((e) => e === 'metadata' || e === 'feedback'), ['metadata', 'feedback'])
  const runId = parts[0].data.run_id as string
  const url = parts.at(-1)!.data.helpful as string
  t.match(url, new RegExp(`^${base}/api/v1/feedback/tokens/${UUID}$`))
  const state = await agent.threads.getState(thread.thread_id)
  t.equal((state.values as any).messages.at(-1).content, 'where is my parcel?', 'the thread kept the run\'s output')

  t.equal((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ score: 1 }) })).status, 200)
  // The deployment's runs are its workspace's: the tracing SDK names it (LANGSMITH_WORKSPACE_ID does the same).
  const tracing = new LangSmith({ apiUrl: base, apiKey: 'ci-key', workspaceId: TENANT_A })
  const feedback = []
  for await (const f of tracing.listFeedback({ runIds: [runId] })) feedback.push(f)
  t.same(feedback.map((f) => [f.key, f.score]), [['helpful', 1]])
  const elsewhere = []
  for await (const f of new LangSmith({ apiUrl: base, apiKey: 'ci-key', workspaceId: TENANT_B }).listFeedback({ runIds: [runId] })) elsewhere.push(f)
  t.same(elsewhere, [], 'another workspace does not see it')

  t.same(await (await fetch(`${deployment.url}/ok`)).json(), { ok: true }, 'health check under the url, like a deployed server')
  t.equal(((await (await fetch(`${deployment.url}/info`)).json()) as any).flags.assistants, true)

  t.equal((await call('DELETE', `/v2/deployments/${deployment.id}`)).status, 204)
  const gone = await fetch(`${deployment.url}/threads/${thread.thread_id}`, { headers: { 'x-api-key': 'ci-key' } })
  t.equal(gone.status, 404)
  t.same(await gone.json(), { detail: `Deployment ID ${deployment.id} not found.` })
})

t.test('each deployment\'s agent server has its own data, apart from the one at the root', async (t) => {
  const { base, pollRevision, deploy, sdk } = await serve(t)
  const first = await deploy('first')
  const second = await deploy('second', {}, TENANT_B)
  t.equal(await pollRevision(first.id, first.latest_revision_id), 'DEPLOYED')
  t.equal(await pollRevision(second.id, second.latest_revision_id, TENANT_B), 'DEPLOYED')

  const thread = await sdk(first.url).threads.create({ metadata: { owner: 'first' } })
  await sdk(first.url).assistants.create({ graphId: 'pipeline', name: 'only-here' })
  t.equal((await sdk(first.url).threads.search()).length, 1)
  t.equal((await sdk(second.url).threads.search()).length, 0, 'another deployment does not see it')
  t.equal((await sdk(base).threads.search()).length, 0, 'nor does the agent server at the root')
  await t.rejects(sdk(second.url).threads.get(thread.thread_id), /HTTP 404/)
  t.same((await sdk(second.url).assistants.search({ graphId: 'pipeline' })).map((a) => a.name), ['pipeline'])
  t.same((await sdk(first.url).assistants.search({ graphId: 'pipeline' })).map((a) => a.name).sort(), ['only-here', 'pipeline'])
})

t.test('a deployment keeps serving while a new revision builds, and one that failed never serves', async (t) => {
  const { call, pollRevision, deploy, sdk } = await serve(t)
  const deployment = await deploy('steady')
  t.equal(await pollRevision(deployment.id, deployment.latest_revision_id), 'DEPLOYED')
  const patched = await call('PATCH', `/v2/deployments/${deployment.id}`, { source_revision_config: { repo_ref: 'release' } })
  t.not(patched.body.latest_revision_id, deployment.latest_revision_id, 'the patch started a new revision')
  t.equal(patched.body.url, deployment.url, 'the url stays the same across revisions')
  t.equal((await sdk(deployment.url).assistants.search({ limit: 100 })).length, SHIPPED_GRAPHS.length, 'the previous revision still serves')

  const broken = await deploy('broken', { source_revision_config: { repo_ref: 'hangar/fail-build', langgraph_config_path: 'langgraph.json' } })
  t.equal(await pollRevision(broken.id, broken.latest_revision_id), 'BUILD_FAILED')
  const refused = await fetch(`${broken.url}/assistants/search`, { method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' }, body: '{}' })
  t.equal(refused.status, 503)
  t.same(await refused.json(), { detail: `Deployment ID ${broken.id} is not serving yet: no revision of it is DEPLOYED.` })
})

t.test('unknown deployments and missing credentials get the usual errors', async (t) => {
  const { base, pollRevision, deploy } = await serve(t)
  const unknown = '99999999-9999-4999-8999-999999999999'
  const response = await fetch(`${base}/deployments/${unknown}/agent/assistants/search`, { method: 'POST', headers: { 'x-api-key': 'k' } })
  t.equal(response.status, 404)
  t.same(await response.json(), { detail: `Deployment ID ${unknown} not found.` })

  const deployment = await deploy('guarded')
  await pollRevision(deployment.id, deployment.latest_revision_id)
  const anonymous = await fetch(`${deployment.url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(anonymous.status, 403)
  t.same(await anonymous.json(), { detail: 'Missing authentication headers' }, 'the same gate as the agent server at the root')
  const upper = await fetch(`${base}/deployments/${deployment.id.toUpperCase()}/agent/threads`, {
    method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' }, body: '{}',
  })
  t.equal(upper.status, 200, 'the deployment id is matched in any case, like the control plane\'s UUIDs')

  const asOther = await fetch(`${deployment.url}/threads`, {
    method: 'POST', headers: { 'x-api-key': 'k', 'x-tenant-id': TENANT_B, 'content-type': 'application/json' }, body: '{}',
  })
  t.equal(asOther.status, 404, 'a request naming another workspace does not see the deployment')
  t.same(await asOther.json(), { detail: `Deployment ID ${deployment.id} not found.` })
  const asOwner = await fetch(`${deployment.url}/threads`, {
    method: 'POST', headers: { 'x-api-key': 'k', 'x-tenant-id': TENANT_A.toUpperCase(), 'content-type': 'application/json' }, body: '{}',
  })
  t.equal(asOwner.status, 200, 'naming its own workspace (in any case) is fine')
})

t.test('resetting a workspace stops the runs in flight on its deployments; other workspaces\' runs go on', async (t) => {
  const { base, clock, call, pollRevision, deploy, sdk } = await serve(t)
  const mine = await deploy('mine')
  const theirs = await deploy('theirs', {}, TENANT_B)
  await pollRevision(mine.id, mine.latest_revision_id)
  await pollRevision(theirs.id, theirs.latest_revision_id, TENANT_B)
  clock.freeze()
  // A pipeline run waits in its first node until the clock moves: both are in flight.
  const start = async (url: string) => {
    const thread = await sdk(url).threads.create()
    const run = await sdk(url).runs.create(thread.thread_id, 'pipeline', { input: { topic: 'reset' } })
    return { thread, run }
  }
  const a = await start(mine.url)
  const b = await start(theirs.url)
  const reset = await fetch(`${base}/_hangar/reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace: TENANT_A }) })
  t.equal(reset.status, 204)
  t.equal((await call('GET', `/v2/deployments/${mine.id}`)).status, 404, 'workspace A\'s deployment is gone')
  const statusOfB = async () => (await sdk(theirs.url).runs.get(b.thread.thread_id, b.run.run_id)).status
  await runClockUntil(clock, async () => (await statusOfB()) === 'success', "workspace B's run succeeds")
  t.equal(await statusOfB(), 'success', 'workspace B\'s run went on to the end')
  const state = await (await fetch(`${base}/_hangar/state`)).json() as { tables: Record<string, { run_id?: string }[]> }
  t.same(state.tables.runs.filter((r) => r.run_id === a.run.run_id), [], 'workspace A\'s run is gone with its deployment')
  t.equal(state.tables.runs.filter((r) => r.run_id === b.run.run_id).length, 1)
})

t.test('the session protocol on a deployment url: threads.stream() over SSE, and over a WebSocket', async (t) => {
  const { deploy, pollRevision, sdk } = await serve(t)
  const deployment = await deploy('protocol_agent')
  t.equal(await pollRevision(deployment.id, deployment.latest_revision_id), 'DEPLOYED')

  const thread = sdk(deployment.url).threads.stream({ assistantId: 'agent' })
  t.teardown(() => thread.close())
  await thread.run.start({ input: { messages: [{ type: 'human', content: 'deployed hello' }] } })
  const output = (await thread.output) as { messages: { content: unknown }[] }
  t.same(output.messages.at(-1)!.content, [{ type: 'text', text: 'deployed hello' }])

  const overSocket = new Client({ apiUrl: deployment.url, apiKey: null as never }).threads.stream({
    assistantId: 'agent',
    transport: 'websocket',
    webSocketFactory: (url: string) => new WebSocket(`${url}?api_key=ci-key`) as never,
  })
  t.teardown(() => overSocket.close())
  await overSocket.run.start({ input: { messages: [{ type: 'human', content: 'over the socket' }] } })
  const viaSocket = (await overSocket.output) as { messages: { content: unknown }[] }
  t.same(viaSocket.messages.at(-1)!.content, [{ type: 'text', text: 'over the socket' }])
})
