// The official control-plane tools' request sequences, request for request, as their sources show
// them (facts read from the Terraform provider and the CI workflow demo, not their code): the Terraform
// provider's resource life (create → PATCH display_name → poll → update through POST …/revisions →
// delete → poll until 404, under /api-host with its headers) and the CI workflow demo's hosted and
// self-hosted bodies. Each sequence polls at the tool's own interval of hangar's manual clock.

import t from 'tap'
import { clientFor, makeApp, type Client, type Reply } from './helpers.js'
import type { Clock } from '../src/clock.js'

/** The workspace the provider's offline tests send as `X-Tenant-Id` (not a UUID there; one here). */
const WORKSPACE = '00000000-0000-4000-8000-68616e676172'
const INTEGRATION = '6f1a0c1e-1b43-4a9a-9f57-2f5f7f2d9a10'

/** What langsmith-go sends on every request. */
const providerHeaders = { 'x-api-key': 'tf-key', 'x-tenant-id': WORKSPACE, 'user-agent': 'langsmith-go/0.3.0' }
/** What the workflow's curl sends: the key only. */
const curlHeaders = { 'x-api-key': 'gha-key' }

const FAILED = new Set(['CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED'])

/**
 * The provider's waitForRevision: GET the revision every 5 s of clock; DEPLOYED or SKIPPED ends it,
 * a failure is an error, anything else keeps polling (30 min at most).
 */
async function waitForRevision(api: Client, clock: Clock, path: string): Promise<{ status: string; polls: number }> {
  for (let polls = 1; polls <= 360; polls++) {
    const res = await api.get(path)
    if (res.status !== 200) throw new Error(`poll answered ${res.status}: ${res.text}`)
    if (res.body.status === 'DEPLOYED' || res.body.status === 'SKIPPED') return { status: res.body.status, polls }
    if (FAILED.has(res.body.status)) return { status: res.body.status, polls }
    clock.advance(5_000)
  }
  throw new Error('waiting for revision: context deadline exceeded')
}

/** The provider's delete wait: GET the deployment every 5 s of clock until it answers 404. */
async function waitForDeletion(api: Client, clock: Clock, path: string): Promise<string[]> {
  const seen: string[] = []
  for (let polls = 0; polls < 360; polls++) {
    const res = await api.get(path)
    if (res.status === 404) return seen
    if (res.status !== 200) throw new Error(`poll answered ${res.status}: ${res.text}`)
    if (seen.at(-1) !== res.body.status) seen.push(res.body.status)
    clock.advance(5_000)
  }
  throw new Error('waiting for deployment deletion: context deadline exceeded')
}

const revisionCount = async (api: Client, base: string) => (await api.get(`${base}/revisions`)).body.resources.length

t.test('the Terraform provider: create, display_name, poll, update by revision, read, delete', async (t) => {
  const { app, clock } = await makeApp(t, { config: { revisionSpeed: 'fast' } })
  const api = clientFor(app, providerHeaders)
  const root = '/api-host/v2/deployments'

  // Create: an image deployment; no display_name, no deployment_type; secrets always sent, sorted.
  const create = await api.post(root, {
    name: 'tf-agent',
    source: 'external_docker',
    source_config: { resource_spec: { min_scale: 1, max_scale: 2, cpu: 1, memory_mb: 2048 } },
    source_revision_config: { image_uri: 'registry.example.com/agent:1.0' },
    secrets: [{ name: 'A_SECRET', value: 'one' }, { name: 'B_SECRET', value: 'two' }],
  })
  t.equal(create.status, 201, create.text)
  const id: string = create.body.id
  const firstRevision: string = create.body.latest_revision_id
  t.ok(id && firstRevision, 'the provider needs both ids')
  t.equal(create.body.source_config.deployment_type, 'prod', 'the service defaults the type to prod')
  t.equal(create.body.source_config.build_on_push, false, 'build_on_push is false, not null')
  const base = `${root}/${id}`

  // display_name arrives by PATCH alone, and makes no revision.
  const named = await api.patch(base, { display_name: 'My agent' })
  t.equal(named.status, 200, named.text)
  t.equal(named.body.display_name, 'My agent')
  t.equal(await revisionCount(api, base), 1, 'a display_name PATCH makes no revision')
  const empty = await api.patch(base, { display_name: '' })
  t.equal(empty.status, 422, 'an empty display_name is a 422, not a way to clear it')
  t.equal(empty.body.detail[0].loc.join('.'), 'body.display_name')

  const created = await waitForRevision(api, clock, `${base}/revisions/${firstRevision}`)
  t.equal(created.status, 'DEPLOYED')
  t.ok(created.polls > 1, 'the build took a few polls of 5 s')

  // Read: what the provider keeps in state.
  const read = await api.get(base)
  t.equal(read.status, 200)
  t.match(read.body, {
    id, name: 'tf-agent', source: 'external_docker', display_name: 'My agent', latest_revision_id: firstRevision,
    secret_references: [], is_managed_deep_agent: false, image_version: null,
  })
  t.same(read.body.secrets, [{ name: 'A_SECRET', value: 'one' }, { name: 'B_SECRET', value: 'two' }], 'values come back: the provider hashes them for drift')
  t.match(read.body.source_config.resource_spec, { min_scale: 1, max_scale: 2, cpu: 1, memory_mb: 2048 })

  // Update: a new image and a new secret → exactly one POST …/revisions, with the merged resource_spec.
  const spec = { ...read.body.source_config.resource_spec, max_scale: 3 }
  const revised = await api.post(`${base}/revisions`, {
    source_revision_config: { image_uri: 'registry.example.com/agent:2.0' },
    source_config: { resource_spec: spec },
    secrets: [{ name: 'A_SECRET', value: 'one' }, { name: 'B_SECRET', value: 'three' }],
  })
  t.equal(revised.status, 201, revised.text)
  t.ok(revised.body.id && revised.body.id !== firstRevision, 'a new revision id')
  const updated = await waitForRevision(api, clock, `${base}/revisions/${revised.body.id}`)
  t.equal(updated.status, 'DEPLOYED')
  const after = (await api.get(base)).body
  t.equal(after.latest_revision_id, revised.body.id)
  t.equal(after.source_revision_config.image_uri, 'registry.example.com/agent:2.0')
  t.equal(after.source_config.resource_spec.max_scale, 3)
  t.same(after.secrets.find((s: { name: string }) => s.name === 'B_SECRET'), { name: 'B_SECRET', value: 'three' })
  t.equal(after.display_name, 'My agent', 'the revision leaves display_name alone')
  t.equal(await revisionCount(api, base), 2)

  // The revisions data source: exactly the query it sends.
  const listed = await api.get(`${base}/revisions?limit=10&offset=0&status=DEPLOYED`)
  t.equal(listed.status, 200)
  t.same(listed.body.resources.map((r: { id: string }) => r.id), [revised.body.id, firstRevision], 'newest first')
  t.equal(listed.body.offset, 2)

  // Delete: 204, then 200 with a deleting status until 404.
  const deleted = await api.delete(base)
  t.equal(deleted.status, 204)
  const statuses = await waitForDeletion(api, clock, base)
  t.ok(statuses.length > 0 && statuses.every((s) => s === 'AWAITING_DELETE' || s === 'AWAITING_FINAL_DELETE'),
    `a GET after DELETE still answers, deleting (${statuses.join(' → ')})`)
  t.equal((await api.delete(base)).status, 404, 'a second delete finds nothing: the provider counts it as done')
})

t.test('the provider: a revision body with display_name, and a rejected revision, change nothing', async (t) => {
  const { app } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const api = clientFor(app, providerHeaders)
  const create = await api.post('/api-host/v2/deployments', {
    name: 'tf-strict', source: 'external_docker', source_config: {},
    source_revision_config: { image_uri: 'registry.example.com/agent:1.0' }, secrets: [],
  })
  t.equal(create.status, 201, create.text)
  const base = `/api-host/v2/deployments/${create.body.id}`
  const before = (await api.get(base)).body
  const withName: Reply = await api.post(`${base}/revisions`, { display_name: 'x', source_revision_config: { image_uri: 'registry.example.com/agent:2.0' } })
  t.equal(withName.status, 422, 'display_name is not a revision field')
  t.same((await api.get(base)).body, before, 'nothing changed')
})

t.test('the CI workflow demo: the hosted body (github) and the self-hosted body (listener), polled every 60 s', async (t) => {
  const { app, clock } = await makeApp(t, { config: { revisionSpeed: 'realistic' } })
  const api = clientFor(app, curlHeaders)
  const poll = async (path: string) => {
    for (let i = 0; i < 30; i++) {
      const res = await api.get(path)
      if (res.status === 200 && (res.body.status === 'DEPLOYED' || res.body.status.includes('FAILED'))) return res.body.status as string
      clock.advance(60_000)
    }
    return 'TIMED OUT'
  }

  const hosted = await api.post('/v2/deployments', {
    name: 'control-plane-demo-abc1234',
    source: 'github',
    source_config: { integration_id: INTEGRATION, repo_url: 'https://github.com/acme/agent', deployment_type: 'dev', build_on_push: false, custom_url: null, resource_spec: null },
    source_revision_config: { repo_ref: 'main', langgraph_config_path: 'langgraph.json', image_uri: null },
    secrets: [{ name: 'OPENAI_API_KEY', value: 'a' }, { name: 'ANTHROPIC_API_KEY', value: 'b' }, { name: 'TAVILY_API_KEY', value: 'c' }],
  })
  t.equal(hosted.status, 201, `exactly 201 (${hosted.text})`)
  t.equal(await poll(`/v2/deployments/${hosted.body.id}/revisions/${hosted.body.latest_revision_id}`), 'DEPLOYED')

  // new-revision.yml, hosted: PATCH (exactly 200), then the newest revision is the first listed.
  const patched = await api.patch(`/v2/deployments/${hosted.body.id}`, {
    source_config: { build_on_push: false },
    source_revision_config: { repo_ref: 'release', langgraph_config_path: 'langgraph.json', image_uri: null },
  })
  t.equal(patched.status, 200, patched.text)
  const newest = (await api.get(`/v2/deployments/${hosted.body.id}/revisions`)).body.resources[0]
  t.equal(newest.source_revision_config.repo_ref, 'release', 'sorted by created_at desc: the PATCH\'s revision first')
  t.equal(await poll(`/v2/deployments/${hosted.body.id}/revisions/${newest.id}`), 'DEPLOYED')

  // Self-hosted: list listeners (informational), then an external_docker deployment on one.
  const listener = await api.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'gha-cluster', compute_config: { k8s_namespaces: ['agents'] } })
  t.equal(listener.status, 201, listener.text)
  const listeners = await api.get('/v2/listeners')
  t.equal(listeners.status, 200)
  t.match(listeners.body.resources[0], { id: listener.body.id, compute_type: 'k8s' })
  const selfHosted = await api.post('/v2/deployments', {
    name: 'control-plane-demo-abc1234-sh',
    source: 'external_docker',
    source_config: {
      integration_id: null, repo_url: null, deployment_type: 'dev_free', build_on_push: null, custom_url: null,
      resource_spec: { min_scale: 0, max_scale: 1, cpu: 1, memory_mb: 1024 },
      listener_id: listener.body.id, listener_config: { k8s_namespace: 'agents' },
    },
    source_revision_config: { repo_ref: null, langgraph_config_path: null, image_uri: 'registry.example.com/agent:latest' },
    secrets: [{ name: 'OPENAI_API_KEY', value: 'a' }, { name: 'ANTHROPIC_API_KEY', value: 'b' }, { name: 'TAVILY_API_KEY', value: 'c' }],
  })
  t.equal(selfHosted.status, 201, `exactly 201 (${selfHosted.text})`)
  t.equal(await poll(`/v2/deployments/${selfHosted.body.id}/revisions/${selfHosted.body.latest_revision_id}`), 'DEPLOYED')
  const resized = await api.patch(`/v2/deployments/${selfHosted.body.id}`, {
    source_config: { resource_spec: { min_scale: 0, max_scale: 2, cpu: 1, memory_mb: 1024 } },
    source_revision_config: { repo_ref: null, langgraph_config_path: null, image_uri: 'registry.example.com/agent:v2' },
  })
  t.equal(resized.status, 200, resized.text)
})
