// The wire of a server-sent event stream, written on a raw Node response that Fastify has handed
// over (a hijacked reply). Each event is `event:`, exactly one `data:` line of compact JSON, and
// optionally `id:`, then a blank line. The writer honours backpressure, sends heartbeat comments on
// an unref'd timer, and notices a client that goes away; it never throws at its caller.

import type { ServerResponse } from 'node:http'
import { once, setMaxListeners } from 'node:events'

export interface SseEvent {
  id?: string
  event: string
  data: unknown
  /** `data` as JSON (`JSON.stringify(data ?? null)`), when it is at hand already (an event read from a log). */
  json?: string
}

/** One event's bytes. JSON.stringify never emits a newline, so the data is always one line. */
export function frame(event: SseEvent): string {
  const id = event.id === undefined ? '' : `id: ${event.id}\n`
  return `event: ${event.event}\ndata: ${event.json ?? JSON.stringify(event.data ?? null)}\n${id}\n`
}

export const HEARTBEAT = ': heartbeat\n\n'

export class SseWriter {
  readonly #raw: ServerResponse
  readonly #controller = new AbortController()
  #timer: NodeJS.Timeout | undefined
  #draining = false
  #clientLeft = false
  #dropped = false
  /** Whether the response's head has left (with the first write, or alone). */
  #headSent = false
  readonly #durable: (() => Promise<void> | null) | undefined

  /**
   * `durable`: null when what the stream reports is committed, else a promise of that commit: an
   * event leaves only once what it reports is on disk (see Services.durable). `headWithFirstEvent`:
   * the head waits for the first events of this turn of the event loop (run streams). Other streams
   * send it at once: with the session protocol's SSE streams waiting too, the current useStream
   * missed a subgraph's last message in 2 of 4 runs of its browser test under load (0 of 4 before).
   */
  constructor(raw: ServerResponse, options: { heartbeatMs: number; headers: Record<string, string | number | string[]>; durable?: () => Promise<void> | null; headWithFirstEvent?: boolean }) {
    this.#raw = raw
    this.#durable = options.durable
    raw.writeHead(200, {
      ...options.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    })
    if (options.headWithFirstEvent) {
      // The head leaves with the first event when that is written in this turn of the event loop
      // (one write to the socket instead of two: a run's metadata event is); else at the turn's end.
      // (`raw.headersSent` is true from writeHead on, sent or not: the writer keeps its own flag.)
      setImmediate(() => {
        if (!this.#headSent && this.open) this.#sendHead()
      })
    } else this.#sendHead()
    raw.once('close', () => {
      // 'close' also follows a normal end; only a close before the end means the client left.
      if (!raw.writableFinished) this.#clientLeft = true
      this.#stop()
    })
    if (options.heartbeatMs > 0) {
      this.#timer = setInterval(() => {
        if (!this.#draining && this.open) this.#write(HEARTBEAT)
      }, options.heartbeatMs).unref()
    }
  }

  /** Aborted when the client goes away (or the stream is closed). */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Whether the client went away before the stream ended. */
  get clientLeft(): boolean {
    return this.#clientLeft
  }

  get open(): boolean {
    return !this.#controller.signal.aborted && !this.#raw.writableEnded && !this.#raw.destroyed
  }

  /** Writes one event, waiting for the socket to drain when it is full. False once the client is gone. */
  async send(event: SseEvent): Promise<boolean> {
    return this.sendFrame(frame(event))
  }

  /**
   * Writes one event already in its wire form at once when nothing stands in the way (true, or
   * false once the client is gone); else the promise `sendFrame` gives (waiting for a commit or a
   * full socket to drain). For a caller that writes to many streams in one turn: no promise per event.
   */
  sendFrameNow(text: string): boolean | Promise<boolean> {
    if (this.#durable?.()) return this.sendFrame(text)
    if (!this.open) return false
    if (this.#write(text)) return true
    return this.#drain()
  }

  /** Writes one event already in its wire form (see `send`). */
  async sendFrame(text: string): Promise<boolean> {
    const committed = this.#durable?.()
    if (committed) {
      try {
        await committed
      } catch {
        // What the event reports was not committed (the disk failed): the stream cannot go on truthfully.
        this.destroy()
        return false
      }
    }
    if (!this.open) return false
    if (this.#write(text)) return true
    return this.#drain()
  }

  #sendHead(): void {
    this.#headSent = true
    this.#raw.flushHeaders()
  }

  /**
   * Writes and sends at once. Node corks the socket for a chunked write and uncorks it on the next
   * tick, which comes only once the microtask queue is empty: events a run emits in one long chain
   * of promises would all leave together at its end. Uncorking here sends each as it is written.
   */
  #write(text: string): boolean {
    this.#headSent = true
    const ok = this.#raw.write(text)
    const socket = this.#raw.socket
    if (socket && socket.writableCorked > 0) socket.uncork()
    return ok
  }

  /** Waits for the socket to drain after a write that filled it: true once it has, false if the client left. */
  async #drain(): Promise<boolean> {
    this.#draining = true
    try {
      await once(this.#raw, 'drain', { signal: this.#controller.signal })
      return true
    } catch {
      return false
    } finally {
      this.#draining = false
    }
  }

  /**
   * Cuts the connection as a network failure would (an injected fault): what was written is flushed,
   * then the socket goes without the stream's proper end. The server sees a client that left.
   */
  drop(): void {
    this.#dropped = true
    this.#clientLeft = true
    if (!this.#headSent && !this.#raw.destroyed) this.#sendHead()
    const socket = this.#raw.socket as { destroySoon?: () => void } | null
    if (typeof socket?.destroySoon === 'function') socket.destroySoon()
    else this.#raw.destroy()
    this.#stop()
  }

  /** Cuts the connection at once, whatever is still buffered (shutdown, for a client that stopped reading). */
  destroy(): void {
    this.#raw.destroy()
    this.#stop()
  }

  /** Ends the stream (idempotent); a dropped stream stays cut. */
  close(): void {
    if (!this.#dropped && !this.#raw.writableEnded && !this.#raw.destroyed) this.#raw.end()
    this.#stop()
  }

  #stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
    if (!this.#controller.signal.aborted) this.#controller.abort(new Error('stream closed'))
  }
}

/**
 * The event streams a server has open, so that shutdown can end them: streams whose runs were
 * stopped end by themselves once their last events are written; one whose client stopped reading
 * would wait for it forever, so after a grace period what is still open is cut.
 */
export class OpenStreams {
  readonly #writers = new Set<SseWriter>()
  readonly #closing = new AbortController()
  #settled: (() => void) | undefined

  constructor() {
    // Every stream that waits for more (a thread's next run) listens while it waits.
    setMaxListeners(0, this.#closing.signal)
  }

  /**
   * Aborted when shutdown begins: a stream that would wait for more (a thread's join stream
   * between runs) ends instead of holding shutdown for the grace period.
   */
  get closing(): AbortSignal {
    return this.#closing.signal
  }

  track(writer: SseWriter): void {
    this.#writers.add(writer)
    writer.signal.addEventListener('abort', () => {
      this.#writers.delete(writer)
      if (this.#writers.size === 0) this.#settled?.()
    }, { once: true })
  }

  get size(): number {
    return this.#writers.size
  }

  /** Resolves once every open stream has ended, or after `graceMs` (real time) by cutting the rest. */
  async close(graceMs: number): Promise<void> {
    this.#closing.abort(new Error('shutting down'))
    if (this.#writers.size === 0) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs)
      this.#settled = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    this.#settled = undefined
    for (const writer of [...this.#writers]) writer.destroy()
  }
}
