// What the recorder keeps of one exchange with the upstream agent server, and how it keeps it
// without secrets: the request (method, path with its query, the JSON body with every secret-looking
// field and every configured secret value blanked, no headers at all), the response (status,
// content type, and either its body or, for an event stream, each event with the time it came, in
// milliseconds from the request), and whether it ended whole. A stream the upstream dropped is kept
// as far as it went and marked partial, with the reason.

/** One server-sent event as it came: its name, its data (JSON when it parses), its id, when it came. */
export interface CapturedEvent {
  event: string
  data: unknown
  id?: string
  at_ms: number
}

/** A WebSocket frame as it passed: which side sent it, its data (JSON when it parses), when. */
export interface CapturedFrame {
  from: 'client' | 'server'
  data: unknown
  at_ms: number
}

export interface CapturedExchange {
  request: { method: string; path: string; body: unknown }
  response: {
    status: number
    content_type: string | null
    /** The body (JSON when it parses, else its text) of a response that is not an event stream. */
    body?: unknown
    /** The events of an event stream, in order. */
    events?: CapturedEvent[]
    /** The frames of a WebSocket (`content_type` "websocket"), both ways, in order. */
    frames?: CapturedFrame[]
  }
  started_at: string
  duration_ms: number
  /** Set when the exchange did not end whole: the upstream dropped it, or the client went away. */
  partial?: { reason: string }
}

const REDACTED = '[redacted]'
/** Field names that hold secrets (keys, tokens, passwords, credentials, authorization). */
const SECRET_FIELD = /(api[-_]?key|token|secret|passw(or)?d|credential|authorization|cookie)/i

/** Blanks what must never be written: secret-looking fields, and every known secret wherever it appears. */
export function scrub(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return secrets.reduce((text, secret) => (secret === '' ? text : text.split(secret).join(REDACTED)), value)
  if (Array.isArray(value)) return value.map((v) => scrub(v, secrets))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, SECRET_FIELD.test(key) && v !== null && v !== '' ? REDACTED : scrub(v, secrets)]))
  }
  return value
}

/** A body's text as JSON when it parses, else the text itself (undefined when there is none). */
export function bodyValue(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/**
 * Reads an event stream as it arrives (`push` each piece of text), handing out each complete event
 * with the time it ended; `rest` is what has not ended yet (a stream cut mid-event).
 */
export class EventStreamReader {
  #buffer = ''
  readonly #started: number
  readonly #now: () => number
  readonly events: CapturedEvent[] = []

  constructor(now: () => number) {
    this.#now = now
    this.#started = now()
  }

  push(text: string): void {
    this.#buffer += text.replace(/\r\n?/g, '\n')
    for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
      const block = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 2)
      const event = this.#parse(block)
      if (event) this.events.push(event)
    }
  }

  /** Text of an event that had not ended when the stream stopped. */
  get rest(): string {
    return this.#buffer
  }

  #parse(block: string): CapturedEvent | undefined {
    let event = 'message'
    let id: string | undefined
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
      else if (field === 'id') id = value
    }
    // A block of comments only (a heartbeat) is no event.
    if (data.length === 0 && event === 'message') return undefined
    return { event, data: bodyValue(data.join('\n')) ?? null, ...(id === undefined ? {} : { id }), at_ms: this.#now() - this.#started }
  }
}
