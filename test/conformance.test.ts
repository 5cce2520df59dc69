import t from 'tap'
import { checkResponse, conformanceRecorder, documentedStatuses } from './openapi-conformance.js'
import { dockerDeployment, githubDeployment, makeApp, TENANT_A } from './helpers.js'

t.test('every Deployments (v2) response matches the real OpenAPI document, for every documented status', async (t) => {
  const { app, clock } = await makeApp(t)
  const { call, covered, problems } = conformanceRecorder(app)
  const ghost = 'aaaaaaaa-0000-4000-8000-000000000000'

  // create: 201, 400, 422
  const d = (await call('POST', '/v2/deployments', githubDeployment())).body
  const docker = (await call('POST', '/v2/deployments', dockerDeployment({
    source_config: { resource_spec: { cpu: 1, sidecars: [{ name: 's', image: 'i', env: [{ name: 'A', value: '1' }] }], volumes: [{ name: 'v', emptyDir: {} }] } },
    secret_references: [{ name: 'DB', secret_name: 'db', secret_key: 'url' }],
  }))).body
  await call('POST', '/v2/deployments', githubDeployment({ source_config: {} }))
  await call('POST', '/v2/deployments', { name: 1 })
  await call('POST', '/api-host/v2/deployments', githubDeployment({ name: 'prefixed' }))
  // as the CLI creates it (no revision until the code comes), and the newer enums
  const empty = (await call('POST', '/v2/deployments', { name: 'cli', source: 'internal_source', source_config: {}, source_revision_config: {}, secrets: [] })).body
  await call('POST', '/v2/deployments', { name: 'tpl', source: 'internal_template', source_config: { template_id: 't', deployment_type: 'dev_zero' }, source_revision_config: {}, secrets: [] })
  await call('POST', '/v2/deployments', dockerDeployment({ name: 'free', source_config: { deployment_type: 'dev_free_zero' } }))

  // list: 200, 422
  await call('GET', '/v2/deployments?limit=100&name_contains=my')
  await call('GET', '/v2/deployments?limit=500')
  // get: 200, 404, 422
  await call('GET', `/v2/deployments/${d.id}`)
  await call('GET', `/v2/deployments/${ghost}`)
  await call('GET', '/v2/deployments/nope')
  // patch: 200, 400, 404, 422
  await call('PATCH', `/v2/deployments/${d.id}`, { source_config: { build_on_push: true }, source_revision_config: { repo_ref: 'main' } })
  await call('PATCH', `/v2/deployments/${d.id}`, { source_config: { repo_url: 'https://elsewhere' } })
  await call('PATCH', `/v2/deployments/${ghost}`, {})
  await call('PATCH', `/v2/deployments/${d.id}`, { secrets: 'x' })
  await call('PATCH', `/v2/deployments/${docker.id}`, { source_config: { custom_url: 'https://x.example' }, secrets: [{ name: 'B', value: '2' }] })
  await call('PATCH', `/v2/deployments/${docker.id}`, { display_name: 'Docker' })
  await call('PATCH', `/v2/deployments/${docker.id}`, { display_name: '' })
  await call('PATCH', `/v2/deployments/${empty.id}`, {
    revision_source: 'internal_source', source_revision_config: { source_tarball_path: 'uploads/a.tar.gz', langgraph_config_path: 'langgraph.json' }, tracked_packages: ['a:1'],
  })
  // free count: 200
  await call('GET', '/v2/deployments/free-count')
  await call('GET', '/api-host/v2/deployments/free-count')

  clock.advance(10_000)
  // revisions list: 200, 404, 422
  const revisions = (await call('GET', `/v2/deployments/${d.id}/revisions`)).body.resources
  await call('GET', `/v2/deployments/${d.id}/revisions?status=DEPLOYED,SKIPPED&limit=1`)
  await call('GET', `/v2/deployments/${ghost}/revisions`)
  await call('GET', `/v2/deployments/${d.id}/revisions?offset=-1`)
  // revision get: 200, 404, 422
  await call('GET', `/v2/deployments/${d.id}/revisions/${revisions[0].id}`)
  await call('GET', `/v2/deployments/${d.id}/revisions/${ghost}`)
  await call('GET', `/v2/deployments/${d.id}/revisions/bad`)
  // redeploy: 200, 404, 422 (400 is never answered: any revision may be redeployed)
  await call('POST', `/v2/deployments/${d.id}/revisions/${revisions[1].id}/redeploy`)
  await call('POST', `/v2/deployments/${ghost}/revisions/${ghost}/redeploy`)
  await call('POST', `/v2/deployments/${d.id}/revisions/bad/redeploy`)
  // create revision: 201, 400, 404, 422
  await call('POST', `/v2/deployments/${docker.id}/revisions`, { source_revision_config: { image_uri: 'r/a:2' }, source_config: { resource_spec: { cpu: 2, queue_cpu: 1 } } })
  const fresh = (await call('POST', `/v2/deployments/${d.id}/revisions`)).body
  await call('POST', `/v2/deployments/${d.id}/revisions`, { source_config: { repo_url: 'https://elsewhere' } })
  await call('POST', `/v2/deployments/${ghost}/revisions`)
  await call('POST', `/v2/deployments/${d.id}/revisions`, [1])
  await call('POST', `/v2/deployments/${d.id}/revisions`, { display_name: 'x' })
  // interrupt: 200, 400, 404, 422
  await call('POST', `/v2/deployments/${d.id}/revisions/${fresh.id}/interrupt`)
  await call('POST', `/v2/deployments/${d.id}/revisions/${fresh.id}/interrupt`)
  await call('POST', `/v2/deployments/${d.id}/revisions/${ghost}/interrupt`)
  await call('POST', `/v2/deployments/${d.id}/revisions/bad/interrupt`)
  // auth and tenancy answers on any route
  await call('GET', '/v2/deployments', undefined, { 'x-api-key': '' })
  await call('GET', `/v2/deployments/${d.id}`, undefined, { 'x-tenant-id': TENANT_A })
  // delete one: 204, 404, 422 (a deletion takes time: the deployment reads AWAITING_… until it is gone);
  // redeploy: 400 while it is being deleted; bulk: 200, 207, 404, 422
  await call('DELETE', `/v2/deployments/${d.id}`)
  await call('POST', `/v2/deployments/${d.id}/revisions/${revisions[1].id}/redeploy`)
  clock.advance(2000)
  t.equal((await call('GET', `/v2/deployments/${d.id}`)).body.status, 'AWAITING_FINAL_DELETE', 'a status the newer service added')
  await call('GET', '/v2/deployments?status=AWAITING_FINAL_DELETE')
  await call('DELETE', `/v2/deployments/${d.id}`)
  clock.advance(1000)
  await call('DELETE', `/v2/deployments/${d.id}`)
  await call('DELETE', '/v2/deployments/bad')
  const third = (await call('POST', '/v2/deployments', githubDeployment({ name: 'third' }))).body
  await call('DELETE', `/v2/deployments?deployment_ids=${docker.id}`)
  await call('DELETE', `/v2/deployments?deployment_ids=${third.id}&deployment_ids=${ghost}`)
  await call('DELETE', `/v2/deployments?deployment_ids=${ghost}`)
  await call('DELETE', '/v2/deployments?deployment_ids=bad')

  t.same(problems, [], 'every response conforms')
  const missing = documentedStatuses('Deployments (v2)').filter((key) => !covered.has(key))
  t.same(missing, [], 'every documented status was exercised')
})

t.test('the checker itself rejects a response that drifts from the spec', async (t) => {
  const drifted = checkResponse({
    method: 'GET', url: '/v2/deployments/aaaaaaaa-0000-4000-8000-000000000000', status: 200,
    body: JSON.stringify({ name: 'x', id: 'not-a-uuid' }),
  })
  t.match(drifted.problems[0], /must have required property 'source'/)
  const undocumented = checkResponse({ method: 'GET', url: '/v2/deployments', status: 418, body: '{}' })
  t.match(undocumented.problems[0], /status not documented/)
  const wrongError = checkResponse({ method: 'GET', url: '/v2/deployments/aaaaaaaa-0000-4000-8000-000000000000', status: 404, body: '{"error":"x"}' })
  t.match(wrongError.problems[0], /expected \{"detail"/)
  const freeCount = checkResponse({ method: 'GET', url: '/v2/deployments/free-count', status: 200, body: '{"count":-1}' })
  t.match(freeCount.problems[0], /must be >= 0/, 'an operation from the newer docs is checked against its written schema')
})
