import t from 'tap'
import { API_KEY, dockerDeployment, fetchClient, githubDeployment, makeApp, serveApp } from './helpers.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('creating a deployment answers 201 with the full record and its first revision', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/deployments', githubDeployment())
  t.equal(res.status, 201)
  const d = res.body
  t.match(d.id, UUID)
  t.match(d.latest_revision_id, UUID)
  t.equal(d.active_revision_id, null)
  t.equal(d.status, 'AWAITING_DATABASE')
  t.equal(d.name, 'my_deployment')
  t.equal(d.tenant_id, '00000000-0000-4000-8000-68616e676172')
  t.same(Object.keys(d), [
    'name', 'source', 'source_config', 'source_revision_config', 'secrets', 'secret_references',
    'id', 'tenant_id', 'created_at', 'updated_at', 'status', 'latest_revision_id', 'active_revision_id', 'image_version',
    'display_name', 'is_managed_deep_agent', 'url',
  ], 'every field, in the real service\'s order (`display_name`, `is_managed_deep_agent`, `url` are in the newer responses)')
  t.equal(d.display_name, null)
  t.equal(d.is_managed_deep_agent, false)
  t.same(d.secret_references, [], 'no secret references read as an empty list')
  t.equal(d.url, `http://localhost:80/deployments/${d.id}/agent`, 'where hangar serves its agent server, from the Host')
  t.equal(d.source_config.custom_url, d.url, 'github: custom_url is set automatically (read only), as the spec says')
  t.same(Object.keys(d.source_config), [
    'integration_id', 'repo_url', 'deployment_type', 'build_on_push', 'custom_url', 'resource_spec',
    'listener_id', 'listener_config', 'install_command', 'build_command', 'template_id',
  ])
  t.equal(d.source_revision_config.repo_ref, 'main')
  t.equal(d.source_revision_config.langgraph_config_path, 'langgraph.json')
  t.match(d.source_revision_config.repo_commit_sha, /^[0-9a-f]{40}$/, 'a github revision gets a commit SHA')
  t.equal(d.secrets.length, 3)
  t.equal(d.created_at, '2025-01-01T00:00:00.000Z')

  const revisions = await api.get(`/v2/deployments/${d.id}/revisions`)
  t.equal(revisions.body.resources.length, 1)
  t.equal(revisions.body.resources[0].id, d.latest_revision_id)
  t.equal(revisions.body.resources[0].status, 'CREATING')
})

t.test('a create answers the deployment exactly as a read of it then shows it, at every speed and for every kind of create', async (t) => {
  const creates: Record<string, object> = {
    github: githubDeployment({ secrets: [{ name: 'A', value: '1' }], secret_references: [{ name: 'DB', secret_name: 'db', secret_key: 'url' }] }),
    docker: dockerDeployment(),
    'failing at once': dockerDeployment({ source_revision_config: { image_uri: 'hangar/fail-create:1' } }),
    'no code yet': { source: 'internal_source', source_config: {}, source_revision_config: {}, secrets: [] },
    'no code, a config path': { source: 'internal_source', source_config: {}, source_revision_config: { langgraph_config_path: 'app/langgraph.json' }, secrets: [] },
  }
  for (const speed of ['fast', 'instant', 'manual', 'poll'] as const) {
    const { api } = await makeApp(t, { config: { revisionSpeed: speed } })
    for (const [kind, body] of Object.entries(creates)) {
      const created = await api.post('/v2/deployments', { ...body, name: kind.replaceAll(' ', '-') })
      t.equal(created.status, 201, `${speed}, ${kind}`)
      t.same(created.body, (await api.get(`/v2/deployments/${created.body.id}`)).body, `${speed}, ${kind}: as read`)
    }
  }
})

t.test('graph_config_path is accepted as langgraph_config_path', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/deployments', githubDeployment({
    source_revision_config: { repo_ref: 'main', graph_config_path: 'agents/langgraph.json' },
  }))
  t.equal(res.status, 201)
  t.equal(res.body.source_revision_config.langgraph_config_path, 'agents/langgraph.json')
})

t.test('a resource_spec is returned with every field, unset ones null', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/v2/deployments', dockerDeployment({
    source_config: { resource_spec: { cpu: 2, memory_mb: 2048, labels: { team: 'a' }, sidecars: [{ name: 's', image: 'busybox' }] } },
  }))
  t.equal(res.status, 201)
  const spec = res.body.source_config.resource_spec
  t.equal(Object.keys(spec).length, 40)
  t.equal(spec.cpu, 2)
  t.equal(spec.min_scale, null)
  t.same(spec.labels, { team: 'a' })
  t.equal(spec.sidecars[0].image, 'busybox')
  t.equal(spec.sidecars[0].command, null)
})

t.test('the real service\'s rules beyond the schema answer 400 and store nothing', async (t) => {
  const { api } = await makeApp(t)
  const cases: [string, Record<string, unknown>, string][] = [
    ['github without an integration', githubDeployment({ source_config: { repo_url: 'https://github.com/acme/agent' } }),
      'source_config.integration_id is required for github source.'],
    ['github with an unknown integration', githubDeployment({
      source_config: { ...githubDeployment().source_config, integration_id: 'dddddddd-0000-4000-8000-000000000000' },
    }), 'Integration ID dddddddd-0000-4000-8000-000000000000 not found.'],
    ['github without a repo_url', githubDeployment({ source_config: { integration_id: githubDeployment().source_config.integration_id } }),
      'source_config.repo_url is required for github source.'],
    ['docker on an unknown listener', dockerDeployment({ source_config: { listener_id: 'eeeeeeee-0000-4000-8000-000000000000' } }),
      'Listener ID eeeeeeee-0000-4000-8000-000000000000 not found.'],
    ['github without a repo_ref', githubDeployment({ source_revision_config: { langgraph_config_path: 'langgraph.json' } }),
      'source_revision_config.repo_ref is required for github source.'],
    ['github without a config path', githubDeployment({ source_revision_config: { repo_ref: 'main' } }),
      'source_revision_config.langgraph_config_path is required for github source.'],
    ['docker without an image', dockerDeployment({ source_revision_config: {} }),
      'source_revision_config.image_uri is required for external_docker source.'],
    ['docker with a config path', dockerDeployment({ source_revision_config: { image_uri: 'x:1', langgraph_config_path: 'l.json' } }),
      'source_revision_config.langgraph_config_path must be null for external_docker source.'],
    ['custom_url on github', githubDeployment({ source_config: { ...githubDeployment().source_config, custom_url: 'https://x' } }),
      'source_config.custom_url can only be set for external_docker source deployments.'],
    ['build_on_push with a tag', githubDeployment({
      source_config: { ...githubDeployment().source_config, build_on_push: true },
      source_revision_config: { repo_ref: 'refs/tags/v1.0.0', langgraph_config_path: 'langgraph.json' },
    }), 'source_config.build_on_push cannot be enabled when source_revision_config.repo_ref specifies a tag.'],
  ]
  for (const [name, body, detail] of cases) {
    const res = await api.post('/v2/deployments', body)
    t.equal(res.status, 400, name)
    t.same(res.body, { detail }, name)
  }
  const list = await api.get('/v2/deployments')
  t.same(list.body.resources, [], 'no deployment was written')
})

t.test('a second deployment with the same name in a workspace is refused with 400', async (t) => {
  const { api } = await makeApp(t)
  t.equal((await api.post('/v2/deployments', githubDeployment())).status, 201)
  const again = await api.post('/v2/deployments', githubDeployment())
  t.equal(again.status, 400)
  t.same(again.body, { detail: "A deployment named 'my_deployment' already exists." })
})

t.test('of creates of one name sent at once over sockets, one is written and the others refused with 400, leaving nothing', async (t) => {
  const { base, api } = await serveApp(t)
  const client = fetchClient(base, { 'x-api-key': API_KEY })
  const answers = await Promise.all([1, 2, 3].map(() => client.post('/v2/deployments', githubDeployment())))
  t.same(answers.map((a) => a.status).sort(), [201, 400, 400])
  for (const refused of answers.filter((a) => a.status === 400)) {
    t.same(refused.body, { detail: "A deployment named 'my_deployment' already exists." })
  }
  const list = (await api.get('/v2/deployments')).body
  t.same(list.resources.map((d: { name: string }) => d.name), ['my_deployment'], 'one deployment')
  const revisions = (await api.get(`/v2/deployments/${list.resources[0].id}/revisions`)).body
  t.equal(revisions.resources.length, 1, 'with one revision')
})

t.test('deployment and revision ids are random UUIDs (v4), as the real service\'s', async (t) => {
  const { api } = await makeApp(t)
  const ids: string[] = []
  for (const name of ['a', 'b', 'c']) {
    const created = (await api.post('/v2/deployments', githubDeployment({ name }))).body
    ids.push(created.id, created.latest_revision_id)
    const patched = (await api.patch(`/v2/deployments/${created.id}`, { source_revision_config: { repo_ref: 'next' } })).body
    ids.push(patched.latest_revision_id)
  }
  for (const id of ids) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.equal(new Set(ids).size, 9)
})

t.test('get returns the deployment; an unknown id is 404 with the real text', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/deployments', githubDeployment())).body
  const got = await api.get(`/v2/deployments/${created.id}`)
  t.equal(got.status, 200)
  t.same(got.body, created)
  const id = '0b6a3c5e-0000-4000-8000-000000000000'
  const missing = await api.get(`/v2/deployments/${id}`)
  t.equal(missing.status, 404)
  t.same(missing.body, { detail: `Deployment ID ${id} not found.` })
})

t.test('path ids are accepted in any UUID form and read as the canonical one', async (t) => {
  const { api } = await makeApp(t)
  const { id } = (await api.post('/v2/deployments', githubDeployment())).body
  for (const form of [id.toUpperCase(), id.replaceAll('-', ''), `{${id}}`, `urn:uuid:${id}`]) {
    const res = await api.get(`/v2/deployments/${encodeURIComponent(form)}`)
    t.equal(res.status, 200, form)
    t.equal(res.body.id, id)
  }
})

t.test('list pages newest first and returns the next offset', async (t) => {
  const { api, clock } = await makeApp(t)
  for (const name of ['alpha', 'beta', 'gamma']) {
    await api.post('/v2/deployments', githubDeployment({ name }))
    clock.advance(1)
  }
  const first = await api.get('/v2/deployments?limit=2')
  t.equal(first.status, 200)
  t.same(first.body.resources.map((d: any) => d.name), ['gamma', 'beta'])
  t.equal(first.body.offset, 2)
  const second = await api.get(`/v2/deployments?limit=2&offset=${first.body.offset}`)
  t.same(second.body.resources.map((d: any) => d.name), ['alpha'])
  t.equal(second.body.offset, 3)
  const past = await api.get('/v2/deployments?offset=10')
  t.same(past.body, { resources: [], offset: 10 })
})

t.test('list filters by name, type, ids, status, remote_reconciled, image version and tags', async (t) => {
  const { api, clock } = await makeApp(t, { config: { revisionSpeed: 'manual' } })
  const a = (await api.post('/v2/deployments', githubDeployment({ name: 'Chat_Agent' }))).body
  const listener = (await api.post('/v2/listeners', { compute_type: 'k8s', compute_id: 'cluster-1', compute_config: { k8s_namespaces: ['agents'] } })).body
  const b = (await api.post('/v2/deployments', dockerDeployment({
    name: 'batch',
    source_config: { deployment_type: 'prod', listener_id: listener.id, listener_config: { k8s_namespace: 'agents' } },
  }))).body
  clock.advance(1)
  const names = async (query: string) => (await api.get(`/v2/deployments?${query}`)).body.resources.map((d: any) => d.name)
  t.same(await names('name_contains=chat'), ['Chat_Agent'], 'case-insensitive substring')
  t.same(await names('name_contains=zzz'), [])
  t.same(await names('deployment_type=prod'), ['batch'])
  t.same(await names(`deployment_ids=${a.id},${b.id.toUpperCase()}`), ['batch', 'Chat_Agent'])
  t.same(await names(`deployment_ids=${a.id}`), ['Chat_Agent'])
  t.same(await names('status=AWAITING_DATABASE'), ['batch', 'Chat_Agent'])
  t.same(await names('status=READY'), [])
  t.same(await names('remote_reconciled=true'), ['batch'], 'deployments on a listener are remote-reconciled')
  t.same(await names('remote_reconciled=false'), ['Chat_Agent'])
  t.same(await names('image_version=0.4.0'), [])
  t.same(await names('tag_value_ids=5e8f0000-0000-4000-8000-000000000000'), [], 'no deployment carries tags')
})

t.test('PATCH with a revision field creates a new revision that becomes latest and first', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/deployments', githubDeployment())).body
  const patched = await api.patch(`/v2/deployments/${created.id}`, {
    source_config: { build_on_push: true },
    source_revision_config: { repo_ref: 'main', langgraph_config_path: 'langgraph.json' },
  })
  t.equal(patched.status, 200)
  t.not(patched.body.latest_revision_id, created.latest_revision_id)
  t.equal(patched.body.source_config.build_on_push, true)
  const revisions = (await api.get(`/v2/deployments/${created.id}/revisions`)).body.resources
  t.equal(revisions.length, 2)
  t.equal(revisions[0].id, patched.body.latest_revision_id, 'the new revision is first')
  t.equal(revisions[1].status, 'SKIPPED', 'the older in-progress revision was superseded')
})

t.test('PATCH of build_on_push or custom_url alone creates no revision', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/deployments', githubDeployment())).body
  const patched = await api.patch(`/v2/deployments/${created.id}`, { source_config: { build_on_push: true } })
  t.equal(patched.status, 200)
  t.equal(patched.body.latest_revision_id, created.latest_revision_id)
  t.equal(patched.body.source_config.build_on_push, true)

  const docker = (await api.post('/v2/deployments', dockerDeployment())).body
  t.equal(docker.source_config.custom_url, null, 'an external_docker deployment\'s custom_url is the user\'s own')
  const withUrl = await api.patch(`/v2/deployments/${docker.id}`, { source_config: { custom_url: 'https://agent.example.com' } })
  t.equal(withUrl.body.source_config.custom_url, 'https://agent.example.com')
  t.equal(withUrl.body.latest_revision_id, docker.latest_revision_id)
  t.equal(withUrl.body.url, `http://localhost:80/deployments/${docker.id}/agent`, 'its url is still hangar\'s own')
})

t.test('PATCH secrets: a non-empty list upserts by name and revises; an empty list changes nothing', async (t) => {
  const { api } = await makeApp(t)
  const created = (await api.post('/v2/deployments', githubDeployment())).body
  const empty = await api.patch(`/v2/deployments/${created.id}`, { secrets: [] })
  t.equal(empty.body.latest_revision_id, created.latest_revision_id)
  t.equal(empty.body.secrets.length, 3)
  const upsert = await api.patch(`/v2/deployments/${created.id}`, {
    secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-new' }, { name: 'EXTRA', value: 'x' }],
  })
  t.not(upsert.body.latest_revision_id, created.latest_revision_id)
  t.same(upsert.body.secrets.map((s: any) => [s.name, s.value]), [
    ['OPENAI_API_KEY', 'sk-new'], ['ANTHROPIC_API_KEY', 'ak-test'], ['TAVILY_API_KEY', 'tv-test'], ['EXTRA', 'x'],
  ])
})

t.test('PATCH resource_spec replaces it and revises; immutable fields cannot change', async (t) => {
  const { api } = await makeApp(t)
  const d = (await api.post('/v2/deployments', dockerDeployment())).body
  const spec = await api.patch(`/v2/deployments/${d.id}`, { source_config: { resource_spec: { cpu: 1, min_scale: 2 } } })
  t.equal(spec.status, 200)
  t.equal(spec.body.source_config.resource_spec.min_scale, 2)
  t.not(spec.body.latest_revision_id, d.latest_revision_id)

  const same = await api.patch(`/v2/deployments/${d.id}`, { source_config: { deployment_type: 'prod' } })
  t.equal(same.status, 200, 'repeating an immutable value is fine')
  const change = await api.patch(`/v2/deployments/${d.id}`, { source_config: { deployment_type: 'dev' } })
  t.equal(change.status, 400)
  t.same(change.body, { detail: 'source_config.deployment_type cannot be changed once the deployment is created.' })
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.source_config.deployment_type, 'prod', 'unchanged')
})

t.test('PATCH of an unknown deployment is 404; an empty PATCH returns it unchanged', async (t) => {
  const { api } = await makeApp(t)
  const id = '3f0d1d2e-0000-4000-8000-000000000000'
  const missing = await api.patch(`/v2/deployments/${id}`, {})
  t.equal(missing.status, 404)
  t.same(missing.body, { detail: `Deployment ID ${id} not found.` })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const same = await api.patch(`/v2/deployments/${d.id}`, {})
  t.same(same.body, d)
})

t.test('DELETE answers 204 with no body; once the deletion has run its course the deployment and its revisions are 404', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const res = await api.delete(`/v2/deployments/${d.id}?delete_tracing_project=true`)
  t.equal(res.status, 204)
  t.equal(res.text, '')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.status, 'AWAITING_DELETE', 'at first it is still there, being deleted')
  clock.advance(3000)
  t.same((await api.get(`/v2/deployments/${d.id}`)).body, { detail: `Deployment ID ${d.id} not found.` })
  t.equal((await api.get(`/v2/deployments/${d.id}/revisions`)).status, 404)
  t.equal((await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).status, 404)
  t.equal((await api.delete(`/v2/deployments/${d.id}`)).status, 404, 'deleting what is gone is 404')
})

t.test('bulk delete answers 200 when all are deleted, 207 when some are missing, 404 when none exist', async (t) => {
  const { api } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const ids = []
  for (const name of ['a', 'b', 'c']) ids.push((await api.post('/v2/deployments', githubDeployment({ name }))).body.id)
  const ghost = '7e1d0000-0000-4000-8000-000000000000'

  const all = await api.delete(`/v2/deployments?deployment_ids=${ids[0]}&deployment_ids=${ids[1]}`)
  t.equal(all.status, 200)
  t.same(all.body, { deleted_ids: [ids[0], ids[1]], failed: [] })

  const some = await api.delete(`/v2/deployments?deployment_ids=${ids[2]}&deployment_ids=${ghost}`)
  t.equal(some.status, 207)
  t.same(some.body, { deleted_ids: [ids[2]], failed: [{ deployment_id: ghost, detail: `Deployment ID ${ghost} not found.` }] })

  const none = await api.delete(`/v2/deployments?deployment_ids=${ghost}`)
  t.equal(none.status, 404)
  t.same(none.body, { detail: `Deployment ID ${ghost} not found.` })
  t.same((await api.get('/v2/deployments')).body.resources, [])
})

t.test('bulk delete validates its ids: required, UUIDs, at most 100', async (t) => {
  const { api } = await makeApp(t)
  const missing = await api.delete('/v2/deployments')
  t.equal(missing.status, 422)
  t.same(missing.body.detail, [{ type: 'missing', loc: ['query', 'deployment_ids'], msg: 'Field required', input: null }])
  const bad = await api.delete('/v2/deployments?deployment_ids=nope')
  t.equal(bad.body.detail[0].type, 'uuid_parsing')
  t.same(bad.body.detail[0].loc, ['query', 'deployment_ids', 0])
  const many = Array.from({ length: 101 }, (_, i) => `deployment_ids=00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join('&')
  const tooMany = await api.delete(`/v2/deployments?${many}`)
  t.equal(tooMany.status, 422)
  t.equal(tooMany.body.detail[0].type, 'too_long')
  t.equal(tooMany.body.detail[0].msg, 'List should have at most 100 items after validation, not 101')
  t.same(tooMany.body.detail[0].ctx, { field_type: 'List', max_length: 100, actual_length: 101 })
})

t.test('revisions list newest first with limit, offset and a status filter', async (t) => {
  const { api, clock } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(1)
  await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'hangar/fail-build' } })
  clock.advance(1)
  await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'main' } })
  const all = (await api.get(`/v2/deployments/${d.id}/revisions`)).body
  t.same(all.resources.map((r: any) => r.status), ['DEPLOYED', 'BUILD_FAILED', 'DEPLOYED'])
  t.equal(all.offset, 3)
  const latest = (await api.get(`/v2/deployments/${d.id}/revisions?limit=1`)).body
  t.equal(latest.resources[0].id, all.resources[0].id, 'limit=1 gives the latest')
  const failed = (await api.get(`/v2/deployments/${d.id}/revisions?status=BUILD_FAILED,DEPLOY_FAILED`)).body
  t.same(failed.resources.map((r: any) => r.id), [all.resources[1].id])
  const paged = (await api.get(`/v2/deployments/${d.id}/revisions?limit=1&offset=2`)).body
  t.same(paged, { resources: [all.resources[2]], offset: 3 })
  const remote = (await api.get(`/v2/deployments/${d.id}/revisions?remote_reconciled=true`)).body
  t.same(remote.resources, [], 'a github deployment has no remote-reconciled revisions')
})

t.test('get revision: 200, 404 for an unknown revision, 404 for an unknown deployment', async (t) => {
  const { api } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const rev = await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)
  t.equal(rev.status, 200)
  t.same(Object.keys(rev.body), ['id', 'created_at', 'updated_at', 'status', 'source', 'source_revision_config', 'status_message'],
    'the spec\'s fields, in its order, then `status_message` (in newer responses)')
  t.equal(rev.body.status_message, null, 'null while all is well')
  const rid = '5a5a0000-0000-4000-8000-000000000000'
  t.same((await api.get(`/v2/deployments/${d.id}/revisions/${rid}`)).body, { detail: `Revision ID ${rid} not found.` })
  const other = '6b6b0000-0000-4000-8000-000000000000'
  t.same((await api.get(`/v2/deployments/${other}/revisions/${rid}`)).body, { detail: `Deployment ID ${other} not found.` })
})

t.test('redeploy makes a new revision from the chosen one and returns the deployment', async (t) => {
  const { api, clock } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(1)
  await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'feature' } })
  clock.advance(1)
  const res = await api.post(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/redeploy`)
  t.equal(res.status, 200)
  t.equal(res.body.source_revision_config.repo_ref, 'main', 'the redeployed revision\'s config')
  const revisions = (await api.get(`/v2/deployments/${d.id}/revisions`)).body.resources
  t.equal(revisions.length, 3)
  t.equal(revisions[0].id, res.body.latest_revision_id)
  t.equal(res.body.active_revision_id, res.body.latest_revision_id)
  const rid = '5a5a0000-0000-4000-8000-000000000000'
  t.equal((await api.post(`/v2/deployments/${d.id}/revisions/${rid}/redeploy`)).status, 404)
})

t.test('POST revisions creates a revision (201) from the current configuration', async (t) => {
  const { api } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const res = await api.post(`/v2/deployments/${d.id}/revisions`)
  t.equal(res.status, 201)
  t.equal(res.body.status, 'CREATING')
  t.equal(res.body.source_revision_config.repo_ref, 'main')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.latest_revision_id, res.body.id)
  t.equal((await api.post(`/v2/deployments/${d.id}/revisions`, {})).status, 201, 'an empty object body is fine')
  const ghost = '6b6b0000-0000-4000-8000-000000000000'
  t.equal((await api.post(`/v2/deployments/${ghost}/revisions`)).status, 404)
})

t.test('interrupt stops an in-progress revision; a finished one answers 400', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(2500)
  const url = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`
  const res = await api.post(url)
  t.equal(res.status, 200)
  t.equal(res.body.status, 'INTERRUPTED')
  t.equal(res.body.updated_at, '2025-01-01T00:00:02.500Z')
  clock.advance(60_000)
  t.equal((await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body.status, 'INTERRUPTED', 'it stays stopped')
  const again = await api.post(url)
  t.equal(again.status, 400)
  t.same(again.body, { detail: `Revision ID ${d.latest_revision_id} is already INTERRUPTED and cannot be interrupted.` })
})
