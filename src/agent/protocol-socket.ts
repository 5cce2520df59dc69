// One WebSocket on a thread (`GET /threads/{id}/stream/events` upgraded): commands arrive as JSON
// frames and are answered on the socket; subscriptions are in-band, and an event goes out once for
// each subscription it matches. The socket reads the thread's log from where it was opened, so the
// events it sends are in `seq` order; what it sends stops when it closes, nothing else does — the
// run goes on and its events stay in the log for the next socket or SSE stream.
//
// As on the real server: a subscribe before the thread's first run is answered when that run
// starts; a subscribe replays the current run's events; when a new run starts, every subscription
// is announced again under its command id with a fresh subscription id.

import type { ThreadEventRow } from '../store/thread-events.js'
import type {
  CommandContext, CurrentRun, ProtocolAnswer, ProtocolCommand, ProtocolCommands, SubscribeResult, Subscriptions,
} from './protocol-commands.js'
import { type EventFilter, LogCursor, matches, type ThreadLog } from './thread-log.js'

interface Subscription {
  /** The command that made it (a re-announcement answers under it again). */
  commandId: number
  /** Its current id, and the ids earlier runs gave it (any of them unsubscribes it). */
  ids: string[]
  filter: EventFilter
}

export interface SocketSink {
  /**
   * Sends a frame, in order after those before it. `committed`: what the frame reports is
   * committed (null) or will be once it resolves; left out, the frame waits for whatever is being
   * written (a command's answer acknowledges its writes).
   */
  send(text: string, committed?: Promise<void> | null): void
  /** Bytes queued and not yet written to the client. */
  readonly bufferedAmount: number
  /** Ends the connection (a client that stopped reading). */
  terminate(): void
}

/**
 * How long the replays of subscribes wait for more subscribes (milliseconds of real time: this is
 * how a socket's frames arrive, not the run's clock). A frame that came in a later read than the
 * subscribe before it had its replay sent after the first one's, which had ended the run: the
 * client had paused its subscriptions by then (see #flushReplay).
 */
const REPLAY_GATHER_MS = 2

/** A client that lets this much pile up unread is cut off rather than buffered without bound. */
const MAX_BUFFERED = 16 * 1024 * 1024

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isRootRunning = (row: ThreadEventRow) => row.method === 'lifecycle' && row.namespace === '[]' && row.data.startsWith('{"event":"running"')

export class ProtocolSocket {
  readonly #commands: ProtocolCommands
  readonly #log: ThreadLog
  readonly #context: CommandContext
  readonly #sink: SocketSink
  readonly #active: Subscription[] = []
  /** Subscribes heard before the thread had a run: answered when its first run starts. */
  readonly #parked: Subscription[] = []
  /** The last seq this socket has handled. */
  /** Where this socket is in the thread's log: what it has passed on (or skipped) so far. */
  readonly #cursor: LogCursor
  /** A wake is queued to send what the log holds next. */
  #waking = false
  readonly #unwatch: () => void
  #closed = false
  /** Events subscribes replay (by seq, with how many subscriptions asked), sent after their answers. */
  readonly #replay = new Map<number, { row: ThreadEventRow; times: number }>()
  #flushing = false

  constructor(o: { commands: ProtocolCommands; log: ThreadLog; context: CommandContext; sink: SocketSink }) {
    this.#commands = o.commands
    this.#log = o.log
    this.#context = o.context
    this.#sink = o.sink
    this.#cursor = new LogCursor(o.log, o.context.scope, o.context.threadId, o.log.lastSeq(o.context.scope, o.context.threadId))
    this.#unwatch = o.log.watch(o.context.scope, o.context.threadId, () => this.#wake())
  }

  /** One frame from the client. Never throws: whatever it holds gets an answer. */
  receive(text: string): void {
    if (this.#closed) return
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return this.#reply({ type: 'error', id: null, error: 'invalid_argument', message: 'Protocol commands must be valid JSON.' })
    }
    // The real server checks only that the id is a number (1.5 and -2 are answered under that id).
    if (!isObject(parsed) || typeof parsed.id !== 'number' || typeof parsed.method !== 'string') {
      return this.#reply({ type: 'error', id: null, error: 'invalid_argument', message: 'Protocol commands must include an integer id and string method.' })
    }
    const command: ProtocolCommand = { id: parsed.id, method: parsed.method, params: isObject(parsed.params) ? parsed.params : {} }
    let answer: ProtocolAnswer | null
    try {
      answer = this.#commands.execute(this.#context, command, this.#subscriptions)
    } catch (error) {
      // A thread or assistant that does not exist (a plain-text 404 over HTTP).
      answer = { type: 'error', id: command.id, error: 'invalid_argument', message: error instanceof Error ? error.message : String(error) }
    }
    // A run the command started has logged its first events: they go out before the answer, as on the real server.
    this.#pump()
    if (answer) this.#reply(answer)
    if (this.#replay.size > 0 && !this.#flushing) {
      this.#flushing = true
      // Subscribes a client sends back to back can reach hangar in separate reads of the socket: the
      // replays wait REPLAY_GATHER_MS, then for the reads after it, so that the later ones join.
      setTimeout(() => setImmediate(() => this.#flushReplay()), REPLAY_GATHER_MS).unref()
    }
  }

  /**
   * Sends the replays of the subscribes heard together (a client sends its subscribes back to back)
   * as one run of events in seq order, each as many times as subscriptions asked for it: a client
   * then sees the replayed run end after every replayed event, as it would live.
   */
  #flushReplay(): void {
    this.#flushing = false
    const rows = [...this.#replay.values()].sort((a, b) => a.row.seq - b.row.seq)
    this.#replay.clear()
    for (const { row, times } of rows) {
      const text = this.#log.envelope(row)
      for (let i = 0; i < times; i++) this.#send(text)
    }
  }

  /** Stops following the thread (the socket closed). */
  close(): void {
    this.#closed = true
    this.#unwatch()
  }

  readonly #subscriptions: Subscriptions = {
    subscribe: (command, filter, current) => this.#subscribe(command, filter, current),
    unsubscribe: (id) => {
      const index = this.#active.findIndex((s) => s.ids.includes(id))
      if (index >= 0) this.#active.splice(index, 1)
      return index >= 0
    },
  }

  /** A subscribe before the thread's first run waits for it; otherwise the current run's events the socket has passed are replayed. */
  #subscribe(command: ProtocolCommand, filter: EventFilter, current: CurrentRun | null): SubscribeResult | null {
    const subscription: Subscription = { commandId: command.id, ids: [this.#commands.subscriptionId()], filter }
    if (current === null) {
      this.#parked.push(subscription)
      return null
    }
    // Later events come from the pump, which checks every active subscription.
    const replay = this.#log.ofRun(current.thread, current.runId).filter((row) => row.seq <= this.#cursor.seq && matches(filter, row.method, this.#log.namespaceOf(row)))
    this.#active.push(subscription)
    for (const row of replay) {
      const queued = this.#replay.get(row.seq)
      if (queued) queued.times++
      else this.#replay.set(row.seq, { row, times: 1 })
    }
    return { subscription_id: subscription.ids[0], replayed_events: replay.length }
  }

  /** Sends what the thread logged since the cursor, each event once per subscription it matches. */
  #pump(): void {
    for (let row = this.#cursor.next(); row && !this.#closed; row = this.#cursor.next()) this.#deliver(row)
  }

  /**
   * An append woke this socket: it sends the next event, then lets the other sockets the append
   * woke send theirs before it sends the one after (a microtask later). A thousand sockets on one
   * thread then all hear of an event before any hears of the next, as they would from a broadcast,
   * and read the log together (see LogCursor).
   */
  #wake(): void {
    if (this.#closed || this.#waking) return
    const waiting = this.#cursor.waitForCommit(() => {
      this.#waking = false
      this.#wake()
    })
    if (waiting) {
      this.#waking = true
      return
    }
    const row = this.#cursor.next()
    if (!row) return
    this.#deliver(row)
    this.#waking = true
    queueMicrotask(() => {
      this.#waking = false
      this.#wake()
    })
  }

  #deliver(row: ThreadEventRow): void {
    if (isRootRunning(row)) this.#runStarted(row.seq - 1)
    const namespace = this.#log.namespaceOf(row)
    const text = this.#log.envelope(row)
    const committed = this.#log.committed(this.#context.scope, this.#context.threadId, row)
    for (const subscription of this.#active) if (matches(subscription.filter, row.method, namespace)) this.#send(text, committed)
  }

  /** A run started: parked subscribes get their answer; the others are announced again under a new id. */
  #runStarted(appliedThrough: number): void {
    for (const subscription of this.#active) {
      subscription.ids.unshift(this.#commands.subscriptionId())
      this.#reply(this.#announce(subscription, 0, appliedThrough))
    }
    for (const subscription of this.#parked.splice(0)) {
      this.#active.push(subscription)
      this.#reply(this.#announce(subscription, 0, appliedThrough))
    }
  }

  #announce(subscription: Subscription, replayed: number, appliedThrough: number): ProtocolAnswer {
    return {
      type: 'success',
      id: subscription.commandId,
      result: { subscription_id: subscription.ids[0], replayed_events: replayed },
      meta: { thread_id: this.#context.threadId, applied_through_seq: appliedThrough },
    }
  }

  #reply(answer: ProtocolAnswer): void {
    this.#send(JSON.stringify(answer))
  }

  #send(text: string, committed?: Promise<void> | null): void {
    if (this.#closed) return
    if (this.#sink.bufferedAmount > MAX_BUFFERED) {
      this.close()
      return this.#sink.terminate()
    }
    this.#sink.send(text, committed)
  }
}
