// Installing hangar as people do, rehearsed for real with npm in throwaway directories (never the
// machine's own global prefix): a fresh checkout installed globally and as a path dependency, a
// tarball from `npm pack` installed globally and as a dependency, and a git URL (`git+file://` of a
// repository made from the checkout, so it runs offline) as a dependency. Each must give a
// `hangar` command that prints its version, starts, answers /ok and stops on SIGTERM; each
// dependency must give `import { startHangar } from 'hangar'`.
//
// The "fresh checkout" is the files git tracks (or would: untracked files not ignored count too)
// as they are in this working tree, without node_modules or dist.
//
// better-sqlite3 compiles its native addon on every fresh install here (no prebuilt binary can be
// downloaded), about a minute each time. Unless HANGAR_REHEARSAL_COMPILE=1, the installs take it
// prebuilt from this checkout's own build instead, through prebuild-install's local-prebuilds
// setting: what npm does is the same, only the addon is not compiled again. npm's cache is the
// user's, so packages come from it rather than the registry where they can.
//
// Slow (minutes): not part of `npm test`. Run: npx tap --disable-coverage test/rehearsals/install.test.ts

import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, sep } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'

const ROOT = new URL('../..', import.meta.url).pathname
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string
/** One install may take minutes on a loaded 2-core machine; every wait below is for a process. */
const CASE_TIMEOUT_MS = 900_000
t.setTimeout(5 * CASE_TIMEOUT_MS)

// Outside the repository: from inside it, Node would find the checkout's own node_modules by
// walking up, and an install missing its dependencies would still pass. HANGAR_REHEARSAL_KEEP=1 keeps it.
const work = mkdtempSync(join(tmpdir(), 'hangar-install-'))
t.teardown(() => {
  if (process.env.HANGAR_REHEARSAL_KEEP === '1') console.log(`# kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
})
const durations: string[] = []

/**
 * The environment people's npm runs in: this process's without what an enclosing npm (`npm test`,
 * `npx tap`) added — its npm_* variables and the node_modules/.bin directories on PATH, through
 * which this checkout's own tsc would be found — plus the addon mirror.
 */
function npmEnvironment(prebuilds: string | undefined): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
  env.PATH = (env.PATH ?? '').split(delimiter).filter((dir) => !dir.includes(`${sep}node_modules${sep}`)).join(delimiter)
  return { ...env, npm_config_prefer_offline: 'true', ...(prebuilds ? { npm_config_better_sqlite3_local_prebuilds: prebuilds } : {}) }
}

/** Runs a command to its end and returns its standard output; fails with the tail of its output when it exits non-zero. */
async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    return (await promisify(execFile)(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })).stdout
  } catch (error) {
    const { stdout = '', stderr = '', code } = error as { stdout?: string; stderr?: string; code?: number }
    const tail = `${stdout}${stderr}`.split('\n').slice(-40).join('\n')
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${code}:\n${tail}`, { cause: error })
  }
}

/** A directory holding better-sqlite3's addon as prebuild-install names a prebuilt binary, made from this checkout's build. */
async function addonMirror(): Promise<string | undefined> {
  if (process.env.HANGAR_REHEARSAL_COMPILE === '1') return undefined
  const addon = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')
  if (!existsSync(addon)) return undefined
  const sqliteVersion = JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')).version
  const stage = join(work, 'addon')
  mkdirSync(join(stage, 'build/Release'), { recursive: true })
  cpSync(addon, join(stage, 'build/Release/better_sqlite3.node'))
  const mirror = join(work, 'prebuilds')
  mkdirSync(mirror)
  const name = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await run('tar', ['-czf', join(mirror, name), '-C', stage, 'build'], ROOT)
  return mirror
}

/** A fresh checkout of this working tree at `dir`. */
async function freshCheckout(dir: string): Promise<string> {
  const listed = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], ROOT)
  for (const file of listed.split('\0').filter((name) => name !== '' && existsSync(join(ROOT, name)))) {
    mkdirSync(join(dir, file, '..'), { recursive: true })
    cpSync(join(ROOT, file), join(dir, file))
  }
  return dir
}

/** A project that depends on nothing yet. */
function consumer(name: string): string {
  const dir = join(work, name)
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }))
  return dir
}

async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now()
  const result = await step()
  durations.push(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return result
}

/** `hangar --version`, then `hangar --port 0 --db :memory:`: ready line, GET /ok, SIGTERM. */
async function checkCommand(t: Test, bin: string) {
  t.equal((await run(bin, ['--version'], work)).trim(), VERSION, `${bin} --version`)
  const child = spawn(bin, ['--port', '0', '--db', ':memory:', '--log-format', 'json'], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const exited = once(child, 'exit')
  let url: string | undefined
  for await (const line of createInterface({ input: child.stdout })) {
    url = /"msg":"hangar listening on (http:\/\/[^"]+)"/.exec(line)?.[1]
    if (url) break
  }
  if (!url) throw new Error(`${bin} ended before it was ready`)
  const ok = await fetch(`${url}/ok`)
  t.equal(ok.status, 200, 'it starts and answers /ok')
  child.kill('SIGTERM')
  t.same(await exited, [0, null], 'and stops on SIGTERM')
}

/** `import { startHangar } from 'hangar'` in the consumer project, started and asked for /ok. */
async function checkImport(t: Test, project: string) {
  writeFileSync(join(project, 'check.mjs'), [
    "import { startHangar, VERSION } from 'hangar'",
    'const hangar = await startHangar()',
    'const ok = await fetch(`${hangar.url}/ok`)',
    'await hangar.close()',
    'console.log(JSON.stringify({ version: VERSION, ok: ok.status }))',
  ].join('\n'))
  const out = await run(process.execPath, ['check.mjs'], project)
  t.same(JSON.parse(out.trim().split('\n').at(-1)!), { version: VERSION, ok: 200 }, "import { startHangar } from 'hangar' starts it")
  t.ok(existsSync(join(project, 'node_modules/hangar/dist/index.d.ts')), 'with its type declarations')
  // Each test file's process imports it: one bundle loads in ~115 ms, tsc's 300-odd modules took ~350.
  t.notMatch(readFileSync(join(project, 'node_modules/hangar/dist/index.js'), 'utf8'), /^(import|export) [^;]* from ["']\.\.?\//m,
    'from one bundled file, which imports none of its own modules')
}

const prebuilds = await addonMirror()
t.comment(prebuilds ? `better-sqlite3's addon comes prebuilt from ${prebuilds}` : 'better-sqlite3 compiles its addon on each install')
const npm = (args: string[], cwd: string) => run('npm', args, cwd, npmEnvironment(prebuilds))
const tracked = await freshCheckout(join(work, 'checkout-global'))

t.test('npm install -g <fresh checkout>: the hangar command works', { timeout: CASE_TIMEOUT_MS }, async (t) => {
  const prefix = join(work, 'prefix-folder')
  await timed('npm install -g ./checkout', () => npm(['install', '-g', '--prefix', prefix, tracked], work))
  await checkCommand(t, join(prefix, 'bin/hangar'))
})

t.test('npm install <fresh checkout> as a path dependency: the command and the import work', { timeout: CASE_TIMEOUT_MS }, async (t) => {
  const checkout = await freshCheckout(join(work, 'checkout-path'))
  const project = consumer('uses-path')
  await timed('npm install ../checkout', () => npm(['install', checkout], project))
  await checkCommand(t, join(project, 'node_modules/.bin/hangar'))
  await checkImport(t, project)
})

t.test('npm pack, then the tarball installed globally and as a dependency', { timeout: CASE_TIMEOUT_MS }, async (t) => {
  // Packed from the checkout the first case prepared (a maintainer packs a built checkout).
  const packed = await timed('npm pack', () => npm(['pack', '--pack-destination', work], tracked))
  const tarball = join(work, packed.trim().split('\n').at(-1)!) // npm pack prints the file name last
  t.ok(existsSync(tarball), `npm pack wrote ${tarball}`)
  const prefix = join(work, 'prefix-tarball')
  await timed('npm install -g hangar.tgz', () => npm(['install', '-g', '--prefix', prefix, tarball], work))
  await checkCommand(t, join(prefix, 'bin/hangar'))
  const project = consumer('uses-tarball')
  await timed('npm install hangar.tgz', () => npm(['install', tarball], project))
  await checkImport(t, project)
})

t.test('npm install git+file://… as a dependency: the command and the import work', { timeout: CASE_TIMEOUT_MS }, async (t) => {
  const repository = await freshCheckout(join(work, 'repository'))
  await run('git', ['init', '-q'], repository)
  await run('git', ['add', '-A'], repository)
  await run('git', ['-c', 'user.name=hangar rehearsal', '-c', 'user.email=rehearsal@localhost', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'snapshot'], repository)
  const project = consumer('uses-git')
  await timed('npm install git+file://…', () => npm(['install', `git+file://${repository}`], project))
  await checkCommand(t, join(project, 'node_modules/.bin/hangar'))
  await checkImport(t, project)
})

t.teardown(() => console.log(`# install rehearsal times:\n${durations.map((line) => `#   ${line}`).join('\n')}`))
