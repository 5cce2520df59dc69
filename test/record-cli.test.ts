// `hangar record` as the command people run: a bad option ends it with one line and exit code 2;
// started well, it says where it listens and what it records, forwards, and writes the recording.

import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'
import { serveApp } from './helpers.js'
import { compiledServer, startServer } from './server-process.js'

const server = await compiledServer(t)

t.test('a bad option: one line naming it, exit code 2', async (t) => {
  const missing = startServer(server, ['record', '--out', 'x'])
  t.same(await missing.exited, [2, null])
  t.equal(missing.stderr(), 'hangar record: --upstream is required: the URL of the agent server to record\n')
  const unknown = startServer(server, ['record', '--upstream', 'http://localhost:2024', '--out', 'x', '--verbose'])
  t.same(await unknown.exited, [2, null])
  t.match(unknown.stderr(), /^hangar record: Unknown option '--verbose'.*\(hangar record --help lists the options\)\n$/)
})

t.test('hangar --help names the command; hangar record --help lists its options', async (t) => {
  const help = startServer(server, ['--help'])
  let out = ''
  help.child.stdout.on('data', (chunk) => (out += chunk))
  t.same(await help.exited, [0, null])
  t.match(out, /hangar record --upstream <agent server URL> --out <dir>/)
  const recordHelp = startServer(server, ['record', '--help'])
  let text = ''
  recordHelp.child.stdout.on('data', (chunk) => (text += chunk))
  t.same(await recordHelp.exited, [0, null])
  t.match(text, /^Usage: hangar record --upstream <agent server URL> --out <dir> \[options\]/)
  t.match(text, /--api-key <key>/)
})

t.test('started well: it announces itself, forwards, and records', async (t) => {
  // The upstream requires the key the recorder takes from its environment.
  const upstream = await serveApp(t, { apiKeys: ['cli-secret-5e'] })
  const out = join(mkdtempSync(join(tmpdir(), 'hangar-record-cli-')), 'rec')
  const proc = startServer(server, ['record', '--upstream', upstream.base, '--out', out, '--port', '0'], { env: { HANGAR_UPSTREAM_API_KEY: 'cli-secret-5e' } })
  t.teardown(() => proc.child.kill())
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.child.stdout }).on('line', (line) => {
      const match = /"msg":"hangar recording (\S+) on (http:\/\/\S+) into /.exec(line)
      if (match) resolve(match[2])
    })
    proc.child.once('close', () => reject(new Error(`hangar record ended: ${proc.stderr()}`)))
  })
  const res = await fetch(`${url}/assistants/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"limit": 1}' })
  t.equal(res.status, 200, 'forwarded with the key from the environment')
  t.equal((await res.json()).length, 1)
  const [line] = readFileSync(join(out, 'exchanges.jsonl'), 'utf8').trim().split('\n')
  t.match(JSON.parse(line), { request: { method: 'POST', path: '/assistants/search', body: { limit: 1 } }, response: { status: 200 } })
  t.notOk(readFileSync(join(out, 'exchanges.jsonl'), 'utf8').includes('cli-secret-5e'))
  proc.child.kill('SIGTERM')
  t.same((await proc.exited)[0], 0, 'a signal closes it cleanly')
})
