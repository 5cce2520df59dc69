// The Dockerfile's build and start steps, rehearsed without Docker by scripts/docker-check.mjs
// (a clean copy, `npm ci` compiling better-sqlite3, the build, the CMD, /ok, the HEALTHCHECK,
// SIGTERM). It takes about two minutes, so it is not part of `npm test`: `npm run rehearse` runs it
// with the other rehearsals, and `.ci/run` runs that as its own required step.

import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { childEnv } from '../server-process.js'

t.test('the Dockerfile builds and starts, and its health check passes', { timeout: 600_000 }, async (t) => {
  const script = new URL('../../scripts/docker-check.mjs', import.meta.url).pathname
  const result = await promisify(execFile)(process.execPath, [script], { env: childEnv(), maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: `${error.stdout}\n${error.stderr}` }),
  )
  t.equal(result.code, 0, result.code === 0 ? 'docker-check passed' : result.stdout.split('\n').slice(-40).join('\n'))
  t.match(result.stdout, /docker-check: ok\n$/)
})
