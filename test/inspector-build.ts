// The inspector page's scripts are compiled from ui/src to dist/ui, which `npm run build` does with
// tsc (tsconfig.ui.json). Tests that load the page compile them first, so they never serve scripts
// older than ui/src; they use esbuild, which strips the types in milliseconds where tsc takes
// seconds (the types are checked by test/typecheck.test.ts). Each file is compiled elsewhere and
// renamed into place, so a test reading dist/ui while another builds never sees half a file.

import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export async function buildInspector(): Promise<void> {
  const { build } = await import('esbuild')
  const sources = join(ROOT, 'ui/src')
  await mkdir(join(ROOT, 'dist/ui'), { recursive: true })
  const staging = await mkdtemp(join(ROOT, 'dist/.ui-build-'))
  try {
    await build({
      entryPoints: (await readdir(sources)).filter((name) => name.endsWith('.ts')).map((name) => join(sources, name)),
      outdir: staging,
      format: 'esm',
      target: 'es2022',
      logLevel: 'error',
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    })
    for (const name of await readdir(staging)) await rename(join(staging, name), join(ROOT, 'dist/ui', name))
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}
