// The linter (eslint.config.js: ESLint's and typescript-eslint's recommended rules, and for src/ the
// type-aware rules on promises), run over the whole checkout as `npm run lint` does; a finding fails
// the suite like any other broken behaviour, with ESLint's report as the message.

import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { childEnv } from '../server-process.js'

t.test('the code passes the linter (eslint.config.js)', async (t) => {
  const eslint = new URL('../../node_modules/eslint/bin/eslint.js', import.meta.url).pathname
  const result = await promisify(execFile)(process.execPath, [eslint, '--max-warnings', '0', '.'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: childEnv(),
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: `${error.stdout}${error.stderr}` }),
  )
  // The report is the message (one line in tap's summary) and, line by line, the `report` below it.
  t.equal(result.code, 0, result.output || 'ESLint found nothing', result.code === 0 ? {} : { report: result.output })
})
