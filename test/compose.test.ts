// compose.yaml is an example users copy: it must agree with the Dockerfile and the settings, and its
// healthcheck command must really tell a running hangar from none.

import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { SETTINGS } from '../src/config.js'
import { startHangar } from '../src/index.js'
import { childEnv } from './server-process.js'

const compose = parse(readFileSync(new URL('../compose.yaml', import.meta.url), 'utf8'))
const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')
const service = compose.services.hangar

t.test('the service builds the Dockerfile, maps its port and mounts its data volume', async (t) => {
  t.equal(service.build, '.')
  const exposed = /^EXPOSE (\d+)$/m.exec(dockerfile)![1]
  t.same(service.ports, [`${exposed}:${exposed}`])
  const db = /HANGAR_DB=(\S+)/.exec(dockerfile)![1]
  t.same(service.volumes, ['hangar-data:/data'])
  t.ok(db.startsWith('/data/'), 'the image keeps its database on that volume')
  t.ok('hangar-data' in compose.volumes)
  t.equal(service.read_only, true)
  const known = new Set(SETTINGS.map((s) => s.env))
  for (const name of Object.keys(service.environment)) t.ok(known.has(name), `${name} is a setting`)
})

t.test('the healthcheck command passes against a running hangar and fails without one', async (t) => {
  const [kind, command] = service.healthcheck.test as [string, string]
  t.equal(kind, 'CMD-SHELL')
  // Compose turns $$ into $ before the container's shell sees the command.
  const shell = command.replaceAll('$$', '$')
  const hangar = await startHangar()
  const port = new URL(hangar.url).port
  // Run asynchronously: the hangar that answers lives in this very process.
  const check = async () => {
    const child = spawn('sh', ['-c', shell], { env: childEnv({ PORT: port }), stdio: 'ignore' })
    const [code] = await once(child, 'exit')
    return code
  }
  t.equal(await check(), 0, 'exit 0: healthy')
  await hangar.close()
  t.equal(await check(), 1, 'exit 1 once nothing listens there')
})
