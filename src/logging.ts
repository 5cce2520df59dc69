import { createRequire } from 'node:module'
import { pino, type Logger } from 'pino'
import type { Config } from './config.js'

/** hangar's logger: JSON for machines, or pretty-printed for a person at a terminal; credentials never shown. */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  return pino({
    level: config.logLevel,
    // Fastify's request serializer logs no headers; should one ever be logged, credentials are hidden.
    redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-hangar-admin-token"]', 'req.headers.cookie'],
  }, prettyStream(config.logFormat))
}

function prettyStream(format: Config['logFormat']): NodeJS.WritableStream | undefined {
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true)
  if (!pretty) return undefined
  // Loaded only when used: it is not needed (nor its start-up cost paid) for JSON logs.
  const build = createRequire(import.meta.url)('pino-pretty') as (options: object) => NodeJS.WritableStream
  return build({ sync: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' })
}
