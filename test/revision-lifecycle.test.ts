import t from 'tap'
import { deletionAt, nextDeletionStep } from '../src/lifecycle/deletions.js'
import { endAt, placeAt, statusAt, trackFor, failureFor, type Anchor } from '../src/lifecycle/revisions.js'
import { dockerDeployment, githubDeployment, makeApp, type Client } from './helpers.js'

const BUILD = ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED']
const IMAGE = ['CREATING', 'QUEUED', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED']

async function revisionOf(api: Client, deploymentId: string, revisionId: string) {
  return (await api.get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body
}

t.test('statusAt walks the track by the speed\'s durations and says when the next step is due', async (t) => {
  const anchor: Anchor = { status: 'CREATING', since: 0, speed: 'fast', track: trackFor('github', null) }
  t.same(statusAt(anchor, 0), { status: 'CREATING', since: 0, nextAt: 1000 })
  t.same(statusAt(anchor, 999), { status: 'CREATING', since: 0, nextAt: 1000 })
  t.same(statusAt(anchor, 1000), { status: 'QUEUED', since: 1000, nextAt: 2000 })
  t.same(statusAt(anchor, 5999), { status: 'DEPLOYING', since: 5000, nextAt: 6000 })
  t.same(statusAt(anchor, 6000), { status: 'DEPLOYED', since: 6000, nextAt: null })
  t.same(statusAt(anchor, 1e12), { status: 'DEPLOYED', since: 6000, nextAt: null }, 'terminal stays put')
  t.same(statusAt({ ...anchor, speed: 'manual' }, 1e12), { status: 'CREATING', since: 0, nextAt: null })
  t.same(statusAt({ ...anchor, speed: 'poll' }, 1e12), { status: 'CREATING', since: 0, nextAt: null })
  t.same(statusAt({ ...anchor, speed: 'instant' }, 0), { status: 'DEPLOYED', since: 0, nextAt: null })
  t.same(statusAt({ ...anchor, status: 'INTERRUPTED' }, 1e12), { status: 'INTERRUPTED', since: 0, nextAt: null })
})

t.test('endAt says when a revision reaches the end of its track by time alone; placeAt, where it stands and that', async (t) => {
  const anchor: Anchor = { status: 'CREATING', since: 0, speed: 'fast', track: trackFor('github', null) }
  t.equal(endAt(anchor), 6000)
  t.equal(endAt({ ...anchor, status: 'BUILDING', since: 10_000 }), 13_000, 'from where it stands')
  t.equal(endAt({ ...anchor, track: trackFor('external_docker', null) }), 4000, 'an image skips the build')
  t.equal(endAt({ ...anchor, track: trackFor('github', 'BUILD_FAILED') }), 4000, 'a failure, once the step it fails in is over, is its end')
  t.equal(endAt({ ...anchor, speed: 'realistic' }), 490_000)
  t.equal(endAt({ ...anchor, status: 'DEPLOYED' }), null, 'at the end already')
  t.equal(endAt({ ...anchor, status: 'INTERRUPTED' }), null, 'off the track')
  t.equal(endAt({ ...anchor, speed: 'manual' }), null)
  t.equal(endAt({ ...anchor, speed: 'poll' }), null)
  t.same(placeAt(anchor, 2500), { status: 'AWAITING_BUILD', since: 2000, nextAt: 3000, endsAt: 6000 })
  t.same(placeAt({ ...anchor, speed: 'instant' }, 0), { status: 'DEPLOYED', since: 0, nextAt: null, endsAt: null }, 'instant: ended when placed')
})

t.test('deletionAt walks AWAITING_DELETE → AWAITING_FINAL_DELETE → DELETED by the same speeds', async (t) => {
  const fast = { step: 'AWAITING_DELETE' as const, since: 0, speed: 'fast' as const }
  t.same(deletionAt(fast, 0), { status: 'AWAITING_DELETE', since: 0, nextAt: 2000 })
  t.same(deletionAt(fast, 2000), { status: 'AWAITING_FINAL_DELETE', since: 2000, nextAt: 3000 })
  t.same(deletionAt(fast, 3000), { status: 'DELETED', since: 3000, nextAt: null }, 'gone after three seconds')
  t.same(deletionAt({ ...fast, speed: 'realistic' }, 60_000), { status: 'AWAITING_FINAL_DELETE', since: 60_000, nextAt: 180_000 })
  t.same(deletionAt({ ...fast, speed: 'instant' }, 0), { status: 'DELETED', since: 0, nextAt: null }, 'instant: gone at once')
  t.same(deletionAt({ ...fast, speed: 'manual' }, 1e12), { status: 'AWAITING_DELETE', since: 0, nextAt: null }, 'manual: only when told')
  t.same(deletionAt({ ...fast, speed: 'poll' }, 1e12), { status: 'AWAITING_DELETE', since: 0, nextAt: null }, 'poll: only when read')
  t.equal(nextDeletionStep('AWAITING_DELETE'), 'AWAITING_FINAL_DELETE')
  t.equal(nextDeletionStep('AWAITING_FINAL_DELETE'), 'DELETED')
  t.equal(nextDeletionStep('DELETED'), null)
})

t.test('tracks: build sources build, image sources skip it, failures end at their step', async (t) => {
  t.same(trackFor('github', null), BUILD)
  t.same(trackFor('internal_source', null), BUILD)
  t.same(trackFor('external_docker', null), IMAGE)
  t.same(trackFor('internal_docker', null), IMAGE)
  t.same(trackFor('github', 'CREATE_FAILED'), ['CREATING', 'CREATE_FAILED'])
  t.same(trackFor('github', 'BUILD_FAILED'), ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'BUILD_FAILED'])
  t.same(trackFor('github', 'DEPLOY_FAILED'), [...BUILD.slice(0, 6), 'DEPLOY_FAILED'])
  t.same(trackFor('external_docker', 'BUILD_FAILED'), ['CREATING', 'QUEUED', 'BUILD_FAILED'])
  t.same(trackFor('external_docker', 'DEPLOY_FAILED'), ['CREATING', 'QUEUED', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOY_FAILED'])
  t.equal(failureFor({ repo_ref: 'hangar/fail-deploy' }), 'DEPLOY_FAILED')
  t.equal(failureFor({ image_uri: 'hangar/fail-create:latest' }), 'CREATE_FAILED')
  t.equal(failureFor({ image_uri: 'hangar/fail-build@sha256:abc' }), 'BUILD_FAILED')
  t.equal(failureFor({ image_uri: 'registry:5000/hangar/fail-build' }), null, 'only the exact image name')
  t.equal(failureFor({ repo_ref: 'main' }), null)
})

t.test('fast speed: a github revision takes one second per step to DEPLOYED', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const seen = []
  for (let second = 0; second <= 7; second++) {
    const r = await revisionOf(api, d.id, d.latest_revision_id)
    seen.push(r.status)
    if (second === 3) t.equal(r.updated_at, '2025-01-01T00:00:03.000Z', 'updated_at is when the step began')
    clock.advance(1000)
  }
  t.same(seen, [...BUILD, 'DEPLOYED'])
})

t.test('fast speed: a docker revision skips the build steps', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', dockerDeployment())).body
  const seen = []
  for (let i = 0; i < IMAGE.length; i++) {
    seen.push((await revisionOf(api, d.id, d.latest_revision_id)).status)
    clock.advance(1000)
  }
  t.same(seen, IMAGE)
})

t.test('realistic speed: minutes per step, DEPLOYED after about eight minutes', async (t) => {
  const { api, clock } = await makeApp(t, { config: { revisionSpeed: 'realistic' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(60_000)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'BUILDING')
  clock.advance(5 * 60_000)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'DEPLOYING')
  clock.advance(3 * 60_000)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'DEPLOYED')
})

t.test('instant speed: DEPLOYED by the first read, and the deployment is READY at once', async (t) => {
  const { api } = await makeApp(t, { config: { revisionSpeed: 'instant' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  t.equal(d.status, 'READY')
  t.equal(d.active_revision_id, d.latest_revision_id)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'DEPLOYED')
})

t.test('poll speed: every read of the revision shows the next status, whatever the clock', async (t) => {
  const { api } = await makeApp(t, { config: { revisionSpeed: 'poll' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const seen = []
  for (let i = 0; i < BUILD.length + 1; i++) seen.push((await revisionOf(api, d.id, d.latest_revision_id)).status)
  t.same(seen, [...BUILD, 'DEPLOYED'])
  const list = (await api.get(`/v2/deployments/${d.id}/revisions`)).body.resources
  t.equal(list[0].status, 'DEPLOYED', 'listing shows the status without stepping')
})

t.test('poll speed: listing revisions does not step them', async (t) => {
  const { api } = await makeApp(t, { config: { revisionSpeed: 'poll' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  for (let i = 0; i < 3; i++) await api.get(`/v2/deployments/${d.id}/revisions`)
  await api.get(`/v2/deployments/${d.id}`)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'CREATING')
})

t.test('manual speed: the clock alone never moves a revision', async (t) => {
  const { api, clock } = await makeApp(t, { config: { revisionSpeed: 'manual' } })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(365 * 24 * 3600_000)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'CREATING')
  t.equal((await api.get(`/v2/deployments/${d.id}`)).body.status, 'AWAITING_DATABASE')
})

for (const [ref, status, steps] of [
  ['hangar/fail-create', 'CREATE_FAILED', 1],
  ['hangar/fail-build', 'BUILD_FAILED', 4],
  ['hangar/fail-deploy', 'DEPLOY_FAILED', 6],
] as const) {
  t.test(`repo_ref ${ref} ends in ${status} at its step, with no admin call`, async (t) => {
    const { api, clock } = await makeApp(t)
    const body = githubDeployment({ source_revision_config: { repo_ref: ref, langgraph_config_path: 'langgraph.json' } })
    const d = (await api.post('/v2/deployments', body)).body
    clock.advance(steps * 1000 - 1)
    t.notMatch((await revisionOf(api, d.id, d.latest_revision_id)).status, /FAILED/, 'not failed yet')
    clock.advance(1)
    const r = await revisionOf(api, d.id, d.latest_revision_id)
    t.equal(r.status, status)
    clock.advance(60_000)
    t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, status, 'a failure is final')
    const deployment = (await api.get(`/v2/deployments/${d.id}`)).body
    t.equal(deployment.active_revision_id, null)
    t.equal(deployment.status, 'AWAITING_DATABASE')
  })
}

t.test('an image named hangar/fail-deploy fails a docker revision while deploying', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', dockerDeployment({ source_revision_config: { image_uri: 'hangar/fail-deploy:1' } }))).body
  clock.advance(4000)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'DEPLOY_FAILED')
})

t.test('the deployment follows its revisions: READY and active once one is DEPLOYED', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(5999)
  let now = (await api.get(`/v2/deployments/${d.id}`)).body
  t.equal(now.status, 'AWAITING_DATABASE')
  t.equal(now.active_revision_id, null)
  clock.advance(1)
  now = (await api.get(`/v2/deployments/${d.id}`)).body
  t.equal(now.status, 'READY')
  t.equal(now.active_revision_id, d.latest_revision_id)
  t.equal(now.updated_at, '2025-01-01T00:00:06.000Z', 'updated_at moves when a revision goes live')
})

t.test('a newer revision reaching DEPLOYED leaves the older one DEPLOYED but no longer active', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(6000)
  const patched = (await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'v2' } })).body
  t.equal(patched.active_revision_id, d.latest_revision_id, 'the old revision serves while the new one builds')
  t.equal(patched.status, 'READY')
  clock.advance(6000)
  const now = (await api.get(`/v2/deployments/${d.id}`)).body
  t.equal(now.active_revision_id, patched.latest_revision_id)
  t.equal((await revisionOf(api, d.id, d.latest_revision_id)).status, 'DEPLOYED')
})

t.test('a failing newer revision leaves the older one active', async (t) => {
  const { api, clock } = await makeApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(6000)
  await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'hangar/fail-build' } })
  clock.advance(60_000)
  const now = (await api.get(`/v2/deployments/${d.id}`)).body
  t.equal(now.active_revision_id, d.latest_revision_id)
  t.equal(now.status, 'READY')
})

t.test('a clock jump settles every revision at once, consistently', async (t) => {
  const { api, clock } = await makeApp(t)
  const ids = []
  for (const name of ['a', 'b', 'c']) ids.push((await api.post('/v2/deployments', githubDeployment({ name }))).body.id)
  clock.advance(24 * 3600_000)
  const list = (await api.get('/v2/deployments?status=READY')).body.resources
  t.same(list.map((d: any) => d.id).sort(), [...ids].sort())
})
