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
 * What the journal is given of a request: the header objects as they were, the response's header
 * lines, the body as parsed. The ring keeps their text in bytes of its own (see `RequestJournal`);
 * redacting happens when the journal is read, not on the request's path.
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

type Stored = Recorded & { id: number }

/** What the journal tells of each entry it records: its summary, made only while somebody listens. */
export interface OnRecord {
  listening(): boolean
  record(summary: Pick<JournalEntry, 'id' | 'method' | 'path' | 'status' | 'latency_ms'>): void
}

/** Bytes of text a slot holds: an entry's strings (`entryText`), then its response's header lines. */
const SLOT_BYTES = 1024
/** Slots per block of bytes; a block is allocated when its first slot is used. */
const BLOCK_SLOTS = 256

/**
 * Whether `write()` may have cut `text`, having written `written` of at most `room` bytes: it
 * writes whole characters only, so a text it cut filled the room to within 3 bytes.
 */
const cut = (text: string, written: number, room: number): boolean => written > room - 4 && Buffer.byteLength(text) !== written

/** How a slot holds its entry. */
const enum Slot {
  Empty = 0,
  /** As text in the slot's bytes (every request whose text fits). */
  Text = 1,
  /** As the object it came as (a webhook call, or text larger than a slot). */
  Object = 2,
}

/**
 * A ring buffer of the newest `capacity` entries, newest first when listed.
 *
 * Every request passes here, and an entry lives until `capacity` newer ones replace it: long enough
 * for the GC to copy it from its young generation and promote it. Kept as objects (the entry, the
 * request's header object and its strings, the response's header lines), 1,000 entries cost a
 * request ~4 µs of GC work, more than the rest of the journal. So an entry's numbers go to typed
 * arrays and its strings, as one text and the header lines, into 1 KiB of bytes the ring allocated
 * once: nothing of it stays on the heap but a request's body (a Buffer, its bytes outside the heap).
 * What does not fit (a browser's request with its cookies may not) is kept as it came.
 */
export class RequestJournal {
  readonly capacity: number
  /** The slot the next entry goes to. */
  #next = 0
  #size = 0
  #lastId = 0
  #objectsKept = 0
  readonly #onRecord: OnRecord | undefined
  readonly #kind: Uint8Array
  readonly #ids: Float64Array
  readonly #times: Float64Array
  readonly #latencies: Float64Array
  readonly #statuses: Uint16Array
  /** Bytes of the entry's text, and of the header lines after it, in each Text slot. */
  readonly #textBytes: Uint16Array
  readonly #lineBytes: Uint16Array
  readonly #blocks: (Buffer | undefined)[]
  readonly #objects: (Recorded | undefined)[]
  readonly #bodies: Recorded['body'][]
  /** Entries as the journal shows them, made at their first read. */
  readonly #rendered: (JournalEntry | undefined)[]

  /** `onRecord` hears of each request as it is recorded (the inspector's live view). */
  constructor(capacity: number, onRecord?: OnRecord) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`journal capacity must be a non-negative integer, got ${capacity}`)
    this.capacity = capacity
    this.#onRecord = onRecord
    this.#kind = new Uint8Array(capacity)
    this.#ids = new Float64Array(capacity)
    this.#times = new Float64Array(capacity)
    this.#latencies = new Float64Array(capacity)
    this.#statuses = new Uint16Array(capacity)
    this.#textBytes = new Uint16Array(capacity)
    this.#lineBytes = new Uint16Array(capacity)
    this.#blocks = new Array<Buffer | undefined>(Math.ceil(capacity / BLOCK_SLOTS)).fill(undefined)
    this.#objects = new Array<Recorded | undefined>(capacity).fill(undefined)
    this.#bodies = new Array<Recorded['body']>(capacity).fill(undefined)
    this.#rendered = new Array<JournalEntry | undefined>(capacity).fill(undefined)
  }

  get size(): number {
    return this.#size
  }

  /** Slots allocated: always `capacity`, however many requests came (for tests and metrics). */
  get allocated(): number {
    return this.#kind.length
  }

  /** Entries kept as objects rather than in the ring's bytes (webhook calls, entries larger than a slot): for tests and metrics. */
  get objectsKept(): number {
    return this.#objectsKept
  }

  /** Stores a request (overwriting the oldest when full); returns its id. */
  record(entry: Recorded): number | undefined {
    if (this.capacity === 0) return undefined
    const id = ++this.#lastId
    const slot = this.#next
    this.#ids[slot] = id
    this.#times[slot] = entry.time
    this.#latencies[slot] = entry.latency_ms
    this.#statuses[slot] = entry.status
    this.#rendered[slot] = undefined
    if (this.#kind[slot] === Slot.Object) this.#objectsKept--
    if (entry.webhook === undefined && this.#write(slot, entry)) {
      this.#kind[slot] = Slot.Text
      this.#objects[slot] = undefined
      this.#bodies[slot] = entry.body
    } else {
      this.#kind[slot] = Slot.Object
      this.#objects[slot] = entry
      this.#bodies[slot] = undefined
      this.#objectsKept++
    }
    this.#next = (slot + 1) % this.capacity
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
      const slot = (this.#next - i + this.capacity) % this.capacity
      if (filter.since_id !== undefined && this.#ids[slot]! <= filter.since_id) break
      // Decoding a slot is cheap; rendering (redaction, bodies) is done only for the entries listed.
      const stored = this.#read(slot)
      if (accepts(stored)) out.push((this.#rendered[slot] ??= journalEntry(stored)))
    }
    return out
  }

  /** Forgets every entry; ids keep increasing, so `since_id` stays meaningful. */
  clear(): void {
    this.#kind.fill(Slot.Empty)
    this.#objects.fill(undefined)
    this.#bodies.fill(undefined)
    this.#rendered.fill(undefined)
    this.#next = 0
    this.#size = 0
    this.#objectsKept = 0
  }

  /** Writes an entry's text into its slot's bytes; false when it cannot be kept as text or does not fit. */
  #write(slot: number, entry: Recorded): boolean {
    const lines = entry.responseHeaders
    if (typeof lines !== 'string') return false
    const text = entryText(entry)
    // UTF-8 gives back every string but one holding a lone surrogate, which only a request made in
    // process can (Node's parser reads bytes as Latin-1): such an entry is kept as an object.
    if (text === undefined || !text.isWellFormed() || !lines.isWellFormed()) return false
    const blockIndex = (slot / BLOCK_SLOTS) | 0
    const block = (this.#blocks[blockIndex] ??= Buffer.allocUnsafeSlow(Math.min(BLOCK_SLOTS, this.capacity - blockIndex * BLOCK_SLOTS) * SLOT_BYTES))
    const start = (slot % BLOCK_SLOTS) * SLOT_BYTES
    const textBytes = block.write(text, start, SLOT_BYTES, 'utf8')
    if (cut(text, textBytes, SLOT_BYTES)) return false
    const lineBytes = lines === '' ? 0 : block.write(lines, start + textBytes, SLOT_BYTES - textBytes, 'utf8')
    if (cut(lines, lineBytes, SLOT_BYTES - textBytes)) return false
    this.#textBytes[slot] = textBytes
    this.#lineBytes[slot] = lineBytes
    return true
  }

  /** The entry a slot holds, as it was recorded. */
  #read(slot: number): Stored {
    const id = this.#ids[slot]!
    if (this.#kind[slot] === Slot.Object) return { ...this.#objects[slot]!, id }
    const block = this.#blocks[(slot / BLOCK_SLOTS) | 0]!
    const start = (slot % BLOCK_SLOTS) * SLOT_BYTES
    const end = start + this.#textBytes[slot]!
    const [method, path, query, workspace, ...headers] = block.toString('utf8', start, end).split(SEPARATOR) as [string, string, string, string, ...string[]]
    // Without a prototype, a header named `__proto__` is kept like any other.
    const requestHeaders = Object.create(null) as Record<string, string>
    for (let i = 0; i < headers.length; i += 2) requestHeaders[headers[i]!] = headers[i + 1]!
    return {
      id, method, path, query, requestHeaders,
      workspace: workspace === '' ? null : workspace,
      time: this.#times[slot]!,
      status: this.#statuses[slot]!,
      latency_ms: this.#latencies[slot]!,
      body: this.#bodies[slot],
      responseHeaders: block.toString('utf8', end, end + this.#lineBytes[slot]!),
    }
  }
}

/**
 * An entry's strings as one text: method, path, query, workspace (empty for none), then each
 * request header's name and value, all separated by NUL, which neither the HTTP parser nor Node's
 * header checks let into any of them. Undefined when one holds it anyway (a request made in
 * process, `inject`), when the workspace is '' (which the text reads as none) or when a header is
 * not one string: such an entry is kept as an object.
 */
function entryText(entry: Recorded): string | undefined {
  const { method, path, query, workspace } = entry
  if (method.includes(SEPARATOR) || path.includes(SEPARATOR) || query.includes(SEPARATOR) || workspace?.includes(SEPARATOR) || workspace === '') return undefined
  let text = `${method}${SEPARATOR}${path}${SEPARATOR}${query}${SEPARATOR}${workspace ?? ''}`
  const headers = entry.requestHeaders
  for (const name in headers) {
    const value = headers[name]
    if (typeof value !== 'string' || name.includes(SEPARATOR) || value.includes(SEPARATOR)) return undefined
    text += `${SEPARATOR}${name}${SEPARATOR}${value}`
  }
  return text
}
const SEPARATOR = '\0'

/** What the journal shows of a recorded entry (the definition its stored form is tested against). */
export function journalEntry(entry: Recorded & { id: number }): JournalEntry {
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
