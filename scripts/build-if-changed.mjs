#!/usr/bin/env node
// build-if-changed: runs `npm run build` only when the build's inputs changed since the last build
// it ran, so `npm start` on a built tree starts at once (the build takes seconds, the server half
// a second).
//
// The inputs are src/, ui/src/, the tsconfig files, the bundling script, package.json and the TypeScript version; their
// digest is recorded in dist/.build-inputs after a successful build. The build itself is
// incremental (tsconfig.build.json), so after an edit only what it touches is checked again. Contents are compared, not
// times, so a checkout or a copy that touches every file does not force a build, and an edit is
// never missed. A failed build removes the record, so the next start tries again.
//
// Usage: node scripts/build-if-changed.mjs   (exit status: the build's, or 0 when up to date)
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The package root (this file is in scripts/). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const RECORD = join(ROOT, 'dist', '.build-inputs')
const INPUT_DIRS = ['src', join('ui', 'src')]
const INPUT_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.ui.json', join('scripts', 'bundle.mjs')]
/** What a build leaves; if one is missing (dist removed by hand, say), the tree is not built. */
const OUTPUTS = [join('dist', 'server.js'), join('dist', 'index.js'), join('dist', 'ui', 'main.js')]
/** tsc's record of its last build (tsconfig.build.json builds incrementally); it trusts it to know what dist/ holds. */
const TSC_RECORD = join(ROOT, 'dist', '.tsbuildinfo')

/**
 * Where `name` is installed as Node resolves it from the package root (its node_modules, then each parent's), or undefined.
 * @param {string} name
 * @param {string} [from]
 */
export function installedPackage(name, from = ROOT) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

/** @param {string} dir relative to the package root */
function filesUnder(dir) {
  const absolute = join(ROOT, dir)
  if (!existsSync(absolute)) return []
  return readdirSync(absolute, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((file) => statSync(join(ROOT, file)).isFile())
}

/** A digest of everything the build reads, in a fixed order, with `/` paths on every platform. */
export function inputsDigest() {
  const hash = createHash('sha256')
  const files = [...INPUT_FILES, ...INPUT_DIRS.flatMap(filesUnder)].map((file) => file.split(sep).join('/')).sort()
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(join(ROOT, file))).update('\0')
  const typescript = installedPackage('typescript')
  hash.update(`typescript@${typescript ? JSON.parse(readFileSync(join(typescript, 'package.json'), 'utf8')).version : 'missing'}`)
  return hash.digest('hex')
}

/** Whether dist/ holds a build of exactly the current inputs. */
export function upToDate(digest = inputsDigest()) {
  if (!OUTPUTS.every((file) => existsSync(join(ROOT, file)))) return false
  return existsSync(RECORD) && readFileSync(RECORD, 'utf8').trim() === digest
}

/**
 * Runs npm with `args` in the package root, output shown: the npm that runs this script (npm sets
 * npm_execpath for its scripts), else the one on the PATH.
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 */
export function runNpm(args, env = process.env) {
  const npmCli = process.env.npm_execpath
  if (npmCli) return spawnSync(process.execPath, [npmCli, ...args], { cwd: ROOT, stdio: 'inherit', env })
  return spawnSync('npm', args, { cwd: ROOT, stdio: 'inherit', env, shell: process.platform === 'win32' })
}

/** Runs `npm run build` in the package root; records the inputs it built from when it succeeds. Returns its exit status. */
export function build(digest = inputsDigest()) {
  rmSync(RECORD, { force: true })
  // Outputs gone behind tsc's back: a full build, or tsc would not write them again.
  if (!OUTPUTS.every((file) => existsSync(join(ROOT, file)))) rmSync(TSC_RECORD, { force: true })
  const result = runNpm(['run', 'build', '--prefix', ROOT])
  if (result.error) throw result.error
  if (result.status !== 0) return result.status ?? 1
  writeFileSync(RECORD, `${digest}\n`)
  return 0
}

/** Builds when the inputs changed since the last build; returns the exit status. */
export function buildIfChanged() {
  const digest = inputsDigest()
  if (upToDate(digest)) {
    process.stderr.write('hangar: build is up to date (src/, ui/src/ and tsconfig unchanged since the last build)\n')
    return 0
  }
  process.stderr.write('hangar: building (the sources changed since the last build, or there is none)\n')
  const started = Date.now()
  const status = build(digest)
  if (status === 0) process.stderr.write(`hangar: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  return status
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exit(buildIfChanged())
