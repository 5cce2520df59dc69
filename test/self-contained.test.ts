// A fresh clone has nothing beside it: no test, source file, script or benchmark may read the
// project's shared folder next to the checkout, and the reference documents the tests read are the
// ones test/reference/README.md lists, unchanged.

import t from 'tap'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Ways a file can point outside the checkout at the shared folder. */
const OUTSIDE = [
  /\.\.\/+shared\b/, // the shared folder reached upwards from the checkout, at any depth
  /\/work\/+shared\b/, // the absolute path on the project's machines
  /['"]\.\.['"]\s*,\s*(?:['"]\.\.['"]\s*,\s*)*['"]shared['"]/, // join(here, '..', 'shared')
  /HANGAR_REFERENCE_DIR/, // the old escape hatch that pointed there
]

function trackedFiles(...dirs: string[]): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--', ...dirs], { cwd: ROOT, encoding: 'utf8' })
  return out.split('\0').filter(Boolean)
}

t.test('no tracked file under src, test, bench, scripts or .ci refers to the shared folder beside the checkout', async (t) => {
  const files = trackedFiles('src', 'test', 'bench', 'scripts', '.ci', 'ui', 'package.json', '.taprc')
  t.ok(files.length > 50, `git lists the repository's files (${files.length})`)
  t.ok(files.includes('test/openapi-conformance.ts') && files.includes('src/app.ts'), 'the files that read documents are among them')
  const offenders: string[] = []
  for (const file of files) {
    if (file.startsWith('test/reference/')) continue // the documents themselves (data, not code)
    if (file === 'test/self-contained.test.ts') continue // the patterns above
    const lines = readFileSync(`${ROOT}/${file}`, 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (OUTSIDE.some((pattern) => pattern.test(line))) offenders.push(`${file}:${i + 1}: ${line.trim()}`)
    })
  }
  t.same(offenders, [], 'read what the tests need from test/reference/ instead')
})

t.test('test/reference/README.md lists every reference document with the hash of the copy in the repository', async (t) => {
  const dir = `${ROOT}/test/reference`
  const readme = readFileSync(`${dir}/README.md`, 'utf8')
  const listed = new Map([...readme.matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)].map((m) => [m[2]!, m[1]!]))
  const documents = readdirSync(dir).filter((name) => name !== 'README.md').sort()
  t.same([...listed.keys()].sort(), documents, 'the README lists exactly the documents in the folder')
  for (const name of documents) {
    const hash = createHash('sha256').update(readFileSync(`${dir}/${name}`)).digest('hex')
    t.equal(hash, listed.get(name), `${name} is the copy the README names (refresh its line when you replace it)`)
    t.match(readme, new RegExp(`\\| \`${name.replaceAll('.', '\\.')}\` \\|.*\\| \\d{4}-\\d{2}-\\d{2} \\|`), `${name} has a source and a date`)
  }
})
