// The per-request logger hangar gives Fastify (src/logging.ts): made only when a request logs at an
// enabled level, and then the same lines as pino's own child, request id included.

import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { pino } from 'pino'
import t from 'tap'
import { lazyRequestLogger } from '../src/logging.js'

function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  return { logger: pino({ level }, stream), lines }
}

t.test('Fastify logs each request with its id through the lazy logger, as with its default', async (t) => {
  for (const factory of [undefined, lazyRequestLogger]) {
    const { logger, lines } = capture('info')
    const app = Fastify({ loggerInstance: logger, ...(factory ? { childLoggerFactory: factory } : {}) })
    app.get('/x', async (request) => {
      request.log.warn({ extra: 1 }, 'from the handler')
      return { ok: true }
    })
    t.teardown(() => app.close())
    await app.inject({ method: 'GET', url: '/x' })
    const messages = lines.map((line) => [line.msg, line.reqId, line.extra])
    t.same(messages, [['incoming request', 'req-1', undefined], ['from the handler', 'req-1', 1], ['request completed', 'req-1', undefined]], factory ? 'lazy' : 'Fastify\'s default')
  }
})

t.test('below the level nothing is written and no child is made; a child of it carries both bindings', async (t) => {
  const { logger, lines } = capture('warn')
  let made = 0
  const child = logger.child
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    made++
    return child.apply(this, args)
  } as typeof logger.child
  const log = lazyRequestLogger.call(null, logger, { reqId: 'r1' }, {})
  log.info('quiet')
  log.debug('quieter')
  t.equal(made, 0, 'no pino child for a request that logged nothing at the level')
  t.equal(log.level, 'warn')
  log.error('loud')
  t.equal(made, 1)
  log.child({ run_id: 'x' }).warn('nested')
  t.same(lines.map((line) => [line.msg, line.reqId, line.run_id]), [['loud', 'r1', undefined], ['nested', 'r1', 'x']])
  log.level = 'debug'
  log.debug('now shown')
  t.equal(lines.at(-1)?.msg, 'now shown', 'a level set on the request logger applies to it')
  t.equal(logger.level, 'warn', 'and not to the server\'s')
})

t.test('a route with a log level of its own gets pino\'s child at once', async (t) => {
  const { logger } = capture('warn')
  const log = lazyRequestLogger.call(null, logger, { reqId: 'r2' }, { level: 'debug' })
  t.equal(log.level, 'debug')
  t.type((log as unknown as { bindings: unknown }).bindings, 'function', 'a pino logger')
})
