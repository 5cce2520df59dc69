// Remote and local builds as `langgraph deploy` drives them (control-plane-tools.md §1), over a
// real server and with the CLI's own client and archiver: upload-url, the signed PUT, the PATCH that
// triggers the build, polling every 3 s of the manual clock; the push token of local builds; what
// a source that cannot be built does; and the uploads as the admin API shows them.

import http from 'node:http'
import t, { type Test } from 'tap'
import type { Clock } from '../src/clock.js'
import { archiveOf, cliFor, formatLogEntry, HostBackendClient, PROJECT, uploadTo } from './deploy-cli.js'
import { API_KEY, serveApp } from './helpers.js'

const TERMINAL = ['DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED']
const SECRETS = [{ name: 'OPENAI_API_KEY', value: 'sk-live-0123456789' }]
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'

/** An `internal_source` deployment, created with a config path (a newer CLI may send one; the test below creates with none, as today's does). */
async function remoteDeployment(cli: HostBackendClient, name = 'my-agent') {
  return cli.createDeployment({ name, source: 'internal_source', deploymentType: 'dev', configPath: 'langgraph.json', secrets: SECRETS })
}

/**
 * The CLI's `_poll_revision_status`: the latest revision from `revisions?limit=1`, then its status
 * every `every` ms of the manual clock until a terminal one (or 900 s). Returns the statuses seen.
 */
async function pollUntilDone(cli: HostBackendClient, clock: Clock, deploymentId: string, onPoll?: (status: string, revisionId: string) => Promise<void>, every = 3000) {
  const revisionId = String((await cli.listRevisions(deploymentId, 1)).resources[0].id)
  const seen: string[] = []
  for (let waited = 0; waited <= 900_000; waited += every) {
    const status = (await cli.getRevision(deploymentId, revisionId)).status ?? 'UNKNOWN'
    if (seen.at(-1) !== status) seen.push(status)
    if (TERMINAL.includes(status)) break
    await onPoll?.(status, revisionId)
    clock.advance(every)
  }
  return { revisionId, seen }
}

async function uploaded(t: Test, cli: HostBackendClient, deploymentId: string, bytes?: Buffer) {
  const { upload_url: url, object_path: path } = await cli.requestUploadUrl(deploymentId)
  const put = await uploadTo(url, bytes ?? await archiveOf(t))
  t.equal(put.status, 200, 'the upload is accepted')
  return path as string
}

t.test('a remote build as `langgraph deploy` makes it: upload-url, the signed PUT, the PATCH, polling every 3 s until DEPLOYED', async (t) => {
  const { base, clock, api } = await serveApp(t)
  const cli = cliFor(base)
  const deployment = await remoteDeployment(cli)
  const bytes = await archiveOf(t)

  const target = await cli.requestUploadUrl(deployment.id)
  t.same(Object.keys(target), ['upload_url', 'object_path'])
  t.match(target.object_path, new RegExp(`^deployments/${deployment.id}/sources/${UUID}\\.tar\\.gz$`))
  const url = new URL(target.upload_url)
  t.equal(url.origin, base, 'on the same public base as the API')
  t.equal(url.pathname, `/storage/hangar-source-uploads/${target.object_path}`)
  t.equal(url.searchParams.get('X-Goog-SignedHeaders'), 'content-type;host;x-goog-content-length-range')
  t.equal(url.searchParams.get('X-Goog-Date'), '20250101T000000Z')
  t.equal(url.searchParams.get('X-Goog-Expires'), '900')

  const put = await uploadTo(target.upload_url, bytes)
  t.equal(put.status, 200, 'no API key: the URL authorizes the upload')
  t.equal(await put.text(), '')
  t.match(put.headers.get('etag'), /^"[0-9a-f]{32}"$/, 'an ETag of the MD5, as Cloud Storage answers')
  const [journaled] = (await api.get('/_hangar/requests?method=PUT')).body.requests
  t.match(journaled, { path: url.pathname, status: 200 }, 'the upload is in the request journal')
  t.match(journaled.query, /X-Goog-Signature=\[redacted\]$/, 'with its signature redacted: the URL is a credential')
  t.equal(journaled.request_body, null, 'and not the tarball')

  const updated = await cli.updateDeploymentInternalSource(deployment.id, { sourceTarballPath: target.object_path, configPath: 'langgraph.json', secrets: SECRETS })
  t.not(updated.latest_revision_id, deployment.latest_revision_id, 'the PATCH made a revision')
  const { revisionId, seen } = await pollUntilDone(cli, clock, deployment.id)
  t.equal(revisionId, updated.latest_revision_id)
  t.same(seen, ['CREATING', 'BUILDING', 'DEPLOYED'], 'what a 3 s poll sees of the one-second steps')
  const revision = await cli.getRevision(deployment.id, revisionId)
  t.equal(revision.source, 'internal_source')
  t.equal(revision.source_revision_config.source_tarball_path, target.object_path)
  t.equal(revision.status_message, null)

  const uploads = (await api.get(`/_hangar/deployments/${deployment.id}/uploads`)).body.uploads
  t.equal(uploads.length, 1)
  t.match(uploads[0], { object_path: target.object_path, size: bytes.length, gzip: true, files: 3, archive_error: null, uploaded_at: '2025-01-01T00:00:00.000Z', expires_at: '2025-01-01T00:15:00.000Z' })
  t.match(uploads[0].sha256, /^[0-9a-f]{64}$/)
  const content = await fetch(`${base}/_hangar/deployments/${deployment.id}/uploads/${uploads[0].id}/content`)
  t.equal(content.headers.get('content-type'), 'application/gzip')
  t.same(Buffer.from(await content.arrayBuffer()), bytes, 'the bytes as uploaded')
})

t.test('the CLI\'s own create body (an empty source_revision_config) then the remote build', async (t) => {
  const { base, clock } = await serveApp(t)
  const cli = cliFor(base)
  const deployment = await cli.createDeployment({ name: 'from-the-cli', source: 'internal_source', deploymentType: 'dev', secrets: SECRETS })
  const path = await uploaded(t, cli, deployment.id)
  await cli.updateDeploymentInternalSource(deployment.id, { sourceTarballPath: path, configPath: 'langgraph.json', secrets: SECRETS })
  t.equal((await pollUntilDone(cli, clock, deployment.id)).seen.at(-1), 'DEPLOYED')
})

t.test('--verbose: build_logs polled with the offset it was last given prints every build line once, in order', async (t) => {
  const { base, clock } = await serveApp(t, { revisionSpeed: 'realistic' })
  const cli = cliFor(base)
  const deployment = await remoteDeployment(cli)
  await cli.updateDeploymentInternalSource(deployment.id, { sourceTarballPath: await uploaded(t, cli, deployment.id), configPath: 'langgraph.json' })
  const printed: string[] = []
  let offset: string | null = null
  let polls = 0
  const { seen } = await pollUntilDone(cli, clock, deployment.id, async (status, revisionId) => {
    if (status !== 'AWAITING_BUILD' && status !== 'BUILDING') return
    polls++
    const page = await cli.getBuildLogs(deployment.id, revisionId, offset ? { order: 'asc', limit: 50, offset } : { order: 'asc', limit: 50 })
    for (const entry of page.logs) if (entry.message) printed.push(entry.message)
    if (typeof page.next_offset === 'string') offset = page.next_offset
  })
  t.equal(seen.at(-1), 'DEPLOYED')
  t.ok(polls > 50, `the build took ${polls} polls of 3 s (240 s at the realistic speed)`)
  const revisionId = String((await cli.listRevisions(deployment.id, 1)).resources[0].id)
  const all = (await cli.getBuildLogs(deployment.id, revisionId, { order: 'asc', limit: 1000 })).logs.map((entry: any) => entry.message)
  t.ok(all.length > 15)
  t.same(printed, all.slice(0, printed.length), 'each line once, in order, none skipped')
  t.equal(printed.at(-1), all.at(-1), 'the last line came while the build ran')
})

t.test('a source that was never uploaded fails the build; the CLI\'s last 30 build-log lines end with the cause', async (t) => {
  const { base, clock } = await serveApp(t)
  const cli = cliFor(base)
  const deployment = await remoteDeployment(cli)
  const { object_path: path } = await cli.requestUploadUrl(deployment.id)
  await cli.updateDeploymentInternalSource(deployment.id, { sourceTarballPath: path, configPath: 'langgraph.json' })
  const { revisionId, seen } = await pollUntilDone(cli, clock, deployment.id)
  t.equal(seen.at(-1), 'BUILD_FAILED')
  const revision = await cli.getRevision(deployment.id, revisionId)
  t.equal(revision.status_message, `Source tarball not found: nothing was uploaded to ${path} (PUT the archive to its upload URL before creating the revision).`)

  // What the CLI does after a remote BUILD_FAILED without --verbose: the newest 30 lines, printed oldest first.
  const lines = [...(await cli.getBuildLogs(deployment.id, revisionId, { order: 'desc', limit: 30 })).logs].reverse()
  t.ok(lines.length < 30, 'the whole build log fits')
  t.match(lines.at(-2), { level: 'INFO', message: `Fetching source tarball gs://hangar-source-uploads/${path}` }, 'the failing step began')
  t.match(lines.at(-1), { level: 'ERROR', message: revision.status_message }, 'and its cause is the last line')
  t.equal(formatLogEntry(lines.at(-1)), `[2025-01-01 00:00:04] [ERROR] ${revision.status_message}`, 'as the CLI prints it (the build failed as BUILDING ended)')
})

t.test('sources that do not build: not gzip, not a tar archive, no langgraph.json, a graph file missing, a path that is not an upload', async (t) => {
  const { base, clock } = await serveApp(t)
  const cli = cliFor(base)
  const cases: [string, (deploymentId: string) => Promise<{ path: string; configPath?: string }>, RegExp][] = [
    ['a zip archive', async (id) => ({ path: await uploaded(t, cli, id, Buffer.from('PK\x03\x04 not gzip at all', 'latin1')) }),
      /^The source tarball \S+ is not a gzip-compressed tar archive \(it begins with bytes 50 4b 03 04\)\.$/],
    ['gzip data cut short', async (id) => ({ path: await uploaded(t, cli, id, (await archiveOf(t)).subarray(0, 40)) }),
      /^The source tarball \S+ could not be unpacked: its gzip data is damaged \(unexpected end of file\)\.$/],
    ['a gzip of something that is not tar', async (id) => ({ path: await uploaded(t, cli, id, (await import('node:zlib')).gzipSync('just text, no archive. '.repeat(40))) }),
      /^The source tarball \S+ could not be unpacked: it holds no tar archive \(a header's checksum does not match\)\.$/],
    ['a config path the archive does not hold', async (id) => ({ path: await uploaded(t, cli, id), configPath: 'agents/langgraph.json' }),
      /^agents\/langgraph\.json was not found in the source tarball \S+: langgraph_config_path is relative to the root of the archive\.$/],
    ['a graph whose file is not in the archive', async (id) => ({ path: await uploaded(t, cli, id, await archiveOf(t, { ...PROJECT, 'langgraph.json': JSON.stringify({ graphs: { agent: './agent.py:graph', tools: './src/tools.py:graph' } }) })) }),
      /^Could not find the file of graph 'tools': \.\/src\/tools\.py \(no src\/tools\.py in the uploaded source\)\.$/],
    ['a langgraph.json that is not JSON', async (id) => ({ path: await uploaded(t, cli, id, await archiveOf(t, { ...PROJECT, 'langgraph.json': '{"graphs": ' })) }),
      /^langgraph\.json is not valid JSON: /],
    ['a path no upload URL was issued for', async () => ({ path: 'deployments/elsewhere/sources/made-up.tar.gz' }),
      /^Source tarball not found: deployments\/elsewhere\/sources\/made-up\.tar\.gz is not an upload of this deployment/],
  ]
  for (const [what, prepare, cause] of cases) {
    const deployment = await remoteDeployment(cli, `case-${cases.findIndex((c) => c[0] === what)}`)
    const { path, configPath } = await prepare(deployment.id)
    await cli.updateDeploymentInternalSource(deployment.id, { sourceTarballPath: path, configPath: configPath ?? 'langgraph.json' })
    const { revisionId, seen } = await pollUntilDone(cli, clock, deployment.id)
    t.equal(seen.at(-1), 'BUILD_FAILED', `${what}: the build fails`)
    const revision = await cli.getRevision(deployment.id, revisionId)
    t.match(revision.status_message, cause, `${what}: status_message says why`)
    const last = (await cli.getBuildLogs(deployment.id, revisionId, { order: 'desc', limit: 1 })).logs[0]
    t.same([last.level, last.message], ['ERROR', revision.status_message], `${what}: the build log ends with it`)
  }
})

t.test('an upload over 200 MB is refused as Cloud Storage refuses one outside the signed range, before it is read', async (t) => {
  const { base, api } = await serveApp(t)
  const cli = cliFor(base)
  const deployment = await remoteDeployment(cli)
  const { upload_url: target } = await cli.requestUploadUrl(deployment.id)
  const answer = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const request = http.request(target, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/gzip', 'Content-Length': String(209_715_201), 'X-Goog-Content-Length-Range': '0,209715200' },
    }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk) => (body += chunk)).on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }))
    })
    request.on('error', reject)
    request.write(Buffer.alloc(1024))
  })
  t.equal(answer.status, 400)
  t.equal(answer.type, 'application/xml; charset=UTF-8')
  t.equal(answer.body, "<?xml version='1.0' encoding='UTF-8'?><Error><Code>EntityTooLarge</Code><Message>Your proposed upload is larger than the maximum object size specified in your Policy Document.</Message><Details>Content-length exceeds upper bound on range</Details></Error>")
  t.equal((await api.get(`/_hangar/deployments/${deployment.id}/uploads`)).body.uploads[0].uploaded_at, null, 'nothing was kept')
})

t.test('the signed URL is the only authorization: another signature, other signed header values or an expired URL are refused', async (t) => {
  const { base, clock } = await serveApp(t)
  const cli = cliFor(base)
  const deployment = await remoteDeployment(cli)
  const bytes = await archiveOf(t)
  const { upload_url: target } = await cli.requestUploadUrl(deployment.id)
  const forged = new URL(target)
  forged.searchParams.set('X-Goog-Signature', '0'.repeat(64))
  const mismatch = '<Code>SignatureDoesNotMatch</Code><Message>Access denied.</Message><Details>The request signature we calculated does not match the signature you provided. Check your Google secret key and signing method.</Details>'
  for (const [what, url, headers] of [
    ['another signature', forged.href, {}],
    ['another object', target.replace('.tar.gz?', '.tgz?'), {}],
    ['another Content-Type', target, { 'Content-Type': 'application/octet-stream' }],
    ['another size range', target, { 'X-Goog-Content-Length-Range': '0,1073741824' }],
  ] as const) {
    const res = await uploadTo(url, bytes, headers)
    t.equal(res.status, 403, what)
    t.match(await res.text(), mismatch, `${what}: Cloud Storage's error`)
  }
  clock.advance(900_000)
  t.equal((await uploadTo(target, bytes)).status, 200, 'valid up to its expiry, to the second')
  clock.advance(1000)
  const expired = await uploadTo(target, bytes)
  t.equal(expired.status, 400)
  t.equal(await expired.text(), "<?xml version='1.0' encoding='UTF-8'?><Error><Code>ExpiredToken</Code><Message>Invalid argument.</Message><Details>The provided token has expired. Request signature expired at: 2025-01-01T00:15:00+00:00</Details></Error>")
})

t.test('upload-url: only for internal_source deployments, 404 for an unknown one; under /api-host the URL keeps the prefix', async (t) => {
  const { base, api } = await serveApp(t)
  const cli = cliFor(base)
  const docker = await cli.createDeployment({ name: 'local-build', source: 'internal_docker', deploymentType: 'dev' }).catch(() => null)
    ?? (await api.post('/v2/deployments', { name: 'local-build', source: 'internal_docker', source_config: { deployment_type: 'dev' }, source_revision_config: { image_uri: 'registry.example/agent:1' }, secrets: [] })).body
  const wrong = await api.post(`/v2/deployments/${docker.id}/upload-url`)
  t.equal(wrong.status, 400)
  t.same(wrong.body, { detail: `Upload URLs are only available for 'internal_source' source deployments; deployment ${docker.id} has source 'internal_docker'.` })
  const unknown = 'dddddddd-0000-4000-8000-000000000000'
  t.same((await api.post(`/v2/deployments/${unknown}/upload-url`)).body, { detail: `Deployment ID ${unknown} not found.` })
  t.equal((await api.post('/v2/deployments/nope/upload-url')).status, 422)

  const deployment = await remoteDeployment(cli)
  const prefixed = await fetch(`${base}/api-host/v2/deployments/${deployment.id}/upload-url`, { method: 'POST', headers: { 'x-api-key': API_KEY } })
  const { upload_url: target } = await prefixed.json() as any
  t.ok(target.startsWith(`${base}/api-host/storage/hangar-source-uploads/`), 'the upload URL is under /api-host too')
  t.equal((await uploadTo(target, await archiveOf(t))).status, 200)
  t.equal((await fetch(`${base}/v2/deployments/${deployment.id}/upload-url`, { method: 'POST' })).status, 401, 'the control plane route needs the API key')
})

t.test('push-token: a token and registry for internal_docker; any other source is refused with the text the CLI matches', async (t) => {
  const { base, api } = await serveApp(t, { registryUrl: 'registry.local:5000/hangar' })
  const cli = cliFor(base)
  const docker = (await api.post('/v2/deployments', { name: 'local-build', source: 'internal_docker', source_config: { deployment_type: 'dev' }, source_revision_config: { image_uri: 'registry.example/agent:1' }, secrets: [] })).body
  const push = await cli.requestPushToken(docker.id)
  t.same(Object.keys(push), ['token', 'registry_url'])
  t.match(push.token, /^[A-Za-z0-9_-]{40,}$/)
  t.equal(push.registry_url, `registry.local:5000/hangar/${docker.id}`, 'HANGAR_REGISTRY_URL, one repository per deployment')
  t.not((await cli.requestPushToken(docker.id)).token, push.token, 'a fresh token each time')

  const remote = await remoteDeployment(cli)
  const refused = await cli.requestPushToken(remote.id).then(() => null, (error: Error & { statusCode?: number }) => error)
  t.equal(refused?.statusCode, 400)
  t.ok(refused?.message.includes("only available for 'internal_docker' source deployments"), 'the substring the CLI matches to say the deployment was not made by langgraph deploy')
  t.same((await api.post(`/api-host/v2/deployments/${remote.id}/push-token`)).body, {
    detail: `Push tokens are only available for 'internal_docker' source deployments; deployment ${remote.id} has source 'internal_source'.`,
  })
  t.equal((await api.post('/v2/deployments/dddddddd-0000-4000-8000-000000000000/push-token')).status, 404)
})

t.test('uploads survive a state export and import, bytes and all', async (t) => {
  const { base, api } = await serveApp(t)
  const cli = cliFor(base)
  const deployment = await remoteDeployment(cli)
  const bytes = await archiveOf(t)
  await uploaded(t, cli, deployment.id, bytes)
  const state = (await api.get('/_hangar/state')).body
  t.match(state.tables.source_uploads[0].content, { base64: bytes.toString('base64') }, 'bytes are written as base64')
  t.equal((await api.post('/_hangar/reset')).status, 204)
  t.equal((await api.put('/_hangar/state', state)).status, 204)
  const [upload] = (await api.get(`/_hangar/deployments/${deployment.id}/uploads`)).body.uploads
  const content = await fetch(`${base}/_hangar/deployments/${deployment.id}/uploads/${upload.id}/content`)
  t.same(Buffer.from(await content.arrayBuffer()), bytes)
  t.equal((await api.get(`/_hangar/deployments/${deployment.id}/uploads/dddddddd-0000-4000-8000-000000000000/content`)).status, 404)
})
