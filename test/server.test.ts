// The process itself (src/server.ts), spawned as `npm start` would run it: settings, the ready
// line, the default database file, graceful shutdown.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'
import { VERSION } from '../src/version.js'
import { compiledServer, readyUrl, startServer } from './server-process.js'

const SERVER = new URL('../src/server.ts', import.meta.url).pathname
/** src/ compiled to JavaScript, run as `npm start` runs dist/server.js (see server-process.ts). */
const COMPILED = await compiledServer(t)

const start = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) => startServer(COMPILED, args, options)

t.test('an invalid setting stops start-up with one line naming it', async (t) => {
  const { exited, stderr } = start(['--port', 'abc'])
  const [code] = await exited
  t.equal(code, 2)
  t.equal(stderr(), 'hangar: invalid setting PORT (--port): expected an integer between 0 and 65535, got "abc"\n')
})

t.test('--help and --version answer and exit', async (t) => {
  const help = start(['--help'])
  let out = ''
  help.child.stdout.on('data', (chunk) => (out += chunk))
  t.equal((await help.exited)[0], 0)
  t.match(out, /HANGAR_REVISION_SPEED/)
  const version = start(['--version'])
  let v = ''
  version.child.stdout.on('data', (chunk) => (v += chunk))
  t.equal((await version.exited)[0], 0)
  t.equal(v, `${VERSION}\n`)
})

t.test('it starts on the default database file, serves /ok, logs the ready line and stops cleanly on SIGTERM', async (t) => {
  const cwd = t.testdir()
  const { child, exited } = start(['--port', '0'], { cwd })
  const url = await readyUrl(child)
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const res = await fetch(`${url}/ok`)
  t.equal(res.status, 200)
  t.same(await res.json(), { ok: true })
  const create = await fetch(`${url}/v2/deployments`, { headers: { 'x-api-key': 'k' } })
  t.equal(create.status, 200)
  t.ok(existsSync(join(cwd, '.hangar', 'hangar.db')), 'the default database file is ./.hangar/hangar.db, created on demand')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0)
})

t.test('settings also come from the environment', async (t) => {
  const { child, exited } = start([], { env: { PORT: '0', HANGAR_DB: ':memory:', HANGAR_API_KEYS: 'only-this' } })
  const url = await readyUrl(child)
  t.equal((await fetch(`${url}/v2/deployments`, { headers: { 'x-api-key': 'other' } })).status, 401)
  t.equal((await fetch(`${url}/v2/deployments`, { headers: { 'x-api-key': 'only-this' } })).status, 200)
  child.kill('SIGINT')
  t.equal((await exited)[0], 0)
})

t.test('SIGHUP, SIGQUIT and SIGUSR2 (nodemon restarts with it) stop it cleanly too, keeping what it acknowledged', async (t) => {
  const cwd = t.testdir()
  for (const signal of ['SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const) {
    const { child, exited } = start(['--port', '0', '--db', 'kept.db'], { cwd })
    const url = await readyUrl(child)
    const thread = await fetch(`${url}/threads`, { method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { signal } }) })
    t.equal(thread.status, 200)
    child.kill(signal)
    t.same(await exited, [0, null], `${signal}: exit code 0, not killed by the signal`)
  }
  const { child, exited } = start(['--port', '0', '--db', 'kept.db'], { cwd })
  const url = await readyUrl(child)
  const found = await fetch(`${url}/threads/search`, { method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' }, body: JSON.stringify({ limit: 10 }) })
  const signals = ((await found.json()) as { metadata: { signal?: string } }[]).map((thread) => thread.metadata.signal).sort()
  t.same(signals, ['SIGHUP', 'SIGQUIT', 'SIGUSR2'], 'each thread created before a signal is there after the restart')
  child.kill('SIGTERM')
  t.equal((await exited)[0], 0)
})

t.test('a quieter log level still prints the ready line, and nothing below its level', async (t) => {
  const { child, exited } = start(['--port', '0', '--db', ':memory:', '--log-level', 'warn'])
  const lines: string[] = []
  child.stdout!.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)))
  const url = await readyUrl(child)
  t.equal((await fetch(`${url}/ok`)).status, 200)
  child.kill('SIGTERM')
  t.equal((await exited)[0], 0)
  t.same(lines.map((line) => JSON.parse(line).msg), [`hangar listening on ${url}`], 'the ready line alone: no request or closing logs at warn')
})

t.test('the CLI example of the README: a free port, an in-memory database, instant revisions', async (t) => {
  const { child, exited } = start(['--port', '0', '--db', ':memory:', '--speed', 'instant'])
  const url = await readyUrl(child)
  const headers = { 'x-api-key': 'k', 'content-type': 'application/json' }
  const body = JSON.stringify({ name: 'cli', source: 'external_docker', source_config: { deployment_type: 'dev' }, source_revision_config: { image_uri: 'docker.io/acme/agent:1' }, secrets: [] })
  const created = await (await fetch(`${url}/v2/deployments`, { method: 'POST', headers, body })).json() as any
  const revision = await (await fetch(`${url}/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`, { headers })).json() as any
  t.equal(revision.status, 'DEPLOYED', 'instant: deployed as soon as it is read')
  const info = await (await fetch(`${url}/info`)).json() as any
  t.same([info.hangar.settings.HANGAR_DB, info.hangar.settings.HANGAR_REVISION_SPEED], [':memory:', 'instant'])
  child.kill('SIGTERM')
  t.equal((await exited)[0], 0)
})

t.test('the package\'s bin is the compiled server entry, runnable as a command', async (t) => {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  t.same(manifest.bin, { hangar: 'dist/server.js' })
  t.equal(readFileSync(SERVER, 'utf8').split('\n')[0], '#!/usr/bin/env node', 'tsc keeps the shebang in dist/server.js')
})

t.test('pretty logs: the ready line reads as text, not JSON', async (t) => {
  const { child, exited } = start(['--port', '0', '--db', ':memory:', '--log-format', 'pretty'])
  let ready = ''
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.includes('hangar listening on')) {
      ready = line
      break
    }
  }
  t.match(ready, /INFO.*: hangar listening on http:\/\/127\.0\.0\.1:\d+/)
  t.notMatch(ready, /^\{/, 'not a JSON line')
  child.kill('SIGTERM')
  t.equal((await exited)[0], 0)
})

t.test('SIGTERM with a run streaming: the stream ends cleanly, the run is stored interrupted, nothing acknowledged is lost', async (t) => {
  const cwd = t.testdir()
  const db = join(cwd, 'hangar.db')
  const first = start(['--port', '0', '--db', db, '--heartbeat-ms', '0'])
  const url = await readyUrl(first.child)
  const headers = { 'x-api-key': 'k', 'content-type': 'application/json' }
  const post = async (path: string, body: unknown) => (await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as any
  // The clock stands still, so the pipeline's first node waits until the shutdown stops it.
  await post('/_hangar/clock', { action: 'freeze' })
  const deployment = await post('/v2/deployments', { name: 'kept', source: 'external_docker', source_config: { deployment_type: 'dev' }, source_revision_config: { image_uri: 'acme/agent:1' }, secrets: [] })
  const thread = await post('/threads', { metadata: { kept: true } })
  const response = await fetch(`${url}/threads/${thread.thread_id}/runs/stream`, { method: 'POST', headers, body: JSON.stringify({ assistant_id: 'pipeline', input: { topic: 'shutdown' } }) })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('event: metadata')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the stream ended before its metadata event: ${text}`)
    text += decoder.decode(value, { stream: true })
  }
  const runId = /"run_id":"([^"]+)"/.exec(text)![1]

  first.child.kill('SIGTERM')
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  t.ok(text.endsWith('\n\n'), 'the stream ended on an event boundary, not mid-event')
  t.equal((await first.exited)[0], 0, 'exit code 0')
  t.notOk(existsSync(`${db}-wal`) && readFileSync(`${db}-wal`).length > 0, 'the write-ahead log was checkpointed into the database')

  const second = start(['--port', '0', '--db', db])
  const again = await readyUrl(second.child)
  t.teardown(() => second.child.kill('SIGTERM'))
  const read = async (path: string) => (await fetch(`${again}${path}`, { headers })).json() as any
  t.equal((await read(`/v2/deployments/${deployment.id}`)).name, 'kept', 'the deployment created before the shutdown is there')
  t.match((await read(`/threads/${thread.thread_id}`)).metadata, { kept: true }, 'and the thread, with its metadata')
  const run = await read(`/threads/${thread.thread_id}/runs/${runId}`)
  t.equal(run.status, 'interrupted', 'the run the shutdown stopped is stored as interrupted')
  t.equal((await read(`/threads/${thread.thread_id}`)).status, 'idle')
})
