// The official example client's flow (FACTS.md, "The official example client"), against a real
// listening hangar over HTTP. Its 60-second sleeps between polls are made by moving the manual
// clock, so the realistic speed takes minutes of emulated time and milliseconds of real time.

import t, { type Test } from 'tap'
import { githubDeployment, serveApp, TENANT_A } from './helpers.js'

class ExampleClientError extends Error {}

/** What the example client does, step by step, with its own checks. `waitBetweenPolls` stands in for its time.sleep (the test moves the clock). */
async function runExampleClient(base: string, configPathField: string, waitBetweenPolls: (ms: number) => void) {
  const headers = { 'X-Api-Key': 'lsv2_example', 'X-Tenant-Id': TENANT_A }
  const json = { ...headers, 'Content-Type': 'application/json' }
  const log: string[] = []

  async function pollUntilDeployed(deploymentId: string, revisionId: string) {
    const deadline = 30 * 60_000
    for (let waited = 0; waited <= deadline; waited += 60_000) {
      const res = await fetch(`${base}/v2/deployments/${deploymentId}/revisions/${revisionId}`, { headers })
      if (res.status !== 200) throw new ExampleClientError(`get revision: ${res.status}`)
      const { status } = (await res.json()) as { status: string }
      log.push(status)
      if (status === 'DEPLOYED') return
      if (status.includes('FAILED')) throw new ExampleClientError(`revision failed: ${status}`)
      waitBetweenPolls(60_000)
    }
    throw new ExampleClientError('timed out after 30 minutes')
  }

  async function latestRevision(deploymentId: string) {
    const res = await fetch(`${base}/v2/deployments/${deploymentId}/revisions`, { headers })
    if (res.status !== 200) throw new ExampleClientError(`list revisions: ${res.status}`)
    return ((await res.json()) as { resources: { id: string }[] }).resources[0].id
  }

  const body = githubDeployment({
    source_revision_config: { repo_ref: 'main', [configPathField]: 'langgraph.json', image_uri: null },
  })
  const created = await fetch(`${base}/v2/deployments`, { method: 'POST', headers: json, body: JSON.stringify(body) })
  if (created.status !== 201) throw new ExampleClientError(`create: ${created.status} ${await created.text()}`)
  const { id } = (await created.json()) as { id: string }

  const first = await latestRevision(id)
  await pollUntilDeployed(id, first)

  const patch = { source_config: { build_on_push: true }, source_revision_config: { repo_ref: 'main', [configPathField]: 'langgraph.json' } }
  const patched = await fetch(`${base}/v2/deployments/${id}`, { method: 'PATCH', headers: json, body: JSON.stringify(patch) })
  if (patched.status !== 200) throw new ExampleClientError(`patch: ${patched.status}`)
  const second = await latestRevision(id)
  if (second === first) throw new ExampleClientError('the patch made no new revision')
  await pollUntilDeployed(id, second)

  const deleted = await fetch(`${base}/v2/deployments/${id}`, { method: 'DELETE', headers })
  if (deleted.status !== 204) throw new ExampleClientError(`delete: ${deleted.status}`)
  return { id, log }
}

async function listening(t: Test, speed: 'realistic' | 'fast') {
  const { base, clock } = await serveApp(t, { revisionSpeed: speed })
  return { base, clock }
}

for (const field of ['langgraph_config_path', 'graph_config_path']) {
  t.test(`the example client's create → poll → patch → poll → delete flow passes (config path as ${field})`, async (t) => {
    const { base, clock } = await listening(t, 'realistic')
    const { id, log } = await runExampleClient(base, field, (ms) => clock.advance(ms))
    t.equal(log.at(-1), 'DEPLOYED')
    t.ok(log.length >= 4 && log.length <= 31, `polled ${log.length} times within the client's 30 minutes`)
    t.ok(log.includes('BUILDING'), 'a realistic revision is seen building between polls')
    const read = () => fetch(`${base}/v2/deployments/${id}`, { headers: { 'X-Api-Key': 'k', 'X-Tenant-Id': TENANT_A } })
    t.equal(((await (await read()).json()) as { status: string }).status, 'AWAITING_DELETE', 'a deletion takes time')
    clock.advance(3 * 60_000)
    t.equal((await read()).status, 404, 'three minutes later (realistic) it is gone')
  })
}

t.test('the example client sees a failure through the status it checks', async (t) => {
  const { base, clock } = await listening(t, 'fast')
  const res = await fetch(`${base}/v2/deployments`, {
    method: 'POST', headers: { 'X-Api-Key': 'k', 'Content-Type': 'application/json' },
    body: JSON.stringify(githubDeployment({ source_revision_config: { repo_ref: 'hangar/fail-deploy', langgraph_config_path: 'l.json' } })),
  })
  const d = (await res.json()) as { id: string; latest_revision_id: string }
  clock.advance(60_000)
  const rev = await fetch(`${base}/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`, { headers: { 'X-Api-Key': 'k' } })
  const { status } = (await rev.json()) as { status: string }
  t.equal(status, 'DEPLOY_FAILED')
  t.ok(status.includes('FAILED'), 'the docs\' check "contains FAILED" catches it')
})
