// The real JS agent server (`langgraphjs dev` from @langchain/langgraph-cli, in-memory, offline)
// running the project in test/fixtures/upstream, as the upstream hangar records from (issue 16).
//
// `langgraphjs dev` writes beside its langgraph.json (.langgraph_api/, its storage flushed to disk;
// a .gitignore line if missing) and tsx, which it runs the graphs with, caches compiled files in
// $TMPDIR. So each server runs on a copy of the project in a temporary directory (node_modules
// linked to the checkout's), with TMPDIR inside it, and the directory is removed once the server has
// ended: nothing is left in the repository or in /tmp.
//
// The server is a tree of processes (the CLI, tsx's CLI, node with tsx's loader, esbuild's service),
// all in one process group started here: stop() signals the group and waits for 'close', which
// comes once every process holding the piped stdout/stderr has ended.

import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { childEnv } from './server-process.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PROJECT = join(ROOT, 'test', 'fixtures', 'upstream')
const CLI = join(ROOT, 'node_modules', '.bin', 'langgraphjs')

/** How long the server may take to say it is running (it takes about 4 s on an idle machine). */
const READY_DEADLINE_MS = 60_000
/** How long it may take to flush and exit on SIGTERM before its group is killed. */
const STOP_DEADLINE_MS = 10_000
/** Fresh ports to try when the one picked was taken before the server could listen on it. */
const PORT_ATTEMPTS = 3

export interface UpstreamOptions {
  /** Start it requiring `x-api-key: <apiKey>` on every request but /info (langgraph-auth.json). */
  apiKey?: string
}

export interface UpstreamServer {
  /** http://127.0.0.1:<port> */
  url: string
  /** The copy of the project it runs on (removed by stop). */
  dir: string
  /** The id of the CLI's process, which leads the group of the server's processes. */
  pid: number
  /** Everything the server has written to stdout and stderr, colours removed. */
  output: () => string
  /** Stops the whole process tree and removes its directory; safe to call more than once. */
  stop: () => Promise<void>
}

/** The environment of the server: nothing that would reach LangSmith, analytics or a browser. */
function upstreamEnv(tmp: string, apiKey: string | undefined): NodeJS.ProcessEnv {
  const env = childEnv({
    TMPDIR: tmp,
    LANGSMITH_TRACING: 'false',
    LANGSMITH_TRACING_V2: 'false',
    LANGCHAIN_TRACING: 'false',
    LANGCHAIN_TRACING_V2: 'false',
    LANGGRAPH_CLI_NO_ANALYTICS: '1',
    BROWSER: 'none',
    // It derives a graph's schemas by parsing its TypeScript in a worker: about 18 s idle, and past
    // its default 30 s limit (a 500) when the suite loads both cores.
    LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: '170000',
  })
  for (const name of ['LANGSMITH_API_KEY', 'LANGCHAIN_API_KEY', 'LANGSMITH_ENDPOINT', 'LANGCHAIN_ENDPOINT', 'LANGGRAPH_CONFIG', 'LANGGRAPH_NODE_LOADER']) {
    delete env[name]
  }
  if (apiKey !== undefined) env.UPSTREAM_API_KEY = apiKey
  return env
}

/** A port nothing listens on now (the server may still lose it to another process: see start). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g

type Started = { url: string } | { portTaken: true }

/** One attempt: spawns the server on `port` and resolves once it runs, or says the port was taken. */
function spawnUpstream(dir: string, port: number, options: UpstreamOptions) {
  const config = options.apiKey === undefined ? 'langgraph.json' : 'langgraph-auth.json'
  const args = ['dev', '--no-browser', '--no-reload', '--host', '127.0.0.1', '--port', String(port), '--config', config]
  // --studio-url: the CLI otherwise asks the LangSmith client for a host name (no request, but no need).
  args.push('--studio-url', 'http://127.0.0.1')
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(process.execPath, [CLI, ...args], {
    cwd: dir,
    env: upstreamEnv(join(dir, 'tmp'), options.apiKey),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so stop() reaches the whole tree
  })
  const closed = once(child, 'close')
  let output = ''
  const started = new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the agent server did not say it was running within ${READY_DEADLINE_MS} ms; its output:\n${output}`)),
      READY_DEADLINE_MS,
    )
    const settle = (result: Started | Error) => {
      clearTimeout(timer)
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onLine = (raw: string) => {
      const line = raw.replace(ANSI, '')
      output += `${line}\n`
      const running = /Server running at (\S+)/.exec(line)
      if (running) settle({ url: `http://${running[1]}` })
      else if (/EADDRINUSE/.test(line)) settle({ portTaken: true })
      else if (/^error:/.test(line)) settle(new Error(`the agent server failed to start: ${line}; its output so far:\n${output}`))
    }
    createInterface({ input: child.stdout }).on('line', onLine)
    createInterface({ input: child.stderr }).on('line', onLine)
    // Once settled, a later settle is a no-op.
    void closed.then(([code, signal]) => settle(new Error(`the agent server ended (${code ?? signal}) before it was running; its output:\n${output}`)))
  })
  // The group outlives this process unless killed: if the tests end without stop() (a crash), kill it.
  const killGroup = () => signalGroup(child.pid!, 'SIGKILL')
  process.once('exit', killGroup)
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) signalGroup(child.pid!, 'SIGTERM')
      const timer = setTimeout(killGroup, STOP_DEADLINE_MS)
      await closed
      clearTimeout(timer)
      // 'close' means every process holding the pipes has ended; anything of the group that let go
      // of them early ends now.
      killGroup()
      process.off('exit', killGroup)
    })())
  return { pid: child.pid!, started, stop, output: () => output }
}

/** Signals every process of the group led by `pid`; a group already gone is not an error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
  }
}

/**
 * Starts the real agent server on the fixture project and resolves once it says it is running;
 * stopped when `t` ends (or earlier with stop()).
 */
export async function startUpstream(t: Test, options: UpstreamOptions = {}): Promise<UpstreamServer> {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-upstream-'))
  let stopCurrent: () => Promise<void> = async () => {}
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= stopCurrent().finally(() => rmSync(dir, { recursive: true, force: true })))
  t.teardown(stop)
  cpSync(PROJECT, dir, { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  mkdirSync(join(dir, 'tmp'))
  for (let attempt = 1; ; attempt++) {
    const server = spawnUpstream(dir, await freePort(), options)
    stopCurrent = server.stop
    const started = await server.started.catch(async (error: unknown) => {
      await stop()
      throw error
    })
    if ('url' in started) return { url: started.url, dir, pid: server.pid, output: server.output, stop }
    await server.stop()
    if (attempt === PORT_ATTEMPTS) {
      await stop()
      throw new Error(`the agent server found its port taken ${PORT_ATTEMPTS} times; its last output:\n${server.output()}`)
    }
  }
}
