// The official deploy CLI (`langgraphjs deploy` from @langchain/langgraph-cli, unmodified) against
// hangar on a real port, as a CI job would run it with `--host-url`: the remote build (create →
// upload-url → PUT the tarball → PATCH → poll → result), its failure path (the last 30 build-log
// lines), and the `list`, `revisions list`, `logs` and `delete` subcommands. The CLI polls every 3 s
// of wall time; hangar's clock is manual and moves 3 s each time the CLI reads the revision, so the
// build advances exactly as it would between the CLI's real polls.

import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import type { BusMessage } from '../src/admin/bus.js'
import { serveApp, TENANT_A } from './helpers.js'
import { childEnv } from './server-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const CLI = join(ROOT, 'node_modules', '.bin', 'langgraphjs')
const PROJECT = join(ROOT, 'test', 'fixtures', 'cli-project')
const KEY = 'cli-key'
const SECRET_VALUE = 'sk-cli-secret-value-1234'
/** How long one CLI command may take before the test fails (the slowest polls a few times, 3 s apart). */
const CLI_DEADLINE_MS = 120_000

interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** A fresh copy of the project the CLI deploys (it may write beside langgraph.json). */
function project(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-cli-'))
  cpSync(PROJECT, dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs `langgraphjs <args>` in `cwd` with nothing that could reach the network or a real account. */
async function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: childEnv({
      LANGGRAPH_CLI_NO_ANALYTICS: '1',
      LANGSMITH_TENANT_ID: TENANT_A,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      LANGGRAPH_HOST_API_KEY: '',
      LANGSMITH_API_KEY: '',
      LANGCHAIN_API_KEY: '',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // A CLI that hangs is killed, so the test fails instead of waiting forever.
    timeout: CLI_DEADLINE_MS,
    killSignal: 'SIGKILL',
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, stdout, stderr }
}

/** The JSON lines of `--json` output. */
const events = (stdout: string): Array<Record<string, unknown>> =>
  stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line))

/**
 * hangar for the CLI: revisions at `fast` speed on a manual clock that moves 3 s whenever the CLI
 * reads a revision (its poll interval), so the build walks its statuses across the CLI's polls.
 */
async function hangarForCli(t: Test) {
  const served = await serveApp(t, { apiKeys: [KEY], revisionSpeed: 'fast' })
  const { clock, app } = served
  const revisionRead = /^\/v2\/deployments\/[^/]+\/revisions\/[^/]+$/
  const requests: string[] = []
  const stop = app.emulator.bus.subscribe((message: BusMessage) => {
    if (message.topic !== 'request') return
    requests.push(`${message.data.method} ${message.data.path}`)
    if (message.data.method === 'GET' && revisionRead.test(message.data.path)) clock.advance(3000)
  })
  t.teardown(stop)
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${served.base}${path}`, {
      method,
      headers: { 'x-api-key': KEY, 'x-tenant-id': TENANT_A, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  return { ...served, requests, api, hostArgs: ['--host-url', served.base, '--api-key', KEY] }
}

t.test('a remote build: create, upload, PATCH, poll until DEPLOYED, as the CLI sends them', async (t) => {
  const hangar = await hangarForCli(t)
  const dir = project(t)
  const run = await cli(dir, ['deploy', '--remote', '--no-input', '--json', '--name', 'cli-demo', ...hangar.hostArgs])
  t.equal(run.code, 0, `the CLI succeeds (stderr: ${run.stderr})`)
  const made = [...hangar.requests]
  const result = events(run.stdout).find((event) => event.event === 'result')
  t.equal(result?.status, 'succeeded', 'its result is "succeeded"')
  t.equal(result?.message, 'Deployment successful!')

  const list = await (await hangar.api('GET', '/v2/deployments?name_contains=cli-demo')).json()
  t.equal(list.resources.length, 1, 'one deployment was created')
  const deployment = list.resources[0]
  t.equal(deployment.name, 'cli-demo')
  t.equal(deployment.source, 'internal_source')
  t.equal(deployment.source_config.deployment_type, 'dev', 'the CLI\'s default type')
  t.same(deployment.secrets.map((s: { name: string }) => s.name), ['OPENAI_API_KEY'], 'the .env secret, the reserved name skipped')
  const revisions = await (await hangar.api('GET', `/v2/deployments/${deployment.id}/revisions`)).json()
  t.equal(revisions.resources.length, 1, 'one revision: the one the PATCH made')
  const revision = revisions.resources[0]
  t.equal(revision.status, 'DEPLOYED')
  t.match(revision.source_revision_config, { langgraph_config_path: 'langgraph.json', source_tarball_path: /\S/ })

  const id = deployment.id
  const rid = revision.id
  const sequence = made.filter((line) => !line.startsWith('PUT '))
  t.same(sequence.slice(0, 5), [
    'GET /v2/deployments',
    'POST /v2/deployments',
    `POST /v2/deployments/${id}/upload-url`,
    `PATCH /v2/deployments/${id}`,
    `GET /v2/deployments/${id}/revisions`,
  ], 'look up, create, ask for an upload URL, trigger the build, find its revision')
  t.ok(made.some((line) => line.startsWith('PUT ')), 'the tarball was PUT to the upload URL')
  const polls = sequence.slice(5, -1)
  t.ok(polls.length >= 2 && polls.every((line) => line === `GET /v2/deployments/${id}/revisions/${rid}`), `then it polls the revision (${sequence.join(', ')})`)
  t.equal(sequence.at(-1), `GET /v2/deployments/${id}`, 'and reads the deployment for its URL')
})

t.test('a project whose graph file is missing: BUILD_FAILED, the last build-log lines name the file, exit 1', async (t) => {
  const hangar = await hangarForCli(t)
  const dir = project(t)
  writeFileSync(join(dir, 'langgraph.json'), JSON.stringify({ node_version: '20', graphs: { agent: './src/agent.ts:graph', tools: './src/tools.ts:graph' }, env: '.env' }))
  const run = await cli(dir, ['deploy', '--remote', '--no-input', '--name', 'cli-broken', ...hangar.hostArgs])
  t.equal(run.code, 1, 'the CLI fails')
  const output = run.stdout + run.stderr
  t.match(output, /Last build log lines:/, 'it fetched the last build-log lines')
  t.match(output, "Could not find the file of graph 'tools': ./src/tools.ts (no src/tools.ts in the uploaded source).", 'the cause is among them')
  t.match(output, /Deployment failed/)
  t.ok(hangar.requests.some((line) => /^POST \/v1\/projects\/[^/]+\/revisions\/[^/]+\/build_logs$/.test(line)), 'read from the CLI\'s build_logs route')
  const [deployment] = (await (await hangar.api('GET', '/v2/deployments?name_contains=cli-broken')).json()).resources
  const [revision] = (await (await hangar.api('GET', `/v2/deployments/${deployment.id}/revisions`)).json()).resources
  t.match(revision, { status: 'BUILD_FAILED', status_message: /src\/tools\.ts/ })
})

t.test('--verbose prints the build logs while BUILDING; no log line prints a secret', async (t) => {
  const hangar = await hangarForCli(t)
  const dir = project(t)
  const run = await cli(dir, ['deploy', '--remote', '--no-input', '--verbose', '--name', 'cli-verbose', ...hangar.hostArgs])
  t.equal(run.code, 0, `the CLI succeeds (stderr: ${run.stderr})`)
  t.match(run.stdout, /build logs\):/, 'it printed build logs')
  t.ok(hangar.requests.some((line) => /^POST \/v1\/projects\/[^/]+\/revisions\/[^/]+\/build_logs$/.test(line)), 'read from the CLI\'s build_logs route')
  t.notMatch(run.stdout + run.stderr, SECRET_VALUE, 'the secret never appears')
})

t.test('list, revisions list, logs and delete --force', async (t) => {
  const hangar = await hangarForCli(t)
  const dir = project(t)
  const deployed = await cli(dir, ['deploy', '--remote', '--no-input', '--name', 'cli-sub', ...hangar.hostArgs])
  t.equal(deployed.code, 0, `deployed (stderr: ${deployed.stderr})`)
  const [deployment] = (await (await hangar.api('GET', '/v2/deployments?name_contains=cli-sub')).json()).resources

  const list = await cli(dir, ['deploy', 'list', ...hangar.hostArgs])
  t.equal(list.code, 0)
  t.match(list.stdout, deployment.id, 'list shows the deployment')
  t.match(list.stdout, 'cli-sub')

  const revisions = await cli(dir, ['deploy', 'revisions', 'list', deployment.id, ...hangar.hostArgs])
  t.equal(revisions.code, 0)
  t.match(revisions.stdout, /DEPLOYED/, 'revisions list shows the deployed revision')

  const build = await cli(dir, ['deploy', 'logs', '--type', 'build', '--deployment-id', deployment.id, ...hangar.hostArgs])
  t.equal(build.code, 0, `build logs (stderr: ${build.stderr})`)
  t.match(build.stdout, /Using latest revision: /)
  t.notMatch(build.stdout, /No log entries found/, 'the build left logs')
  const deploy = await cli(dir, ['deploy', 'logs', '--name', 'cli-sub', ...hangar.hostArgs])
  t.equal(deploy.code, 0, `deploy logs (stderr: ${deploy.stderr})`)
  t.notMatch(deploy.stdout, /No log entries found/, 'the deploy left logs')
  t.notMatch(build.stdout + deploy.stdout, SECRET_VALUE, 'no secret in any log')

  const deleted = await cli(dir, ['deploy', 'delete', deployment.id, '--force', ...hangar.hostArgs])
  t.equal(deleted.code, 0)
  t.match(deleted.stdout, `Deleted deployment ${deployment.id}.`)
})
