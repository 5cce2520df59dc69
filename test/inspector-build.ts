// The inspector page's scripts are compiled (tsconfig.ui.json) to dist/ui, which `npm run build`
// also does. Tests that load the page build them first, so they never serve scripts older than
// ui/src. Each file is compiled elsewhere and renamed into place, so a test reading dist/ui while
// another builds never sees half a file.

import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { childEnv } from './server-process.js'

const ROOT = new URL('..', import.meta.url).pathname

export async function buildInspector(): Promise<void> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  await mkdir(join(ROOT, 'dist/ui'), { recursive: true })
  const staging = await mkdtemp(join(ROOT, 'dist/.ui-build-'))
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.ui.json', '--outDir', staging], { cwd: ROOT, env: childEnv() })
    for (const name of await readdir(staging)) await rename(join(staging, name), join(ROOT, 'dist/ui', name))
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}
