import { createRequire } from 'node:module'
import type { FastifyBaseLogger } from 'fastify'
import { pino, type Bindings, type ChildLoggerOptions, type Level, type LogFn, type Logger } from 'pino'
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

/**
 * Fastify's `childLoggerFactory`: a request's logger that makes pino's child (which serializes the
 * request id binding, a few µs on every request) only when something logs at an enabled level. At
 * `warn`, most requests log nothing and so make none. A route with a log level of its own gets the
 * child at once.
 */
export function lazyRequestLogger(this: unknown, logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options)
  return new LazyChild(logger as unknown as Logger, bindings)
}

class LazyChild implements FastifyBaseLogger {
  readonly #parent: Logger
  readonly #bindings: Bindings
  #made: Logger | undefined
  constructor(parent: Logger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  #child(): Logger {
    return (this.#made ??= this.#parent.child(this.#bindings))
  }

  get level(): string {
    return this.#made?.level ?? this.#parent.level
  }

  set level(level: string) {
    this.#child().level = level
  }

  fatal(...args: Parameters<LogFn>): void {
    this.#log('fatal', args)
  }
  error(...args: Parameters<LogFn>): void {
    this.#log('error', args)
  }
  warn(...args: Parameters<LogFn>): void {
    this.#log('warn', args)
  }
  info(...args: Parameters<LogFn>): void {
    this.#log('info', args)
  }
  debug(...args: Parameters<LogFn>): void {
    this.#log('debug', args)
  }
  trace(...args: Parameters<LogFn>): void {
    this.#log('trace', args)
  }
  silent(): void {}

  #log(level: Level, args: Parameters<LogFn>): void {
    const logger = this.#made ?? this.#parent
    if (!logger.isLevelEnabled(level)) return
    ;(this.#child()[level] as (...args: unknown[]) => void)(...args)
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#child().child(bindings, options)
  }
}
