// `npm start` as a person runs it, in a copy of the tree (so builds and edits stay out of the
// checkout): it builds only when the sources changed since the last build, serves, and stops —
// server included — when the npm process gets SIGTERM. Nothing sleeps: every wait is for a line
// of output or a process exit, bounded by tap's timeout.

import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, cpSync, readFileSync, statSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'

const ROOT = new URL('../..', import.meta.url).pathname
/** What `npm start` reads: the manifest, the build's inputs, the build script, and what the server loads at run time. */
const TREE = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.ui.json', 'src', 'ui', 'scripts', 'fixtures']
/** Two builds under load on a 2-core machine take a while; every wait inside is for an event. */
const TIMEOUT_MS = 300_000

/** A copy of the tree without dist/, sharing the checkout's node_modules. */
function copyTree(t: Test): string {
  const dir = t.testdir()
  for (const entry of TREE) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return dir
}

interface Started {
  /** The npm process's id: what `kill -TERM <pid of npm start>` names. */
  npm: number
  /** The server's own process id, from its log lines. */
  server: number
  url: string
  /** What npm and the build script printed on stderr before the server was ready. */
  stderr: string
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/** `npm start -- --port 0 --db :memory:` in `dir`; resolves once the server's ready line is out. */
async function npmStart(t: Test, dir: string): Promise<Started> {
  const child = spawn('npm', ['start', '--', '--port', '0', '--db', ':memory:', '--log-format', 'json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  let server = 0
  t.teardown(() => {
    // Only when a check failed: leave no server holding a port behind.
    for (const pid of [server, child.pid!]) if (pid && alive(pid)) process.kill(pid, 'SIGKILL')
  })
  for await (const line of createInterface({ input: child.stdout })) {
    const ready = /"pid":(\d+),.*"msg":"hangar listening on (http:\/\/[^"]+)"/.exec(line)
    if (ready) {
      server = Number(ready[1])
      return { npm: child.pid!, server, url: ready[2], stderr, exited }
    }
  }
  throw new Error(`npm start ended before the server was ready:\n${stderr}`)
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Whether the port can be bound again right now. */
async function portFree(port: number): Promise<boolean> {
  const probe = createServer()
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

/** SIGTERM to the npm process, as `kill -TERM <pid of npm start>`; checks everything stopped. */
async function stopNpm(t: Test, started: Started) {
  process.kill(started.npm, 'SIGTERM')
  const [code, signal] = await started.exited
  t.same({ code, signal }, { code: 0, signal: null }, 'npm ends when the server has closed')
  t.notOk(alive(started.server), 'the server process is gone, not reparented')
  t.ok(await portFree(Number(new URL(started.url).port)), 'its port is free again')
}

const mtime = (file: string) => statSync(file).mtimeMs

t.test('npm start builds only when the sources changed, and SIGTERM to npm stops the server', { timeout: TIMEOUT_MS }, async (t) => {
  const dir = copyTree(t)
  const serverJs = join(dir, 'dist', 'server.js')

  const first = await npmStart(t, dir)
  t.match(first.stderr, /hangar: building/, 'a tree never built is built')
  const ok = await fetch(`${first.url}/ok`)
  t.equal(ok.status, 200)
  t.not(first.server, first.npm, 'the server runs in its own process')
  await stopNpm(t, first)
  const built = mtime(serverJs)

  const second = await npmStart(t, dir)
  t.match(second.stderr, /hangar: build is up to date/)
  t.notMatch(second.stderr, /hangar: building/, 'an unchanged tree is not built again')
  t.equal(mtime(serverJs), built, 'dist/ was not written')
  t.equal((await fetch(`${second.url}/ok`)).status, 200)
  await stopNpm(t, second)

  // An export, not a comment: dist/server.js is a bundle (scripts/bundle.mjs), which keeps no comments.
  appendFileSync(join(dir, 'src', 'server.ts'), "\nexport const edited = 'edited after the last build'\n")
  const third = await npmStart(t, dir)
  t.match(third.stderr, /hangar: building/, 'an edited source is built')
  t.match(readFileSync(serverJs, 'utf8'), /edited after the last build/, 'dist/ holds the edit')
  t.equal((await fetch(`${third.url}/ok`)).status, 200)
  await stopNpm(t, third)
})
