// The process itself (src/server.ts), spawned as `npm start` would run it: settings, the ready
// line, the default database file, graceful shutdown.

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import t from 'tap'
import { VERSION } from '../src/version.js'

const SERVER = new URL('../src/server.ts', import.meta.url).pathname
// Run the TypeScript entry point with the same loader tap uses for the tests.
const NODE_ARGS = ['--no-warnings', '--import=@tapjs/typescript/import', SERVER]

function start(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  return { child, exited, stderr: () => stderr }
}

/** Resolves with the URL from the `hangar listening on …` log line. */
async function readyUrl(child: ReturnType<typeof spawn>): Promise<string> {
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /"msg":"hangar listening on (http:\/\/[^"]+)"/.exec(line)
    if (match) return match[1]
  }
  throw new Error('the server exited before it was ready')
}

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
