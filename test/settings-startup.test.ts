// Settings hangar cannot start with, as a person meets them: the process itself (src/server.ts),
// spawned as `npm start` runs it, prints one line naming the setting and exits 2 — no stack, no hang.
// The rules behind each line are tested in-process in test/config.test.ts; these few spawns prove
// the process turns a failure of the fixtures and of the database into that line (test/server.test.ts
// has a bad flag).

import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'

const SERVER = new URL('../src/server.ts', import.meta.url).pathname
// The TypeScript entry point, run with the loader tap uses for the tests (as test/server.test.ts does).
const NODE_ARGS = ['--no-warnings', '--import=@tapjs/typescript/import', SERVER]

function start(args: string[]) {
  const child = spawn(process.execPath, [...NODE_ARGS, '--port', '0', '--log-format', 'json', ...args], {
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  return { child, exited, stderr: () => stderr }
}

/** Resolves once the `hangar listening on …` line is logged. */
async function ready(child: ReturnType<typeof start>['child']): Promise<void> {
  for await (const line of createInterface({ input: child.stdout })) if (line.includes('hangar listening on')) return
  throw new Error('hangar exited before it was ready')
}

/**
 * The exit code and everything written to stderr once the process ends. A hangar that starts
 * instead of refusing is stopped at its ready line and reported as such, so the test fails at once.
 */
async function refusal(args: string[]): Promise<{ code: number | string | null; stderr: string }> {
  const run = start(args)
  const started = ready(run.child).then(() => {
    run.child.kill('SIGKILL')
    return 'started instead of refusing'
  }, () => undefined)
  const [code] = await run.exited
  return { code: (await started) ?? code, stderr: run.stderr() }
}

t.test('an invalid fixture is one line naming the setting, the file and the field, and exit 2', async (t) => {
  const dir = t.testdir({ 'workspaces.json': JSON.stringify([{ id: 'nope', self_hosted_enterprise: false }]) })
  t.same(await refusal(['--db', ':memory:', '--fixtures', dir]), {
    code: 2,
    stderr: `hangar: HANGAR_FIXTURES (--fixtures): fixture ${join(dir, 'workspaces.json')}: [0].id: Input should be a valid UUID, invalid character: found \`n\` at 1\n`,
  })
})

t.test('a second hangar on a database file in use is refused with the first one\'s pid', async (t) => {
  const db = join(t.testdir(), 'shared.db')
  const first = start(['--db', db])
  t.teardown(() => first.child.kill('SIGKILL'))
  await ready(first.child)
  t.same(await refusal(['--db', db]), {
    code: 2,
    stderr: `hangar: HANGAR_DB (--db): the database ${db} is in use by another hangar (pid ${first.child.pid})\n`,
  })
  // That the lock never outlives its process (a restart after SIGKILL opens the file) is what
  // test/crash-safety.test.ts does ten times over.
})
