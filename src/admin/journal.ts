// The request journal: the last N requests hangar answered, with what was asked and answered, for
// tests and debugging. A ring of fixed capacity holds them, so memory stays bounded whatever the
// load; secrets are redacted before anything is stored, and bodies are cut to 4 KiB of text.

import { performance } from 'node:perf_hooks'
import { Transform, type Readable } from 'node:stream'
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { globToRegExp } from './faults.js'
import { redactHeaders, redactQuery, renderBody, type HeaderMap } from './redaction.js'

export type { HeaderMap } from './redaction.js'

export interface JournalEntry {
  id: number
  time: string
  method: string
  path: string
  query: string
  status: number
  latency_ms: number
  workspace: string | null
  request_headers: HeaderMap
  request_body: string | null
  response_headers: HeaderMap
}

export interface JournalFilter {
  /** Exact, case-insensitive. */
  method?: string
  /** A substring of the path, or a glob when it holds `*` (`*` within a segment, `**` across). */
  path?: string
  /** An exact status (`404`) or a class (`4xx`). */
  status?: string | number
  workspace?: string
  /** Only entries with a greater id (what came after an entry already seen). */
  since_id?: number
  limit?: number
}

/** Paths of hangar itself rather than of the services it emulates: never journaled nor faulted. */
export const isHangarOwnPath = (path: string) =>
  path === '/_hangar' || path.startsWith('/_hangar/') || path === '/ok' || path.startsWith('/docs') || path === '/openapi.json'

/** A ring buffer of the newest `capacity` entries, newest first when listed. */
export class RequestJournal {
  readonly capacity: number
  readonly #ring: (JournalEntry | undefined)[]
  /** The slot the next entry goes to. */
  #next = 0
  #size = 0
  #lastId = 0

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`journal capacity must be a non-negative integer, got ${capacity}`)
    this.capacity = capacity
    this.#ring = new Array<JournalEntry | undefined>(capacity).fill(undefined)
  }

  get size(): number {
    return this.#size
  }

  /** Slots allocated: always `capacity`, however many requests came (for tests and metrics). */
  get allocated(): number {
    return this.#ring.length
  }

  /** Stores an entry (overwriting the oldest when full) and returns it with its id. */
  record(entry: Omit<JournalEntry, 'id'>): JournalEntry | undefined {
    if (this.capacity === 0) return undefined
    const stored = { id: ++this.#lastId, ...entry }
    this.#ring[this.#next] = stored
    this.#next = (this.#next + 1) % this.capacity
    this.#size = Math.min(this.#size + 1, this.capacity)
    return stored
  }

  /** Entries that pass the filter, newest first. */
  list(filter: JournalFilter = {}): JournalEntry[] {
    const accepts = compileFilter(filter)
    const limit = filter.limit ?? Infinity
    const out: JournalEntry[] = []
    for (let i = 1; i <= this.#size && out.length < limit; i++) {
      const entry = this.#ring[(this.#next - i + this.capacity) % this.capacity]!
      if (filter.since_id !== undefined && entry.id <= filter.since_id) break
      if (accepts(entry)) out.push(entry)
    }
    return out
  }

  /** Forgets every entry; ids keep increasing, so `since_id` stays meaningful. */
  clear(): void {
    this.#ring.fill(undefined)
    this.#next = 0
    this.#size = 0
  }
}

function compileFilter(filter: JournalFilter): (entry: JournalEntry) => boolean {
  const checks: ((entry: JournalEntry) => boolean)[] = []
  if (filter.method) {
    const method = filter.method.toUpperCase()
    checks.push((e) => e.method === method)
  }
  if (filter.path) {
    const path = filter.path
    if (path.includes('*')) {
      const pattern = globToRegExp(path)
      checks.push((e) => pattern.test(e.path))
    } else checks.push((e) => e.path.includes(path))
  }
  if (filter.status !== undefined && filter.status !== '') {
    const status = String(filter.status).toLowerCase()
    if (status.endsWith('xx')) {
      const family = Number(status[0])
      checks.push((e) => Math.floor(e.status / 100) === family)
    } else checks.push((e) => e.status === Number(status))
  }
  if (filter.workspace) {
    const workspace = filter.workspace.toLowerCase()
    checks.push((e) => e.workspace === workspace)
  }
  return (entry) => checks.every((check) => check(entry))
}

// ---- Recording -----------------------------------------------------------------------------

/** Copies a request body as Fastify reads it (at most `limit` bytes), without changing the stream. */
class BodyCapture {
  readonly #chunks: Buffer[] = []
  #bytes = 0
  #rendered: string | null | undefined

  constructor(
    readonly limit: number,
    readonly contentType: string | undefined,
  ) {}

  tap(source: Readable): Readable {
    const tap = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        if (this.#bytes < this.limit) this.#chunks.push(chunk.subarray(0, this.limit - this.#bytes))
        this.#bytes += chunk.length
        callback(null, chunk)
      },
      flush: (callback) => {
        this.text() // render now, so the raw chunks are not kept while a long response goes on
        callback()
      },
    })
    source.on('error', (error) => tap.destroy(error))
    source.on('close', () => {
      if (!source.readableEnded) tap.destroy(new Error('request body aborted'))
    })
    source.pipe(tap)
    return tap
  }

  text(): string | null {
    if (this.#rendered === undefined) {
      this.#rendered = renderBody(Buffer.concat(this.#chunks), this.contentType)
      this.#chunks.length = 0
    }
    return this.#rendered
  }
}

interface Pending {
  started: number
  time: number
  body: BodyCapture | undefined
  recorded: boolean
}

const hasBody = (headers: IncomingHttpHeaders) =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')

const splitUrl = (url: string): [string, string] => {
  const q = url.indexOf('?')
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q + 1)]
}

/** The headers that went on the wire (also those a hijacked reply wrote itself), else Fastify's. */
function sentHeaders(reply: FastifyReply): HeaderMap {
  const block = (reply.raw as unknown as { _header?: unknown })._header
  if (typeof block !== 'string') return redactHeaders(reply.getHeaders())
  const headers: Record<string, string | string[]> = {}
  for (const line of block.split('\r\n').slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    const seen = headers[name]
    headers[name] = seen === undefined ? value : [seen, value].flat()
  }
  return redactHeaders(headers)
}

/**
 * Records every request whose path is not excluded: noted at `onRequest`, its body copied as it is
 * read (`preParsing`), recorded at `onResponse` — or, for a reply that never finishes (a hijacked
 * stream the client left, a client gone before the answer), when the connection closes. A stream
 * is recorded when it ends, with its status (200) and its whole duration; a client that left
 * before any answer is recorded with 499. Install before any route plugin is registered.
 */
export function installJournal(app: FastifyInstance, journal: RequestJournal, clock: Clock, options: { exclude: (path: string) => boolean }) {
  if (journal.capacity === 0) return
  const pending = new WeakMap<FastifyRequest, Pending>()
  const bodyLimit = app.initialConfig.bodyLimit ?? 1024 * 1024

  const record = (request: FastifyRequest, reply: FastifyReply) => {
    const [path, query] = splitUrl(request.url)
    let state = pending.get(request)
    if (state === undefined) {
      // Answered before our onRequest hook ran (an earlier hook replied): still worth recording.
      if (options.exclude(path)) return
      state = { started: performance.now() - Math.max(0, reply.elapsedTime), time: clock.now(), body: undefined, recorded: false }
      pending.set(request, state)
    }
    if (state.recorded) return
    state.recorded = true
    const raw = reply.raw
    journal.record({
      time: new Date(state.time).toISOString(),
      method: request.method,
      path,
      query: redactQuery(query),
      status: raw.headersSent ? raw.statusCode : 499,
      latency_ms: Math.round((performance.now() - state.started) * 1000) / 1000,
      workspace: request.tenantId || null,
      request_headers: redactHeaders(request.headers),
      request_body: state.body?.text() ?? null,
      response_headers: raw.headersSent ? sentHeaders(reply) : {},
    })
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (options.exclude(splitUrl(request.url)[0])) return done()
    pending.set(request, { started: performance.now(), time: clock.now(), body: undefined, recorded: false })
    reply.raw.once('close', () => record(request, reply))
    done()
  })
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const state = pending.get(request)
    if (state === undefined || !hasBody(request.headers)) return done(null, payload)
    state.body = new BodyCapture(bodyLimit, request.headers['content-type'])
    done(null, state.body.tap(payload))
  })
  app.addHook('onResponse', (request, reply, done) => {
    record(request, reply)
    done()
  })
}
