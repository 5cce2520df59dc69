// The Dockerfile's build and start steps, rehearsed without Docker by scripts/docker-check.mjs
// (a clean copy, `npm ci` compiling better-sqlite3, the build, the CMD, /ok, the HEALTHCHECK,
// SIGTERM). It takes about two minutes; set HANGAR_SKIP_DOCKER_CHECK=1 to skip it locally.

import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'

const skip = process.env.HANGAR_SKIP_DOCKER_CHECK === '1' ? 'HANGAR_SKIP_DOCKER_CHECK=1 is set' : false

t.test('the Dockerfile builds and starts, and its health check passes', { skip, timeout: 600_000 }, async (t) => {
  const script = new URL('../scripts/docker-check.mjs', import.meta.url).pathname
  const result = await promisify(execFile)(process.execPath, [script], { maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: `${error.stdout}\n${error.stderr}` }),
  )
  t.equal(result.code, 0, result.code === 0 ? 'docker-check passed' : result.stdout.split('\n').slice(-40).join('\n'))
  t.match(result.stdout, /docker-check: ok\n$/)
})
