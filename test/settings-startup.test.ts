// Settings hangar cannot start with, as a person meets them: the process itself (src/server.ts),
// compiled and spawned as `npm start` runs it, prints one line naming the setting and exits 2 — no stack, no hang.
// The rules behind each line are tested in-process in test/config.test.ts; these few spawns prove
// the process turns a failure of the fixtures and of the database into that line (test/server.test.ts
// has a bad flag).

import { join } from 'node:path'
import t from 'tap'
import { compiledServer, readyUrl, startServer } from './server-process.js'

/** hangar on the compiled sources, on a free port, logging JSON (what the ready line is read from). */
const start = (server: string, args: string[]) => startServer(server, ['--port', '0', '--log-format', 'json', ...args])

/**
 * The exit code and everything written to stderr once the process ends. A hangar that starts
 * instead of refusing is stopped at its ready line and reported as such, so the test fails at once.
 */
async function refusal(server: string, args: string[]): Promise<{ code: number | string | null; stderr: string }> {
  const run = start(server, args)
  const started = readyUrl(run.child).then(() => {
    run.child.kill('SIGKILL')
    return 'started instead of refusing'
  }, () => undefined)
  const [code] = await run.exited
  return { code: (await started) ?? code, stderr: run.stderr() }
}

t.test('an invalid fixture is one line naming the setting, the file and the field, and exit 2', async (t) => {
  const dir = t.testdir({ 'workspaces.json': JSON.stringify([{ id: 'nope', self_hosted_enterprise: false }]) })
  t.same(await refusal(await compiledServer(t), ['--db', ':memory:', '--fixtures', dir]), {
    code: 2,
    stderr: `hangar: HANGAR_FIXTURES (--fixtures): fixture ${join(dir, 'workspaces.json')}: [0].id: Input should be a valid UUID, invalid character: found \`n\` at 1\n`,
  })
})

t.test('your own graphs (--graphs): a bad file, or a directory that is not there, is one line naming HANGAR_GRAPHS, and exit 2', async (t) => {
  const dir = t.testdir({ 'mine.json': JSON.stringify({ graph_id: 'mine', nodes: [{ name: 'a', next: 'b' }] }) })
  const server = await compiledServer(t)
  t.same(await refusal(server, ['--db', ':memory:', '--graphs', dir]), {
    code: 2,
    stderr: `hangar: HANGAR_GRAPHS (--graphs): fixture ${join(dir, 'mine.json')}: nodes[0].next: 'b' is not a node (nodes: a; or __end__)\n`,
  })
  t.same(await refusal(server, ['--db', ':memory:', '--graphs', join(dir, 'nope')]), {
    code: 2,
    stderr: `hangar: HANGAR_GRAPHS (--graphs): ${join(dir, 'nope')} is not a directory\n`,
  })
})

t.test('a corrupted recording (--replay) is one line naming HANGAR_REPLAY, the file and the field, and exit 2', async (t) => {
  const dir = t.testdir({ 'recording.json': '{"format":"hangar-recording/1"}', replay: { 'agent.json': '{"format":"hangar-replay/1","graph_id":"agent"}' } })
  t.same(await refusal(await compiledServer(t), ['--db', ':memory:', '--replay', dir]), {
    code: 2,
    stderr: `hangar: HANGAR_REPLAY (--replay): recording ${join(dir, 'replay', 'agent.json')}: description: Field required\n`,
  })
})

t.test('a second hangar on a database file in use is refused with the first one\'s pid', async (t) => {
  const server = await compiledServer(t)
  const db = join(t.testdir(), 'shared.db')
  const first = start(server, ['--db', db])
  t.teardown(() => first.child.kill('SIGKILL'))
  await readyUrl(first.child, first.stderr)
  t.same(await refusal(server, ['--db', db]), {
    code: 2,
    stderr: `hangar: HANGAR_DB (--db): the database ${db} is in use by another hangar (pid ${first.child.pid})\n`,
  })
  // That the lock never outlives its process (a restart after SIGKILL opens the file) is what
  // test/crash-safety.test.ts does ten times over.
})

t.test('--agent-auth users with a users file that is not there is one line naming HANGAR_AGENT_USERS, and exit 2', async (t) => {
  const missing = join(t.testdir(), 'users.json')
  t.same(await refusal(await compiledServer(t), ['--db', ':memory:', '--agent-auth', 'users', '--agent-users', missing]), {
    code: 2,
    stderr: `hangar: HANGAR_AGENT_USERS (--agent-users): the users file ${missing} does not exist\n`,
  })
})
