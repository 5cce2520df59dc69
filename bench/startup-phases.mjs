// Run as a child by startup.mjs: starts hangar (or the bare app) in steps, the way server.ts does,
// and prints one JSON line with the time of each step in ms since the process started
// (performance.now() counts from the process's time origin). `embed` instead times `startHangar()`
// and `close()` in one process (what a test suite pays per hangar), once the module is loaded and
// one hangar was started and closed, and prints the times in ms.
//   node bench/startup-phases.mjs hangar|bare|embed|import <module>

import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const dist = join(process.env.BENCH_HANGAR_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..'), 'dist')
const [what, target] = process.argv.slice(2)
/** @type {Record<string, number>} */
const mark = { entry: performance.now() }

if (what === 'import') {
  // What importing one package costs in a fresh process.
  await import(target)
  mark.imported = performance.now()
} else if (what === 'embed') {
  const { startHangar } = await import(pathToFileURL(join(dist, 'embed.js')).href)
  // The first one warms what a process pays once (lazy imports, the JIT); it is not counted.
  await (await startHangar()).close()
  /** @type {number[]} */
  const samples = []
  for (let i = 0; i < Number(target ?? 20); i++) {
    const started = performance.now()
    const hangar = await startHangar()
    await hangar.close()
    samples.push(performance.now() - started)
  }
  process.stdout.write(`${JSON.stringify({ samples })}\n`)
  process.exit(0)
} else if (what === 'hangar') {
  const { loadConfig } = await import(pathToFileURL(join(dist, 'config.js')).href)
  mark.importConfig = performance.now()
  const { buildApp } = await import(pathToFileURL(join(dist, 'app.js')).href)
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
