// Run as a child by startup.mjs: starts hangar (or the bare app) in steps, the way server.ts does,
// and prints one JSON line with the time of each step in ms since the process started
// (performance.now() counts from the process's time origin). hangar is loaded as a package user
// loads it: dist/index.js, the bundle `import { startHangar } from 'hangar'` gives.
// `embed` instead times `startHangar()` and `close()` in one process (what a test suite pays per
// hangar), once the module is loaded and one hangar was started and closed, and prints the times in
// ms. `first` times what a test file's process pays for its first hangar: the import, then
// `startHangar()` and `close()` (`first-bare`: importing Fastify, then the bare app of `embed-bare`).
//   node bench/startup-phases.mjs hangar|bare|embed [n]|embed-bare <routes>|first|first-bare <routes>|import <module>

import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const dist = join(process.env.BENCH_HANGAR_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..'), 'dist')
/** The package's entry, as `import ... from 'hangar'` resolves it. */
const entry = pathToFileURL(join(dist, 'index.js')).href
const [what, target] = process.argv.slice(2)
/** @type {Record<string, number>} */
const mark = { entry: performance.now() }

if (what === 'import') {
  // What importing one package costs in a fresh process.
  await import(target)
  mark.imported = performance.now()
} else if (what === 'first') {
  const { startHangar } = await import(entry)
  mark.imported = performance.now()
  const hangar = await startHangar()
  await hangar.close()
  mark.closed = performance.now()
} else if (what === 'embed') {
  const { startHangar } = await import(entry)
  // The first one warms what a process pays once (lazy imports, the JIT); it is not counted.
  const first = await startHangar()
  await first.close()
  /** @type {number[]} */
  const samples = []
  for (let i = 0; i < Number(target ?? 20); i++) {
    const started = performance.now()
    const hangar = await startHangar()
    await hangar.close()
    samples.push(performance.now() - started)
  }
  let routes = 0
  const { buildApp } = await import(entry)
  const counted = buildApp({ config: { db: ':memory:', logLevel: 'silent' } })
  counted.addHook('onRoute', () => void routes++)
  await counted.ready()
  await counted.close()
  process.stdout.write(`${JSON.stringify({ samples, routes })}\n`)
  process.exit(0)
} else if (what === 'embed-bare' || what === 'first-bare') {
  // Fastify's own share of an in-process start: a bare app registering as many routes as hangar
  // (`target`), four to a plugin, each with a path parameter and three response schemas, with
  // validator and serializer compilers that compile nothing (as hangar's compile at first use);
  // then listen() and close(), timed as `embed` times startHangar().
  const { default: Fastify } = await import('fastify')
  mark.imported = performance.now()
  const routes = Number(target)
  const start = async () => {
    const app = Fastify({ exposeHeadRoutes: false })
    app.setValidatorCompiler(() => () => true)
    app.setSerializerCompiler(() => (data) => JSON.stringify(data))
    for (let p = 0; p < Math.ceil(routes / 4); p++) {
      app.register(async (scope) => {
        scope.addHook('onRequest', async () => {})
        for (let r = p * 4; r < Math.min(routes, p * 4 + 4); r++) {
          const object = { type: 'object', properties: { id: { type: 'string' } } }
          scope.get(`/p${p}/r${r}/:id`, { schema: { params: object, response: { 200: object, 404: object, 422: object } } }, async () => ({}))
        }
      })
    }
    await app.listen({ port: 0, host: '127.0.0.1' })
    await app.close()
  }
  await start()
  if (what === 'first-bare') {
    mark.closed = performance.now()
    process.stdout.write(`${JSON.stringify(mark)}\n`)
    process.exit(0)
  }
  /** @type {number[]} */
  const samples = []
  for (let i = 0; i < 20; i++) {
    const started = performance.now()
    await start()
    samples.push(performance.now() - started)
  }
  process.stdout.write(`${JSON.stringify({ samples })}\n`)
  process.exit(0)
} else if (what === 'hangar') {
  const { buildApp, loadConfig } = await import(entry)
  mark.importApp = performance.now()
  const { config } = loadConfig(['--port', '0', '--db', ':memory:', '--log-level', 'warn'], {})
  const app = buildApp({ config })
  mark.buildApp = performance.now()
  await app.ready()
  mark.ready = performance.now()
  await app.listen({ port: 0, host: '127.0.0.1' })
  mark.listen = performance.now()
  await app.close()
} else {
  const { default: Fastify } = await import('fastify')
  mark.importApp = performance.now()
  const app = Fastify()
  app.get('/ok', async () => ({ ok: true }))
  mark.buildApp = performance.now()
  await app.ready()
  mark.ready = performance.now()
  await app.listen({ port: 0, host: '127.0.0.1' })
  mark.listen = performance.now()
  await app.close()
}
process.stdout.write(`${JSON.stringify(mark)}\n`)
