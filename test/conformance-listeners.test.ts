import t, { type Test } from 'tap'
import { checkResponse, conformanceRecorder, documentedStatuses } from './openapi-conformance.js'
import { makeApp } from './helpers.js'

const NOT_ENTERPRISE = '00000000-0000-4000-8000-00000000f403'
const GHOST = 'aaaaaaaa-0000-4000-8000-000000000000'
const GITHUB = '6f1a0c1e-1b43-4a9a-9f57-2f5f7f2d9a10'
const FORGE = 'b4c1d2e3-5f60-4a71-8b92-a3b4c5d6e7f8'

/** An app, and a `call` that checks every response against the spec and records what it covered. */
async function harness(t: Test) {
  const { app, clock } = await makeApp(t)
  const { call, covered, problems } = conformanceRecorder(app)
  return { call, clock, covered, problems }
}

t.test('every Listeners (v2) response matches the real OpenAPI document, for every documented status', async (t) => {
  const { call, clock, covered, problems } = await harness(t)
  const cloud = { 'x-tenant-id': NOT_ENTERPRISE }

  // create: 201, 403, 409, 422
  const l = (await call('POST', '/v2/listeners', { compute_type: 'k8s', compute_id: 'c1', compute_config: { k8s_namespaces: ['a'] } })).body
  await call('POST', '/v2/listeners', { compute_type: 'k8s', compute_id: 'c2', compute_config: {}, version: '1.0' })
  await call('POST', '/api-host/v2/listeners', { compute_type: 'k8s', compute_id: 'c3', compute_config: { k8s_namespaces: null } })
  await call('POST', '/v2/listeners', { compute_type: 'k8s', compute_id: 'c4', compute_config: {} }, cloud)
  await call('POST', '/v2/listeners', { compute_type: 'k8s', compute_id: 'c1', compute_config: {} })
  await call('POST', '/v2/listeners', { compute_type: 'ecs', compute_id: 'c5', compute_config: {} })
  await call('POST', '/v2/listeners', { compute_type: 'k8s' })
  // list: 200, 422 (and 403)
  await call('GET', '/v2/listeners')
  await call('GET', '/v2/listeners?limit=1&offset=1')
  await call('GET', '/v2/listeners?limit=0')
  await call('GET', '/v2/listeners', undefined, cloud)
  // get: 200, 403, 404, 422
  await call('GET', `/v2/listeners/${l.id}`)
  await call('GET', `/v2/listeners/${l.id}`, undefined, cloud)
  await call('GET', `/v2/listeners/${GHOST}`)
  await call('GET', '/v2/listeners/nope')
  // patch: 200, 403, 404, 422
  clock.advance(1000)
  await call('PATCH', `/v2/listeners/${l.id}`, { version: '2.0', compute_config: { k8s_namespaces: ['b'] } })
  await call('PATCH', `/v2/listeners/${l.id}`, {})
  await call('PATCH', `/v2/listeners/${l.id}`, { version: '3.0' }, cloud)
  await call('PATCH', `/v2/listeners/${GHOST}`, { version: '3.0' })
  await call('PATCH', `/v2/listeners/${l.id}`, { compute_config: { k8s_namespaces: [1] } })
  await call('PATCH', '/v2/listeners/nope', {})
  // delete: 204, 403, 404, 422
  await call('DELETE', `/v2/listeners/${l.id}`, undefined, cloud)
  await call('DELETE', `/v2/listeners/${l.id}`)
  await call('DELETE', `/v2/listeners/${l.id}`)
  await call('DELETE', '/v2/listeners/nope')
  // auth answers on any route
  await call('GET', '/v2/listeners', undefined, { 'x-api-key': '' })

  t.same(problems, [], 'every response conforms')
  const missing = documentedStatuses('Listeners (v2)').filter((key) => !covered.has(key))
  t.same(missing, [], 'every documented status was exercised')
})

t.test('every Integrations (v1) response matches the real OpenAPI document, for every documented status', async (t) => {
  const { call, covered, problems } = await harness(t)

  // install lists: 200
  await call('GET', '/v1/integrations/github/install')
  await call('GET', '/v1/integrations/forge/github/install')
  await call('GET', '/api-host/v1/integrations/github/install')
  // repository lists: 200 (with repositories, and empty), 422
  await call('GET', `/v1/integrations/github/${GITHUB}/repos`)
  await call('GET', `/v1/integrations/github/${GHOST}/repos`)
  await call('GET', '/v1/integrations/github/nope/repos')
  await call('GET', `/v1/integrations/forge/github/${FORGE}/repos`)
  await call('GET', `/v1/integrations/forge/github/${GITHUB}/repos`)
  await call('GET', '/v1/integrations/forge/github/nope/repos')
  // auth answers on any route
  await call('GET', '/v1/integrations/github/install', undefined, { 'x-api-key': '' })

  t.same(problems, [], 'every response conforms')
  const missing = documentedStatuses('Integrations (v1)').filter((key) => !covered.has(key))
  t.same(missing, [], 'every documented status was exercised')
  t.equal(documentedStatuses('Integrations (v1)').length, 6, 'two install lists (200) and two repository lists (200, 422)')
})

t.test('an integration list that drifts from the spec is reported', async (t) => {
  const url = `/v1/integrations/github/${GITHUB}/repos`
  const drifted = checkResponse({ method: 'GET', url, status: 200, body: JSON.stringify([{ id: 1, name: 'r' }]) })
  t.match(drifted.problems[0], /must have required property 'host_integration_id'/)
  t.equal(drifted.covered, 'GET /v1/integrations/github/{integration_id}/repos 200')
  const wrongType = checkResponse({ method: 'GET', url: '/v1/integrations/forge/github/install', status: 200, body: '[{"id":"x","installation_id":"1","name":"n"}]' })
  t.ok(wrongType.problems.length > 0, 'a bad id and a string installation_id are caught')
})
