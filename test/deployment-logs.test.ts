// Build and deploy logs: produced on the clock as a revision moves (nothing is written per line),
// served by the public revision logs route and by the routes `langgraph deploy` and `deploy logs`
// call, with stable ids and cursors, filters, failures whose cause is the last line, and no secret
// value ever printed. Over a real server, with the CLI's own client where the CLI is the caller.

import t from 'tap'
import { cliFor, uploadTo, archiveOf, HostBackendClient } from './deploy-cli.js'
import { API_KEY, dockerDeployment, githubDeployment, serveApp } from './helpers.js'

const SECRET_VALUE = 'sk-live-0123456789abcdef'

async function get(base: string, path: string) {
  const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': API_KEY } })
  return { status: res.status, body: await res.json() as any }
}
async function post(base: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() as any }
}

/** Every line of a log, read one page of `limit` at a time by following next_offset. */
async function allPages(read: (offset: string | null) => Promise<any>) {
  const lines: any[] = []
  let offset: string | null = null
  for (let page = 0; page < 100; page++) {
    const body = await read(offset)
    lines.push(...body.logs)
    if (body.next_offset === null) return lines
    offset = body.next_offset
  }
  throw new Error('next_offset never ended')
}

t.test('a revision\'s logs are a function of the clock: a line shows once the clock passes it, and never changes after', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const url = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=build&limit=1000`
  t.same((await get(base, url)).body, { logs: [], next_offset: null }, 'nothing before the revision is queued (next_offset null: nothing read yet)')
  const seen = new Map<string, any>()
  for (let ms = 0; ms <= 7000; ms += 250) {
    const { status, body } = await get(base, url)
    t.equal(status, 200)
    for (const line of body.logs) {
      t.ok(line.timestamp <= clock.now(), 'no line from the future')
      if (seen.has(line.id)) t.same(line, seen.get(line.id), 'a line read again is the same line')
      seen.set(line.id, line)
    }
    t.same(body.logs.map((l: any) => l.id), [...seen.keys()], 'the lines so far, oldest first, none lost')
    clock.advance(250)
  }
  const messages = [...seen.values()].map((l) => l.message)
  t.same(messages.slice(0, 4), [
    `Revision ${d.latest_revision_id} is queued`,
    `Revision ${d.latest_revision_id} is waiting for a builder`,
    `Building revision ${d.latest_revision_id} of 'my_deployment'`,
    'Cloning https://github.com/acme/agent at main',
  ])
  t.match(messages, [/./, /./, /./, /./, new RegExp(`^Checked out commit ${d.source_revision_config.repo_commit_sha}$`)])
  t.equal(messages.at(-1), 'Build finished')
  t.same(Object.keys([...seen.values()][0]), ['id', 'timestamp', 'level', 'message'])
  t.equal([...seen.values()][0].timestamp, Date.UTC(2025, 0, 1, 0, 0, 1), 'epoch milliseconds: queued one second in')
})

t.test('the public route pages through a log in either order; the concatenated pages are the whole log', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(60_000)
  const path = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs`
  for (const type of ['build', 'deploy']) {
    const whole = (await get(base, `${path}?type=${type}&limit=1000`)).body
    t.equal(whole.next_offset, null, `${type}: a finished revision's log is complete`)
    t.ok(whole.logs.length >= 10, `${type}: ${whole.logs.length} lines`)
    const asc = await allPages(async (offset) => (await get(base, `${path}?type=${type}&limit=3${offset ? `&offset=${offset}` : ''}`)).body)
    t.same(asc, whole.logs, `${type}: pages of 3, ascending (the default)`)
    const desc = await allPages(async (offset) => (await get(base, `${path}?type=${type}&order=desc&limit=4${offset ? `&offset=${offset}` : ''}`)).body)
    t.same(desc, [...whole.logs].reverse(), `${type}: pages of 4, descending`)
    t.equal((await get(base, `${path}?type=${type}`)).body.logs.length, Math.min(50, whole.logs.length), 'limit defaults to 50')
  }
  const deploy = (await get(base, `${path}?type=deploy&limit=1000`)).body.logs
  t.equal(deploy.at(-1).message, `Application started: revision ${d.latest_revision_id} of 'my_deployment' is live`)
  t.ok(deploy.some((l: any) => /^Health check passed: GET \/ok 200$/.test(l.message)))
})

t.test('filters: level and above, text in any case, a time window with both ends included, run_id', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(60_000)
  const path = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=build&limit=1000`
  const all = (await get(base, path)).body.logs
  t.ok(all.some((l: any) => l.level === 'DEBUG'), 'some DEBUG lines')
  t.same((await get(base, `${path}&level=INFO`)).body.logs, all.filter((l: any) => l.level !== 'DEBUG'), 'INFO and above')
  t.same((await get(base, `${path}&level=ERROR`)).body.logs, [], 'no ERROR in a build that worked')
  t.same((await get(base, `${path}&query=STEP%203`)).body.logs.map((l: any) => l.message), ['Step 3/5 : RUN uv pip install --system -e /deps/my_deployment'])
  const [from, to] = [all[3].timestamp, all[6].timestamp]
  const window = (await get(base, `${path}&start_time=${new Date(from).toISOString()}&end_time=${new Date(to).toISOString()}`)).body.logs
  t.same(window, all.filter((l: any) => l.timestamp >= from && l.timestamp <= to), 'start_time and end_time are both included')
  t.same((await get(base, `${path}&run_id=${d.id}`)).body.logs, [], 'no build line belongs to a run')
})

t.test('a failure\'s cause is an ERROR line where its step failed, and its status_message', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const cases = [
    ['hangar/fail-build', 'build', 'BUILD_FAILED', /^Step 3\/5 : RUN uv pip install --system -e \/deps\/fails-build$/,
      'The image build failed: installing the dependencies exited with code 1 (the reference hangar/fail-build asks for this failure).'],
    // (Health-check lines are matched as patterns: the parity report would read the health path in a string as a request to it.)
    ['hangar/fail-deploy', 'deploy', 'DEPLOY_FAILED', /^Checking health: GET \/ok$/,
      'The deployment failed: the Agent Server did not answer GET /ok within 300 seconds (the reference hangar/fail-deploy asks for this failure).'],
    ['hangar/fail-create', 'build', 'CREATE_FAILED', null, 'Creating the revision failed (the reference hangar/fail-create asks for this failure).'],
  ] as const
  for (const [ref, type, status, step, cause] of cases) {
    const d = (await api.post('/v2/deployments', githubDeployment({ name: `fails-${status.split('_')[0].toLowerCase()}`, source_revision_config: { repo_ref: ref, langgraph_config_path: 'langgraph.json' } }))).body
    clock.advance(60_000)
    const revision = (await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body
    t.equal(revision.status, status)
    t.equal(revision.status_message, cause, `${ref}: status_message`)
    const lines = (await get(base, `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=${type}&limit=1000`)).body.logs
    t.same([lines.at(-1).level, lines.at(-1).message], ['ERROR', cause], `${ref}: the last ${type} line`)
    if (step) t.match(lines.at(-2).message, step, `${ref}: after the step that failed began`)
    if (type === 'build') t.same((await get(base, `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=deploy`)).body.logs, [], `${ref}: nothing was deployed`)
  }
  const forced = (await api.post('/v2/deployments', dockerDeployment({ name: 'forced' }))).body
  await api.post(`/_hangar/deployments/${forced.id}/revisions/${forced.latest_revision_id}/status`, { status: 'BUILD_FAILED' })
  const ended = (await api.get(`/v2/deployments/${forced.id}/revisions/${forced.latest_revision_id}`)).body
  t.equal(ended.status_message, 'Set to BUILD_FAILED through hangar\'s admin API.', 'an end set by hand says so')
  const log = (await get(base, `/v2/deployments/${forced.id}/revisions/${forced.latest_revision_id}/logs?type=deploy`)).body.logs
  t.same(log.at(-1).message, ended.status_message)
})

t.test('an interrupted revision logs why it stopped, and the lines it never reached never come', async (t) => {
  const { base, clock, api } = await serveApp(t, { revisionSpeed: 'realistic' })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  clock.advance(10_000 + 30_000 + 15_000 + 60_000)
  const path = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=build&limit=1000`
  const before = (await get(base, path)).body
  t.equal(before.logs.at(-1).message, 'Step 2/5 : ADD . /deps/my_deployment', 'a minute into BUILDING')
  t.type(before.next_offset, 'string', 'an ascending read of a log still growing gives a cursor to go on from')
  t.equal((await api.post(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`)).body.status, 'INTERRUPTED')
  clock.advance(3_600_000)
  const after = (await get(base, path)).body
  t.same(after.logs.slice(0, -1), before.logs, 'nothing after the interruption')
  t.same([after.logs.at(-1).level, after.logs.at(-1).message], ['WARNING', 'Interrupted on request before it finished.'])
  t.equal(after.next_offset, null, 'the log is complete')

  // A newer revision skips one still in progress: its log ends there too.
  const newer = (await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'dev' } })).body
  clock.advance(20_000)
  await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: 'main' } })
  const skipped = (await api.get(`/v2/deployments/${d.id}/revisions/${newer.latest_revision_id}`)).body
  t.equal(skipped.status, 'SKIPPED')
  t.equal(skipped.status_message, 'Skipped: a newer revision of the deployment was created before this one finished.')
  const last = (await get(base, `/v2/deployments/${d.id}/revisions/${newer.latest_revision_id}/logs?type=build&order=desc&limit=1`)).body.logs[0]
  t.same([last.level, last.message], ['INFO', skipped.status_message])
})

t.test('the CLI\'s `deploy logs`: a deployment\'s deploy logs merge its revisions; --follow reads on from the newest timestamp without repeats', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const cli = cliFor(base)
  const d = (await api.post('/v2/deployments', dockerDeployment())).body
  clock.advance(10_000)
  const second = (await api.patch(`/v2/deployments/${d.id}`, { source_revision_config: { image_uri: 'registry.example.com/agent:2.0' } })).body
  clock.advance(1_500)
  // `langgraph deploy logs`: the newest 5 lines (desc), printed oldest first.
  const initial = (await cli.getDeployLogs(d.id, { limit: 5, order: 'desc' })).logs
  t.equal(initial.length, 5)
  const printed = [...initial].reverse()
  const seenIds = new Set(initial.map((l: any) => l.id))
  // --follow: ascending from the newest timestamp seen, every 2 s, de-duplicated by id.
  const payload: Record<string, unknown> = { limit: 5, order: 'asc', start_time: new Date(initial[0].timestamp).toISOString() }
  for (let i = 0; i < 6; i++) {
    clock.advance(2000)
    const fresh = (await cli.getDeployLogs(d.id, payload)).logs.filter((l: any) => !seenIds.has(l.id))
    for (const l of fresh) seenIds.add(l.id)
    printed.push(...fresh)
    if (fresh.length) payload.start_time = new Date(fresh.at(-1).timestamp).toISOString()
  }
  const whole = (await cli.getDeployLogs(d.id, { limit: 1000, order: 'asc' })).logs
  t.same(printed, whole.slice(whole.length - printed.length), 'followed to the end: every newer line once, in order')
  t.equal(printed.at(-1).message, `Application started: revision ${second.latest_revision_id} of 'docker_deployment' is live`)
  t.ok(whole.some((l: any) => l.message.includes(d.latest_revision_id)) && whole.some((l: any) => l.message.includes(second.latest_revision_id)), 'both revisions\' lines')
  t.same(whole.map((l: any) => l.timestamp), [...whole.map((l: any) => l.timestamp)].sort((a, b) => a - b), 'merged in time order')

  const revisionOnly = (await cli.getDeployLogs(d.id, { limit: 1000, order: 'asc' }, second.latest_revision_id)).logs
  t.ok(revisionOnly.every((l: any) => !l.message.includes(d.latest_revision_id)), 'with --revision-id, only that revision')
  t.same((await cli.getBuildLogs(d.id, second.latest_revision_id, { order: 'asc', limit: 50 })), { logs: [], next_offset: null }, 'an image source has no build log')
  const paged = await allPages(async (offset) => cli.getDeployLogs(d.id, { limit: 4, order: 'asc', ...(offset ? { offset } : {}) }))
  t.same(paged, whole, 'paging a deployment\'s deploy logs by next_offset')
})

t.test('secret values are never printed, in any log of any route; their names may be', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const secrets = [{ name: 'OPENAI_API_KEY', value: SECRET_VALUE }, { name: 'SHORT', value: 'abc' }]
  const d = (await api.post('/v2/deployments', githubDeployment({ secrets, source_config: {
    ...githubDeployment().source_config,
    install_command: `pip install --index-url https://user:${SECRET_VALUE}@pypi.example/simple -e .`,
    build_command: `echo ${SECRET_VALUE}`,
  } }))).body
  clock.advance(60_000)
  const everything = JSON.stringify([
    (await get(base, `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=build&limit=1000`)).body,
    (await get(base, `/api-host/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=deploy&limit=1000`)).body,
    (await post(base, `/v1/projects/${d.id}/revisions/${d.latest_revision_id}/build_logs`, { limit: 1000 })).body,
    (await post(base, `/v1/projects/${d.id}/revisions/${d.latest_revision_id}/deploy_logs`, { limit: 1000 })).body,
    (await post(base, `/api-host/v1/projects/${d.id}/deploy_logs`, { limit: 1000 })).body,
  ])
  t.notMatch(everything, SECRET_VALUE, 'the value is nowhere')
  t.match(everything, 'Setting 2 secrets as environment variables: OPENAI_API_KEY, SHORT', 'the names are')
  t.match(everything, 'Step 3/5 : RUN pip install --index-url https://user:********@pypi.example/simple -e .', 'a command holding the value shows it masked')
  t.match(everything, 'Step 4/5 : RUN echo ********')
})

t.test('poll speed: each read moves the revision a step, and the lines stay where they were first seen', async (t) => {
  const { base, clock, api } = await serveApp(t, { revisionSpeed: 'poll' })
  const cli = cliFor(base) as HostBackendClient
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const seen = new Map<string, any>()
  for (let read = 0; read < 8; read++) {
    await cli.getRevision(d.id, d.latest_revision_id)
    clock.advance(3000)
    for (const type of ['build', 'deploy']) {
      for (const line of (await get(base, `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=${type}&limit=1000`)).body.logs) {
        if (seen.has(line.id)) t.same(line, seen.get(line.id), `${line.id} unchanged`)
        else seen.set(line.id, line)
      }
    }
  }
  t.equal((await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body.status, 'DEPLOYED')
  t.ok([...seen.values()].some((l) => l.message.startsWith('Application started')))
})

t.test('the logs of a remote build name its tarball: its size, digest and files', async (t) => {
  const { base, clock } = await serveApp(t)
  const cli = cliFor(base)
  const d = await cli.createDeployment({ name: 'remote', source: 'internal_source', deploymentType: 'dev', configPath: 'langgraph.json', secrets: [] })
  // Paths over 100 characters: one split into a ustar prefix, one in a pax header (its name alone is
  // too long to split). The config the revision names is found by its whole path.
  const deep = `${'nested-directory/'.repeat(6)}agents/langgraph.json`
  const long = `configs/${'very-long-name-'.repeat(8)}langgraph.json`
  const bytes = await archiveOf(t, { 'langgraph.json': '{"graphs": {"agent": "./agent.py:graph"}}', [deep]: '{}', [long]: '{"graphs": {"agent": "../agent.py:graph"}}', 'agent.py': 'graph = None\n' })
  const { upload_url: url, object_path: path } = await cli.requestUploadUrl(d.id)
  t.equal((await uploadTo(url, bytes)).status, 200)
  const updated = await cli.updateDeploymentInternalSource(d.id, { sourceTarballPath: path, configPath: long })
  clock.advance(60_000)
  t.equal((await cli.getRevision(d.id, updated.latest_revision_id)).status, 'DEPLOYED', 'a config path over 100 characters is found in the archive')
  const messages = (await cli.getBuildLogs(d.id, updated.latest_revision_id, { limit: 1000, order: 'asc' })).logs.map((l: any) => l.message)
  t.ok(messages.includes(`Fetching source tarball gs://hangar-source-uploads/${path}`))
  t.ok(messages.some((m: string) => new RegExp(`^Downloaded ${bytes.length} bytes \\(sha256 [0-9a-f]{64}\\)$`).test(m)))
  t.ok(messages.includes('Unpacked 4 files'))
  t.ok(messages.includes(`Reading ${long}`))
})

t.test('bad values are 422 with pydantic\'s errors; unknown ids 404; a cursor hangar did not write 400', async (t) => {
  const { base, api } = await serveApp(t)
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  const path = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs`
  const query = async (q: string) => (await get(base, `${path}?${q}`))
  t.match((await query('')).body.detail, [{ type: 'missing', loc: ['query', 'type'], msg: 'Field required' }])
  t.match((await query('type=runtime')).body.detail, [{ type: 'literal_error', loc: ['query', 'type'], msg: "Input should be 'build' or 'deploy'" }])
  t.match((await query('type=build&limit=0')).body.detail, [{ type: 'greater_than_equal', loc: ['query', 'limit'], ctx: { ge: 1 } }])
  t.match((await query('type=build&limit=1001')).body.detail, [{ type: 'less_than_equal', loc: ['query', 'limit'], ctx: { le: 1000 } }])
  t.match((await query('type=build&order=sideways')).body.detail, [{ type: 'literal_error', loc: ['query', 'order'] }])
  t.match((await query('type=build&level=TRACE')).body.detail, [{ type: 'literal_error', loc: ['query', 'level'], msg: "Input should be 'DEBUG', 'INFO', 'WARNING', 'ERROR' or 'CRITICAL'" }])
  t.match((await query('type=build&start_time=yesterday')).body.detail, [{ loc: ['query', 'start_time'] }])
  t.equal((await query('type=build&start_time=yesterday')).status, 422)
  const cli = `/v1/projects/${d.id}/revisions/${d.latest_revision_id}/build_logs`
  t.match((await post(base, cli, { limit: 'many' })).body.detail, [{ type: 'int_parsing', loc: ['body', 'limit'] }])
  t.match((await post(base, cli, { order: 'newest' })).body.detail, [{ type: 'literal_error', loc: ['body', 'order'] }])
  t.match((await post(base, cli, { level: 'info' })).body.detail, [{ type: 'literal_error', loc: ['body', 'level'] }], 'levels are upper case (the CLI upper-cases them)')
  t.equal((await post(base, cli)).status, 200, 'no body: every default')
  t.same((await post(base, cli, { offset: 'not-a-cursor' })).body, { detail: "Invalid offset 'not-a-cursor': pass the next_offset of an earlier page." })
  t.equal((await post(base, cli, { offset: 'not-a-cursor' })).status, 400)

  const unknown = 'dddddddd-0000-4000-8000-000000000000'
  t.same((await get(base, `/v2/deployments/${unknown}/revisions/${d.latest_revision_id}/logs?type=build`)).body, { detail: `Deployment ID ${unknown} not found.` })
  t.same((await get(base, `/v2/deployments/${d.id}/revisions/${unknown}/logs?type=build`)).body, { detail: `Revision ID ${unknown} not found.` })
  t.same((await post(base, `/v1/projects/${unknown}/deploy_logs`, {})).body, { detail: `Deployment ID ${unknown} not found.` })
  t.same((await post(base, `/v1/projects/${d.id}/revisions/${unknown}/deploy_logs`, {})).body, { detail: `Revision ID ${unknown} not found.` })
  t.equal((await post(base, '/v1/projects/not-a-uuid/deploy_logs', {})).status, 422)
  const other = await fetch(`${base}${path}?type=build`, { headers: { 'x-api-key': API_KEY, 'x-tenant-id': '22222222-2222-4222-8222-222222222222' } })
  t.equal(other.status, 404, 'another workspace does not see the deployment')
})

t.test('a revision keeps its logs across a state export and import', async (t) => {
  const { base, clock, api } = await serveApp(t, { revisionSpeed: 'poll' })
  const d = (await api.post('/v2/deployments', githubDeployment())).body
  for (let read = 0; read < 4; read++) {
    await api.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)
    clock.advance(5000)
  }
  const path = `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/logs?type=build&limit=1000`
  const before = (await get(base, path)).body
  const state = (await api.get('/_hangar/state')).body
  t.ok(state.tables.revision_steps.length >= 4, 'the status changes are state')
  await api.post('/_hangar/reset')
  t.equal((await api.put('/_hangar/state', state)).status, 204)
  t.same((await get(base, path)).body, before)
})
