// tap runs TypeScript without type-checking it; this test is the type check, so a type error
// fails the suite like any other broken behaviour. Three programs: the server with its tests
// (tsconfig.json); the inspector page's scripts, which run in a browser (tsconfig.ui.json); and the
// plain JavaScript tools run with `node` (bench/, scripts/, .ci/), checked through their JSDoc types
// (tsconfig.tools.json).

import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { childEnv } from '../server-process.js'

const PROGRAMS = [
  ['tsconfig.json', 'the project type-checks'],
  ['tsconfig.ui.json', "the inspector page's scripts type-check"],
  ['tsconfig.tools.json', 'the benchmarks, scripts and CI tools type-check'],
]

/** Runs tsc over one program; the three run side by side (each is one process, single-threaded). */
function typecheck(project: string): Promise<{ code: number; output: string }> {
  const tsc = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname
  return promisify(execFile)(process.execPath, [tsc, '-p', project, '--noEmit', '--pretty', 'false'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: childEnv(),
  }).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
  )
}

const results = PROGRAMS.map(([project]) => typecheck(project))
PROGRAMS.forEach(([project, name], i) => {
  t.test(`${name} (${project})`, async (t) => {
    const result = await results[i]
    t.equal(result.code, 0, result.output || 'tsc found no errors')
  })
})
