// The request journal: the last N requests hangar answered, with what was asked and answered, for
// tests and debugging. A ring of fixed capacity holds them, so memory stays bounded whatever the
// load (a body is kept up to 64 KiB). Secrets are redacted, and bodies cut to 4 KiB of text, when
// the journal is read: nothing of that work is on the path of the request.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { globToRegExp } from './faults.js'
import { redactHeaders, redactQuery, renderBody, type HeaderMap } from './redaction.js'
import { clientUrl } from '../copies.js'

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
  /** `incoming`: a request to hangar; `outgoing`: a call hangar made (a run's webhook). */
  direction: 'incoming' | 'outgoing'
  /** On outgoing entries: which run's webhook, which attempt, and how it went. */
  webhook?: WebhookCall
}

/** An attempt at delivering a run's webhook, as its journal entry shows it. */
export interface WebhookCall {
  /** The receiver's URL (secret query parameters redacted). */
  url: string
  run_id: string
  thread_id: string
  attempt: number
  max_attempts: number
  /** `retrying`: another attempt follows at `next_attempt_at`. */
  outcome: 'delivered' | 'retrying' | 'failed'
  /** Why no answer came (the entry's status is then 0). */
  error: string | null
  next_attempt_at: string | null
}

export interface JournalFilter {
  /** Exact, case-insensitive. */
  method?: string
  /** A substring of the path, or a glob when it holds `*` (`*` within a segment, `**` across). */
  path?: string
  /** An exact status (`404`) or a class (`4xx`). */
  status?: string | number
  workspace?: string
  direction?: 'incoming' | 'outgoing'
  /** Only entries with a greater id (what came after an entry already seen). */
  since_id?: number
  limit?: number
}

/** Paths of hangar itself rather than of the services it emulates: never journaled nor faulted. */
export const isHangarOwnPath = (path: string) =>
  path === '/_hangar' || path.startsWith('/_hangar/') || path === '/ok' || path.startsWith('/docs') || path === '/openapi.json'

/**
 * What is kept of a request until someone reads the journal: the header objects as they were (Node
 * builds a fresh one per request and never changes it), the response's header block, the body as
 * parsed. Redacting and copying happen when the journal is read, not on the request's path.
 */
export interface Recorded {
  time: number
  method: string
  path: string
  query: string
  status: number
  latency_ms: number
  workspace: string | null
  requestHeaders: Record<string, unknown>
  body: { bytes: Buffer; contentType: string | undefined; length: number } | undefined
  /** The header lines that went on the wire (the raw block without its status line), or the headers Fastify held. */
  responseHeaders: string | Record<string, unknown>
  /** Set on a call hangar made: a run's webhook (its `time` is when it was sent). */
  webhook?: Omit<WebhookCall, 'next_attempt_at' | 'url'> & { url: string; next_attempt_at: number | null }
}

/** A call hangar made to a run's webhook receiver, for `recordOutgoing`. */
export interface OutgoingCall {
  time: number
  method: string
  url: string
  requestHeaders: Record<string, string>
  body: string
  /** 0 when no answer came. */
  status: number
  latency_ms: number
  responseHeaders: Record<string, string>
  webhook: NonNullable<Recorded['webhook']>
}

type Stored = Recorded & { id: number; rendered?: JournalEntry }

/** What the journal tells of each entry it records: its summary, made only while somebody listens. */
export interface OnRecord {
  listening(): boolean
  record(summary: Pick<JournalEntry, 'id' | 'method' | 'path' | 'status' | 'latency_ms'>): void
}

/** A ring buffer of the newest `capacity` entries, newest first when listed. */
export class RequestJournal {
  readonly capacity: number
  readonly #ring: (Stored | undefined)[]
  /** The slot the next entry goes to. */
  #next = 0
  #size = 0
  #lastId = 0
  readonly #onRecord: OnRecord | undefined

  /** `onRecord` hears of each request as it is recorded (the inspector's live view). */
  constructor(capacity: number, onRecord?: OnRecord) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`journal capacity must be a non-negative integer, got ${capacity}`)
    this.capacity = capacity
    this.#ring = new Array<Stored | undefined>(capacity).fill(undefined)
    this.#onRecord = onRecord
  }

  get size(): number {
    return this.#size
  }

  /** Slots allocated: always `capacity`, however many requests came (for tests and metrics). */
  get allocated(): number {
    return this.#ring.length
  }

  /** Stores a request (overwriting the oldest when full; `entry` becomes the journal's); returns its id. */
  record(entry: Recorded): number | undefined {
    if (this.capacity === 0) return undefined
    const id = ++this.#lastId
    // Every request passes here: the entry is kept as it was made, not copied.
    const stored = entry as Stored
    stored.id = id
    this.#ring[this.#next] = stored
    this.#next = (this.#next + 1) % this.capacity
    this.#size = Math.min(this.#size + 1, this.capacity)
    if (this.#onRecord?.listening()) this.#onRecord.record({ id, method: entry.method, path: entry.path, status: entry.status, latency_ms: entry.latency_ms })
    return id
  }

  /** Stores a call hangar made (a run's webhook attempt); returns its id. */
  recordOutgoing(call: OutgoingCall): number | undefined {
    const url = new URL(call.url)
    return this.record({
      time: call.time,
      method: call.method,
      path: url.pathname,
      query: url.search.slice(1),
      status: call.status,
      latency_ms: call.latency_ms,
      workspace: null,
      requestHeaders: call.requestHeaders,
      body: keptBody(Buffer.from(call.body), call.requestHeaders['content-type']),
      responseHeaders: call.responseHeaders,
      webhook: call.webhook,
    })
  }

  /** Entries that pass the filter, newest first, with their secrets redacted. */
  list(filter: JournalFilter = {}): JournalEntry[] {
    const accepts = compileFilter(filter)
    const limit = filter.limit ?? Infinity
    const out: JournalEntry[] = []
    for (let i = 1; i <= this.#size && out.length < limit; i++) {
      const entry = this.#ring[(this.#next - i + this.capacity) % this.capacity]!
      if (filter.since_id !== undefined && entry.id <= filter.since_id) break
      if (accepts(entry)) out.push((entry.rendered ??= render(entry)))
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

function render(entry: Stored): JournalEntry {
  return {
    id: entry.id,
    time: new Date(entry.time).toISOString(),
    method: entry.method,
    path: entry.path,
    query: redactQuery(entry.query),
    status: entry.status,
    latency_ms: entry.latency_ms,
    workspace: entry.workspace,
    request_headers: redactHeaders(entry.requestHeaders),
    request_body: entry.body === undefined ? null : renderBody(entry.body.bytes, entry.body.contentType, entry.body.length > entry.body.bytes.length ? entry.body.length : undefined),
    response_headers: typeof entry.responseHeaders === 'string' ? redactHeaders(parseHeaderLines(entry.responseHeaders)) : redactHeaders(entry.responseHeaders),
    direction: entry.webhook ? 'outgoing' : 'incoming',
    ...(entry.webhook ? { webhook: renderWebhook(entry.webhook) } : {}),
  }
}

function renderWebhook(call: NonNullable<Recorded['webhook']>): WebhookCall {
  const url = new URL(call.url)
  const query = url.search === '' ? '' : `?${redactQuery(url.search.slice(1))}`
  return {
    ...call,
    url: `${url.origin}${url.pathname}${query}`,
    next_attempt_at: call.next_attempt_at === null ? null : new Date(call.next_attempt_at).toISOString(),
  }
}

/** The headers of raw header lines, names lowercased, repeated ones as lists. */
function parseHeaderLines(block: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {}
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    const seen = headers[name]
    headers[name] = seen === undefined ? value : [seen, value].flat()
  }
  return headers
}

function compileFilter(filter: JournalFilter): (entry: Stored) => boolean {
  const checks: ((entry: Stored) => boolean)[] = []
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
  if (filter.direction) {
    const outgoing = filter.direction === 'outgoing'
    checks.push((e) => (e.webhook !== undefined) === outgoing)
  }
  if (filter.workspace) {
    const workspace = filter.workspace.toLowerCase()
    checks.push((e) => e.workspace === workspace)
  }
  return (entry) => checks.every((check) => check(entry))
}

// ---- Recording -----------------------------------------------------------------------------

const splitUrl = (url: string): [string, string] => {
  const q = url.indexOf('?')
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q + 1)]
}

/** A body kept for the journal: small ones as they are, long ones cut to what the journal shows. */
function keptBody(body: Buffer | undefined, contentType: string | undefined): Recorded['body'] {
  if (body === undefined || body.length === 0) return undefined
  // Only what can be shown is kept (a copy, so the whole body is not held), with its full length.
  return { bytes: body.length <= KEEP_BYTES ? body : Buffer.from(body.subarray(0, KEEP_BYTES)), contentType, length: body.length }
}
const KEEP_BYTES = 64 * 1024

/** Where a request stands with the journal (a request decoration: no allocation per request). */
const enum Noted {
  /** Not seen by the `onRequest` hook (an earlier hook answered). */
  No = 0,
  Yes = 1,
  Recorded = 2,
  /** hangar's own path. */
  Excluded = 3,
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The journal's state for this request (see `Noted`). */
    journalNoted: number
    /** The clock's time when the request came (the entry's `time`). */
    journalAt: number
  }
}

/** The reply a response belongs to, for the one `close` listener all responses share. */
const REPLY = Symbol('journaled reply')
type WithReply = { [REPLY]?: FastifyReply }

/**
 * Records every request whose path is not excluded: noted at `onRequest`, recorded (with the body
 * as the parser read it) at `onResponse` — or, for a reply that never finishes (a hijacked
 * stream the client left, a client gone before the answer), when the connection closes. A stream
 * is recorded when it ends, with its status (200) and its whole duration; a client that left
 * before any answer is recorded with 499. Install before any route plugin is registered.
 *
 * Every request passes here, so the per-request work is small: the state lives in two request
 * decorations, the latency is Fastify's own (`reply.elapsedTime`, timed from before the first
 * hook), and every response shares one `close` listener.
 */
export function installJournal(app: FastifyInstance, journal: RequestJournal, clock: Clock, options: { exclude: (path: string) => boolean }) {
  if (journal.capacity === 0) return
  app.decorateRequest('journalNoted', Noted.No)
  app.decorateRequest('journalAt', 0)

  const record = (request: FastifyRequest, reply: FastifyReply) => {
    const noted = request.journalNoted
    if (noted === Noted.Recorded || noted === Noted.Excluded) return
    const [path, query] = splitUrl(clientUrl(request))
    // Answered before our onRequest hook ran (an earlier hook replied): still worth recording.
    if (noted === Noted.No) {
      if (options.exclude(path)) return
      request.journalAt = clock.now()
    }
    request.journalNoted = Noted.Recorded
    const raw = reply.raw
    const block = (raw as unknown as { _header?: unknown })._header
    journal.record({
      time: request.journalAt,
      method: request.method,
      path,
      query,
      status: raw.headersSent ? raw.statusCode : 499,
      latency_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      workspace: request.tenantId || null,
      requestHeaders: request.headers,
      body: keptBody(request.rawBody ?? undefined, request.headers['content-type']),
      // What went on the wire (also what a hijacked reply wrote itself), else what Fastify held.
      responseHeaders: !raw.headersSent ? {} : typeof block === 'string' ? headerLines(block) : { ...reply.getHeaders() },
    })
  }
  function recordOnClose(this: WithReply) {
    const reply = this[REPLY]!
    record(reply.request, reply)
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (options.exclude(pathOf(clientUrl(request)))) {
      request.journalNoted = Noted.Excluded
      return done()
    }
    request.journalNoted = Noted.Yes
    request.journalAt = clock.now()
    const raw = reply.raw as typeof reply.raw & WithReply
    raw[REPLY] = reply
    raw.on('close', recordOnClose)
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    record(request, reply)
    done()
  })
}

/**
 * The header lines of a response's raw header block. Node builds the block by concatenation, a
 * tree of some thirty string pieces, and writes it joined to the body, so the block itself stays a
 * tree: kept as it is, each of the ring's entries held those pieces through the GC's young
 * generation (~4 µs of CPU per request). A substring is made from the block flattened, and keeps
 * only that one copy.
 */
const headerLines = (block: string): string => block.slice(block.indexOf('\r\n') + 2)

const pathOf = (url: string): string => {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}
