// The deployment model as the official tools use it (docs: test/reference and the project's
// control-plane-tools notes): `langgraph deploy` creating an empty deployment and sending its code
// in a PATCH, the Terraform provider's defaults, fields and revision creates, and the free count.
// Every request goes over real HTTP with the headers the tools send; time moves on the manual clock.

import t, { type Test } from 'tap'
import { RevisionStatus } from '../src/lifecycle/revisions.js'
import { dockerDeployment, fetchClient, githubDeployment, serveApp, TENANT_A, TENANT_B, type Client } from './helpers.js'
import { archiveOf, uploadTo } from './deploy-cli.js'

/** What `langgraph deploy` sends on every request (it spells the tenant header `X-Tenant-ID`). */
const CLI_HEADERS = { 'X-Api-Key': 'lsv2_cli', 'X-Tenant-ID': TENANT_A, Accept: 'application/json' }
/** What the Terraform provider (langsmith-go) sends. */
const TF_HEADERS = { 'X-Api-Key': 'lsv2_tf', 'X-Tenant-Id': TENANT_A }
/** The CLI's terminal revision statuses (deploy.py), and how the provider reads a revision (TF@dcd6b38). */
const CLI_TERMINAL = ['DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED']
const tfOutcome = (status: string) =>
  status === 'DEPLOYED' || status === 'SKIPPED' ? 'success' : status.endsWith('_FAILED') ? 'failure' : 'keep polling'

async function serve(t: Test, prefix = '') {
  const served = await serveApp(t)
  return { ...served, cli: fetchClient(`${served.base}${prefix}`, CLI_HEADERS), tf: fetchClient(`${served.base}${prefix}`, TF_HEADERS) }
}

/** Polls a revision the way the CLI does, moving the clock by its poll interval; returns the statuses seen. */
async function pollRevision(api: Client, advance: (ms: number) => void, deploymentId: string, every: number) {
  const latest = (await api.get(`/v2/deployments/${deploymentId}/revisions?limit=1`)).body.resources[0]
  const seen: string[] = []
  for (let polls = 0; polls < 100; polls++) {
    const { status } = (await api.get(`/v2/deployments/${deploymentId}/revisions/${latest.id}`)).body
    if (seen.at(-1) !== status) seen.push(status)
    if (CLI_TERMINAL.includes(status)) return { revision: latest, seen }
    advance(every)
  }
  throw new Error(`revision ${latest.id} never finished: ${seen.join(' → ')}`)
}

const tarballPatch = {
  revision_source: 'internal_source',
  source_revision_config: { source_tarball_path: 'uploads/tenant/app.tar.gz', langgraph_config_path: 'langgraph.json' },
  tracked_packages: ['google-adk:1.0.0'],
  secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-cli' }],
}

t.test('langgraph deploy (remote build): an empty internal_source deployment, then its code in a PATCH that builds on the clock', async (t) => {
  const { cli, clock } = await serve(t)
  const created = await cli.post('/v2/deployments', {
    name: 'my-agent', source: 'internal_source', source_config: { deployment_type: 'dev' }, source_revision_config: {}, secrets: [],
  })
  t.equal(created.status, 201)
  t.match(created.body, { source: 'internal_source', latest_revision_id: null, active_revision_id: null, status: 'AWAITING_DATABASE' },
    'no revision until the code arrives')
  t.same(created.body.source_revision_config, {
    repo_ref: null, langgraph_config_path: null, image_uri: null, source_tarball_path: null, repo_commit_sha: null, tracked_packages: null,
  })
  t.same((await cli.get(`/v2/deployments/${created.body.id}/revisions?limit=1`)).body, { resources: [], offset: 0 })

  // The CLI's upload: a URL for the tarball, the tarball PUT to it, its object path in the PATCH.
  const upload = (await cli.post(`/v2/deployments/${created.body.id}/upload-url`)).body
  t.equal((await uploadTo(upload.upload_url, await archiveOf(t))).status, 200)
  const codePatch = { ...tarballPatch, source_revision_config: { ...tarballPatch.source_revision_config, source_tarball_path: upload.object_path } }
  const patched = await cli.patch(`/v2/deployments/${created.body.id}`, codePatch)
  t.equal(patched.status, 200)
  t.equal(patched.body.tenant_id, TENANT_A, 'the CLI builds its status URL from tenant_id')
  t.not(patched.body.latest_revision_id, null)
  t.match(patched.body.source_revision_config, { source_tarball_path: upload.object_path, tracked_packages: ['google-adk:1.0.0'] })

  const { revision, seen } = await pollRevision(cli, (ms) => clock.advance(ms), created.body.id, 3000)
  t.equal(revision.id, patched.body.latest_revision_id, 'limit=1 gives the new revision')
  t.same(revision.source_revision_config.tracked_packages, ['google-adk:1.0.0'], 'the revision carries the tracked packages')
  t.same(seen, ['CREATING', 'BUILDING', 'DEPLOYED'], 'built on the clock: one step a second, read every 3 s')
  const after = (await cli.get(`/v2/deployments/${created.body.id}`)).body
  t.match(after, { status: 'READY', active_revision_id: revision.id })

  const again = await cli.patch(`/v2/deployments/${created.body.id}`, { ...codePatch, tracked_packages: undefined })
  t.equal(again.body.source_revision_config.tracked_packages, null, 'a revision carries only the packages its own request named')
})

t.test('langgraph deploy (local build): an empty internal_docker deployment takes its image in a PATCH', async (t) => {
  const { cli, clock } = await serve(t)
  const { id } = (await cli.post('/v2/deployments', {
    name: 'img-agent', source: 'internal_docker', source_config: { deployment_type: 'dev' }, source_revision_config: {}, secrets: [],
  })).body
  const patched = await cli.patch(`/v2/deployments/${id}`, {
    revision_source: 'internal_docker', source_revision_config: { image_uri: 'registry.example.com/img-agent@sha256:abc' }, secrets: [],
  })
  t.equal(patched.status, 200)
  const { seen } = await pollRevision(cli, (ms) => clock.advance(ms), id, 1000)
  t.same(seen, ['CREATING', 'QUEUED', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED'], 'an image skips the build steps')
})

t.test('an uploaded source without its code yet: only what is complete makes a revision', async (t) => {
  const { cli } = await serve(t)
  const create = (name: string, source: string, revision: object) =>
    cli.post('/v2/deployments', { name, source, source_config: {}, source_revision_config: revision, secrets: [] })
  const configOnly = (await create('a', 'internal_source', { langgraph_config_path: 'app/langgraph.json' })).body
  t.match(configOnly, { latest_revision_id: null, status: 'AWAITING_DATABASE' }, 'a config path alone is no code: it waits for the tarball')
  t.equal(configOnly.source_revision_config.langgraph_config_path, 'app/langgraph.json', 'what the create said is kept')
  const upload = (await cli.post(`/v2/deployments/${configOnly.id}/upload-url`)).body
  t.equal((await uploadTo(upload.upload_url, await archiveOf(t, { 'app/langgraph.json': '{"graphs": {"a": "./a.py:g"}}', 'app/a.py': '' }, 'app/langgraph.json'))).status, 200)
  const tarballOnly = await cli.patch(`/v2/deployments/${configOnly.id}`, { revision_source: 'internal_source', source_revision_config: { source_tarball_path: upload.object_path } })
  t.equal(tarballOnly.status, 200, `a PATCH with the tarball alone completes it (${tarballOnly.text})`)
  t.match(tarballOnly.body.source_revision_config, { langgraph_config_path: 'app/langgraph.json', source_tarball_path: upload.object_path })
  t.same((await create('b', 'internal_source', { source_tarball_path: 'uploads/x.tar.gz' })).body,
    { detail: 'source_revision_config.langgraph_config_path is required for internal_source source.' })
  t.same((await create('c', 'internal_docker', { langgraph_config_path: 'langgraph.json' })).body,
    { detail: 'source_revision_config.image_uri is required for internal_docker source.' })
  t.equal((await create('d', 'internal_source', { source_tarball_path: 'uploads/x.tar.gz', langgraph_config_path: 'l.json' })).body.status,
    'AWAITING_DATABASE', 'complete on create: its first revision is made at once')

  const pending = (await create('e', 'internal_source', {})).body
  const named = await cli.patch(`/v2/deployments/${pending.id}`, { display_name: 'E' })
  t.match(named.body, { display_name: 'E', latest_revision_id: null }, 'a PATCH that needs no revision works before the code arrives')
  const empty = await cli.post(`/v2/deployments/${pending.id}/revisions`)
  t.equal(empty.status, 400)
  t.same(empty.body, { detail: 'source_revision_config.source_tarball_path is required for internal_source source.' })
  t.same((await cli.get(`/v2/deployments/${pending.id}/revisions`)).body.resources, [], 'nothing was written')
})

t.test('defaults the provider relies on: prod, build_on_push false, an image deployment\'s resources, and the newer fields', async (t) => {
  const { tf } = await serve(t, '/api-host')
  const res = await tf.post('/v2/deployments', {
    name: 'img', source: 'external_docker', source_config: {}, source_revision_config: { image_uri: 'registry.example.com/agent:1' }, secrets: [],
  })
  t.equal(res.status, 201)
  const d = res.body
  t.match(d, { is_managed_deep_agent: false, image_version: null, display_name: null })
  t.same(d.secret_references, [])
  t.match(d.source_config, {
    deployment_type: 'prod', build_on_push: false, listener_config: null, install_command: null, build_command: null, template_id: null,
  })
  const spec = d.source_config.resource_spec
  t.equal(Object.keys(spec).length, 40, 'every field of the spec')
  t.match(spec, { min_scale: 1, max_scale: 1, cpu: 1, memory_mb: 2048, cpu_limit: null, memory_limit_mb: null, labels: null, annotations: null, service_account_name: null })
  t.match(d.source_revision_config, { source_tarball_path: null, repo_commit_sha: null })

  const github = (await tf.post('/v2/deployments', githubDeployment({
    source_config: { integration_id: githubDeployment().source_config.integration_id, repo_url: 'https://github.com/acme/agent' },
  }))).body
  t.match(github.source_config, { deployment_type: 'prod', build_on_push: false, resource_spec: null }, 'a github deployment gets no resource spec')
  t.match(github.source_revision_config.repo_commit_sha, /^[0-9a-f]{40}$/)
})

t.test('resource_spec: keys the provider does not model come back, and a revision create replaces the whole object', async (t) => {
  const { tf } = await serve(t)
  const d = (await tf.post('/v2/deployments', dockerDeployment({ source_config: { resource_spec: { cpu: 2, queue_cpu: 0.5 } } }))).body
  t.match(d.source_config.resource_spec, { cpu: 2, queue_cpu: 0.5, min_scale: null })
  // The provider's update: read the current spec, merge its own fields over it, post the whole object.
  const current = (await tf.get(`/v2/deployments/${d.id}`)).body.source_config.resource_spec
  const revision = await tf.post(`/v2/deployments/${d.id}/revisions`, {
    source_revision_config: { image_uri: 'registry.example.com/agent:2' },
    source_config: { resource_spec: { ...current, max_scale: 3 } },
  })
  t.equal(revision.status, 201)
  const after = (await tf.get(`/v2/deployments/${d.id}`)).body
  t.match(after.source_config.resource_spec, { cpu: 2, queue_cpu: 0.5, max_scale: 3 }, 'queue_cpu survived the merge')
  const replaced = await tf.post(`/v2/deployments/${d.id}/revisions`, { source_config: { resource_spec: { cpu: 1 } } })
  t.equal(replaced.status, 201)
  t.match((await tf.get(`/v2/deployments/${d.id}`)).body.source_config.resource_spec, { cpu: 1, queue_cpu: null, max_scale: null }, 'the whole object is replaced')
})

t.test('min_scale 0 only for the *_zero types, or on a listener (self-hosted)', async (t) => {
  const { tf } = await serve(t)
  const zero = { resource_spec: { min_scale: 0, max_scale: 1 } }
  for (const type of ['dev_zero', 'dev_free_zero']) {
    t.equal((await tf.post('/v2/deployments', dockerDeployment({ name: `z-${type}`, source_config: { deployment_type: type, ...zero } }))).status, 201, type)
  }
  for (const type of ['prod', 'dev', 'dev_free', undefined]) {
    const res = await tf.post('/v2/deployments', dockerDeployment({ name: `n-${type}`, source_config: { deployment_type: type, ...zero } }))
    t.equal(res.status, 400, String(type))
    t.same(res.body, { detail: 'source_config.resource_spec.min_scale can only be 0 for dev_zero and dev_free_zero deployments, or self-hosted ones.' }, String(type))
  }
  const listener = (await tf.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'c', compute_config: { k8s_namespaces: ['a'] } })).body
  const selfHosted = await tf.post('/v2/deployments', dockerDeployment({ name: 'sh', source_config: { deployment_type: 'dev_free', listener_id: listener.id, ...zero } }))
  t.equal(selfHosted.status, 201, `a self-hosted dev_free deployment may scale to 0 (${selfHosted.text})`)
  const prod = (await tf.post('/v2/deployments', dockerDeployment({ name: 'p' }))).body
  const patched = await tf.patch(`/v2/deployments/${prod.id}`, { source_config: zero })
  t.equal(patched.status, 400, 'nor by a PATCH')
  t.equal((await tf.post(`/v2/deployments/${prod.id}/revisions`, { source_config: zero })).status, 400, 'nor by a revision')
})

t.test('display_name: set by PATCH alone, never cleared, 422 when empty; a create ignores it', async (t) => {
  const { tf, base } = await serve(t, '/api-host')
  const created = await tf.post('/v2/deployments', dockerDeployment({ display_name: 'Ignored' }))
  t.equal(created.status, 201, 'the create schema does not forbid extra fields: pydantic ignores it')
  t.equal(created.body.display_name, null)
  const id = created.body.id
  const revisions = async () => (await tf.get(`/v2/deployments/${id}/revisions`)).body.resources.length

  const named = await tf.patch(`/v2/deployments/${id}`, { display_name: 'My Agent' })
  t.equal(named.status, 200)
  t.equal(named.body.display_name, 'My Agent')
  t.equal(named.body.latest_revision_id, created.body.latest_revision_id)
  t.equal((await tf.get(`/v2/deployments/${id}`)).body.display_name, 'My Agent')
  t.equal((await fetchClient(base, TF_HEADERS).get(`/v2/deployments/${id}`)).body.display_name, 'My Agent', 'and at the root')

  t.equal((await tf.patch(`/v2/deployments/${id}`, { display_name: null })).body.display_name, 'My Agent', 'null leaves it')
  const empty = await tf.patch(`/v2/deployments/${id}`, { display_name: '' })
  t.equal(empty.status, 422)
  t.same(empty.body, {
    detail: [{ type: 'string_too_short', loc: ['body', 'display_name'], msg: 'String should have at least 1 character', input: '', ctx: { min_length: 1 } }],
  })
  for (const change of [{ source_config: { custom_url: 'https://agent.example.com' } }, { source_config: { build_on_push: true } }]) {
    t.equal((await tf.patch(`/v2/deployments/${id}`, { display_name: 'Renamed', ...change })).status, 200)
  }
  t.equal(await revisions(), 1, 'display_name, build_on_push and custom_url make no revision (the provider counts revision POSTs)')
})

t.test('POST revisions takes the provider\'s body and answers 201 with the Revision', async (t) => {
  const { tf } = await serve(t)
  const d = (await tf.post('/v2/deployments', dockerDeployment({ secrets: [{ name: 'A', value: '1' }] }))).body
  const res = await tf.post(`/v2/deployments/${d.id}/revisions`, {
    source_revision_config: { image_uri: 'registry.example.com/agent:2.0' },
    source_config: { install_command: 'npm ci', build_command: 'npm run build' },
    secrets: [{ name: 'B', value: '2' }],
    secret_references: [{ name: 'DB', secret_name: 'db', secret_key: 'url' }],
  })
  t.equal(res.status, 201)
  t.same(Object.keys(res.body), ['id', 'created_at', 'updated_at', 'status', 'source', 'source_revision_config', 'status_message'])
  t.match(res.body, { status: 'CREATING', source_revision_config: { image_uri: 'registry.example.com/agent:2.0' } })
  const after = (await tf.get(`/v2/deployments/${d.id}`)).body
  t.equal(after.latest_revision_id, res.body.id)
  t.match(after.source_config, { install_command: 'npm ci', build_command: 'npm run build' })
  t.same(after.secrets, [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], 'secrets are upserted, values returned')
  t.same(after.secret_references, [{ name: 'DB', secret_name: 'db', secret_key: 'url' }])

  const unchanged = await tf.post(`/v2/deployments/${d.id}/revisions`, { secrets: [] })
  t.equal(unchanged.status, 201, 'always a revision')
  t.equal((await tf.get(`/v2/deployments/${d.id}`)).body.secrets.length, 2, 'an empty secrets list changes nothing')

  const extra = await tf.post(`/v2/deployments/${d.id}/revisions`, { display_name: 'x', source_revision_config: { image_uri: 'a:1' } })
  t.equal(extra.status, 422)
  t.same(extra.body, { detail: [{ type: 'extra_forbidden', loc: ['body', 'display_name'], msg: 'Extra inputs are not permitted', input: 'x' }] })
  const broken = await tf.post(`/v2/deployments/${d.id}/revisions`, { source_config: { deployment_type: 'dev' } })
  t.equal(broken.status, 400)
  t.same(broken.body, { detail: 'source_config.deployment_type cannot be changed once the deployment is created.' })
  t.equal((await tf.get(`/v2/deployments/${d.id}/revisions`)).body.resources.length, 3, 'refused bodies made no revision')
})

t.test('the newer enums: dev_zero and dev_free_zero types, internal_template with its template_id', async (t) => {
  const { tf, clock } = await serve(t)
  for (const type of ['dev_zero', 'dev_free_zero']) {
    const res = await tf.post('/v2/deployments', dockerDeployment({ name: type, source_config: { deployment_type: type } }))
    t.equal(res.body.source_config.deployment_type, type)
  }
  t.same((await tf.get('/v2/deployments?deployment_type=dev_free_zero')).body.resources.map((d: { name: string }) => d.name), ['dev_free_zero'])
  const template = await tf.post('/v2/deployments', {
    name: 'tpl', source: 'internal_template', source_config: { template_id: 'deep-research' }, source_revision_config: {}, secrets: [],
  })
  t.equal(template.status, 201)
  t.match(template.body, { source: 'internal_template', source_config: { template_id: 'deep-research', deployment_type: 'prod' } })
  clock.advance(6000)
  t.equal((await tf.get(`/v2/deployments/${template.body.id}`)).body.status, 'READY', 'a template is built like code: six steps at the fast speed')
  const noTemplate = await tf.post('/v2/deployments', { name: 'tpl2', source: 'internal_template', source_config: {}, source_revision_config: {}, secrets: [] })
  t.same(noTemplate.body, { detail: 'source_config.template_id is required for internal_template source.' })
  const misplaced = await tf.post('/v2/deployments', dockerDeployment({ name: 'm', source_config: { template_id: 'deep-research' } }))
  t.same(misplaced.body, { detail: 'source_config.template_id can only be set for internal_template source deployments.' })
  t.equal((await tf.patch(`/v2/deployments/${template.body.id}`, { source_config: { template_id: 'other' } })).status, 400, 'set once')
})

t.test('SKIPPED and INTERRUPTED stay put, and read as the tools expect', async (t) => {
  const { tf, cli, clock } = await serve(t)
  const d = (await tf.post('/v2/deployments', dockerDeployment())).body
  clock.advance(1500)
  const newer = (await tf.post(`/v2/deployments/${d.id}/revisions`, { source_revision_config: { image_uri: 'registry.example.com/agent:2' } })).body
  const older = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`
  t.equal((await tf.get(older)).body.status, 'SKIPPED', 'the superseded in-progress revision')
  clock.advance(60_000)
  t.equal((await tf.get(older)).body.status, 'SKIPPED', 'it never moves again')
  t.equal(tfOutcome('SKIPPED'), 'success', 'the provider waiting on it is done')
  t.ok(CLI_TERMINAL.includes('SKIPPED'), 'the CLI stops polling (and reports a timeout, exit 0)')
  t.equal((await tf.get(`/v2/deployments/${d.id}/revisions/${newer.id}`)).body.status, 'DEPLOYED')

  const third = (await tf.post(`/v2/deployments/${d.id}/revisions`, {})).body
  t.equal((await cli.post(`/v2/deployments/${d.id}/revisions/${third.id}/interrupt`)).body.status, 'INTERRUPTED')
  clock.advance(60_000)
  t.equal((await cli.get(`/v2/deployments/${d.id}/revisions/${third.id}`)).body.status, 'INTERRUPTED', 'an interrupted revision stays interrupted')
  t.ok(RevisionStatus.includes('INTERRUPTED') && !CLI_TERMINAL.includes('INTERRUPTED'), 'the CLI would poll it to its deadline; the provider too (documented)')
})

t.test('GET /v2/deployments/free-count counts the workspace\'s dev_free and dev_free_zero deployments', async (t) => {
  const { tf, base, clock } = await serve(t)
  t.same((await tf.get('/v2/deployments/free-count')).body, { count: 0 })
  const ids: Record<string, string> = {}
  for (const type of ['dev_free', 'dev_free_zero', 'dev', 'prod']) {
    ids[type] = (await tf.post('/v2/deployments', dockerDeployment({ name: type, source_config: { deployment_type: type } }))).body.id
  }
  const count = await tf.get('/v2/deployments/free-count')
  t.equal(count.status, 200)
  t.same(count.body, { count: 2 })
  t.same((await fetchClient(`${base}/api-host`, TF_HEADERS).get('/v2/deployments/free-count')).body, { count: 2 }, 'under /api-host too')
  t.same((await fetchClient(base, { ...TF_HEADERS, 'X-Tenant-Id': TENANT_B }).get('/v2/deployments/free-count')).body, { count: 0 }, 'per workspace')
  t.equal((await tf.get('/v2/deployments/free-count', { 'X-Api-Key': '' })).status, 401, 'behind the same gate')
  await tf.delete(`/v2/deployments/${ids.dev_free}`)
  t.same((await tf.get('/v2/deployments/free-count')).body, { count: 2 }, 'one being deleted still counts')
  clock.advance(3000)
  t.same((await tf.get('/v2/deployments/free-count')).body, { count: 1 }, 'until it is gone')
  const patch = await tf.patch('/v2/deployments/free-count', {})
  t.equal(patch.status, 422, 'another method reaches the deployment route, whose id must be a UUID')
  t.equal(patch.body.detail[0].type, 'uuid_parsing')
})
