// hangar as a process, as `npm start` runs it: src/ compiled to JavaScript, then `node dist/server.js`.
// Loading the TypeScript with a loader instead costs seconds per start (every module goes through
// the loader's hooks), so each test file that starts processes compiles src/ once, with esbuild,
// into a temporary package laid out like the real one (dist/ beside fixtures/, ui/, package.json
// and node_modules, the last four linked to the checkout's), and starts node on that.

import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/**
 * Compiles src/ into a temporary package (removed when `t` ends) and returns the path of its
 * dist/server.js. Type-only syntax is stripped as tsc does (verbatimModuleSyntax); types are checked
 * by test/typecheck.test.ts.
 */
export async function compiledServer(t: Test): Promise<string> {
  const { build } = await import('esbuild')
  const dir = mkdtempSync(join(tmpdir(), 'hangar-compiled-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const name of ['package.json', 'fixtures', 'ui', 'node_modules']) symlinkSync(join(ROOT, name), join(dir, name))
  await build({
    entryPoints: sources(join(ROOT, 'src')),
    outbase: join(ROOT, 'src'),
    outdir: join(dir, 'dist'),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  })
  return join(dir, 'dist', 'server.js')
}

export interface ServerProcess {
  child: ChildProcessByStdio<null, Readable, Readable>
  /** Resolves with [exit code, signal] once the process has exited. */
  exited: Promise<[number | null, NodeJS.Signals | null]>
  /** Everything written to stderr so far. */
  stderr: () => string
}

/**
 * The environment for a child process: this one's, without what tap adds to NODE_OPTIONS for the
 * test processes (its process-info hook, which records every node process started below it and
 * costs about a second per start) and without NODE_V8_COVERAGE (`npm run coverage`). What the
 * children run lies outside the project (a compiled copy, a rehearsal's clean directory), so their
 * coverage would not be counted anyway.
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const options = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((option) => option !== '' && !option.includes('@tapjs/'))
  const { NODE_V8_COVERAGE: _coverage, ...env } = process.env
  return { ...env, NODE_OPTIONS: options.join(' '), ...extra }
}

/** Starts `node <server> ...args` with stdout and stderr piped. */
export function startServer(server: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ServerProcess {
  const child = spawn(process.execPath, [server, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  return { child, exited, stderr: () => stderr }
}

/**
 * Resolves with the URL of the `hangar listening on …` log line (JSON logs); rejects, with what the
 * process wrote to stderr, if it ends first. stdout is read on to its end, so a full pipe never
 * blocks the process's logger.
 */
export function readyUrl(child: ChildProcess, stderr: () => string = () => ''): Promise<string> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /"msg":"hangar listening on (http:\/\/[^"]+)"/.exec(line)
      if (match) resolve(match[1])
    })
    // 'close' comes after the last line of stdout was read; once resolved, this rejection is a no-op.
    child.once('close', (code, signal) => reject(new Error(`hangar ended (${code ?? signal}) before it was ready; stderr:\n${stderr()}`)))
  })
}
