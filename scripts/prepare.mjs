#!/usr/bin/env node
// prepare: what npm runs after `npm ci` / `npm install` in a checkout, before `npm pack`, and when
// it installs hangar from a folder or a git URL. It leaves a built package: dist/ next to the
// dependencies it imports.
//
// A folder install (`npm install -g ./hangar`, or `npm install ../hangar` in another project) is a
// symlink to the folder, and npm installs none of the folder's dependencies: neither the ones
// dist/ imports at run time nor TypeScript, which the build needs. So when this folder has no
// node_modules at all, prepare first installs them here with `npm ci` (the lockfile's versions,
// dev dependencies included), which is what a developer's checkout holds; that install runs this
// script again, which builds. Otherwise it builds when the sources changed since the last build.
// A git URL install needs none of this: npm installs every dependency in its clone before prepare.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildIfChanged, installedPackage, ROOT, runNpm } from './build-if-changed.mjs'

/** Set for the `npm ci` this script starts, so that a failed install can never start another. */
const INSTALLING = 'HANGAR_PREPARE_INSTALLING'

/** The packages the build and dist/ need that Node cannot find from this folder. */
function missingDependencies() {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  /** @type {string[]} */
  const needed = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})]
  return needed.filter((name) => installedPackage(name) === undefined)
}

/**
 * `npm ci` in this folder. The settings of the npm that runs prepare reach it through npm_config_*
 * variables; those that would send it elsewhere or make it skip something are overridden here
 * (a global install's --global and --prefix, a consumer's --omit=dev), the rest (registry, cache,
 * proxy, a native addon's binary host) are kept.
 */
function installHere() {
  const args = [
    'ci', '--prefix', ROOT, '--global=false', '--location=project', '--include=dev', '--include=optional',
    '--ignore-scripts=false', '--install-links=false', '--workspaces=false', '--dry-run=false', '--package-lock-only=false',
    '--audit=false', '--fund=false',
  ]
  const result = runNpm(args, { ...process.env, [INSTALLING]: '1' })
  if (result.error) throw result.error
  return result.status ?? 1
}

function prepare() {
  const missing = missingDependencies()
  if (missing.length === 0) return buildIfChanged()
  const list = `${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}`
  if (process.env[INSTALLING] || existsSync(join(ROOT, 'node_modules'))) {
    process.stderr.write(`hangar: cannot build in ${ROOT}: ${list} not installed there; run \`npm ci\` in that folder (the build needs the dev dependencies too)\n`)
    return 1
  }
  process.stderr.write(`hangar: ${ROOT} has no node_modules (npm links a folder without installing its dependencies): running npm ci there, then the build\n`)
  return installHere()
}

process.exit(prepare())
