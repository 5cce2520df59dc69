// A thread's session-protocol log, live: runs append their protocol events to it, and streams
// read it from any `seq` and then follow it as it grows. A stream may follow a thread that does
// not exist yet (a client opens it before its first `run.start`): it waits until the thread's
// first event. Every event is in the log before it is announced, so announcements only wake
// readers, and a reader that falls behind holds one page, not the whole log.

import { EventEmitter } from 'node:events'
import type { Clock } from '../clock.js'
import type { ThreadEventRepository, ThreadEventRow } from '../store/thread-events.js'
import type { ThreadRepository } from '../store/threads.js'
import type { ProtocolEvent } from './types.js'

/** How many logged events a follower reads at once. */
const PAGE = 64

/** Which events a stream or subscription wants (the body of `/stream/events`, or `subscription.subscribe`). */
export interface EventFilter {
  channels: readonly string[]
  /** Namespace prefixes; absent: every namespace. */
  namespaces?: readonly (readonly string[])[]
  /** How many segments below a prefix are allowed; absent: any depth. Without namespaces it has no effect. */
  depth?: number
}

/** The channel a method is delivered on (`input.requested` comes with `input`). */
const channelOf = (method: string) => (method.startsWith('input.') ? 'input' : method)

/** Whether a logged event passes a filter: its channel is asked for and its namespace is under a prefix, within the depth. */
export function matches(filter: EventFilter, method: string, namespace: readonly string[]): boolean {
  const channel = channelOf(method)
  const wanted = filter.channels.some((c) => c === channel || (channel === 'custom' && c.startsWith('custom:')) || (c === 'custom' && channel.startsWith('custom:')))
  if (!wanted) return false
  if (!filter.namespaces) return true
  return filter.namespaces.some((prefix) =>
    prefix.length <= namespace.length &&
    prefix.every((segment, i) => segment === namespace[i]) &&
    (filter.depth === undefined || namespace.length - prefix.length <= filter.depth))
}

export interface ThreadLogOptions {
  events: ThreadEventRepository
  threads: ThreadRepository
  clock: Clock
  /**
   * Writes commit in groups (Services.durable): null when everything written is committed, else
   * the promise of the open group's commit; `onCommitted` hears of each group's end. Without them
   * every row counts as committed once written.
   */
  commits?: { durable: () => Promise<void> | null; onCommitted: (listener: () => void) => void }
}

export class ThreadLog {
  readonly #o: ThreadLogOptions
  /** One event per (scope, thread id) when something is appended to that thread's log. */
  readonly #appended = new EventEmitter()
  /**
   * The last page read of each followed thread, until the next append: the followers one append
   * wakes are all at the same place, so one read serves them all (and they share its rows, so what
   * is derived from a row is derived once: see namespaceOf, envelope).
   */
  readonly #pages = new Map<string, { since: number; rows: ThreadEventRow[] }>()
  /** What is derived from a row, once per row (the rows of a shared page reach every follower). */
  readonly #namespaces = new WeakMap<ThreadEventRow, string[]>()
  readonly #envelopes = new WeakMap<ThreadEventRow, string>()
  readonly #sseFrames = new WeakMap<ThreadEventRow, string>()

  /** Per thread, the first seq appended in the group of writes still open (cleared as each group ends). */
  readonly #uncommitted = new Map<string, number>()
  /** Followed threads appended to in the group of writes still open: their followers are woken once it ends. */
  readonly #wakeAtCommit = new Set<string>()

  constructor(options: ThreadLogOptions) {
    this.#o = options
    options.commits?.onCommitted(() => {
      this.#uncommitted.clear()
      if (this.#wakeAtCommit.size === 0) return
      const names = [...this.#wakeAtCommit]
      this.#wakeAtCommit.clear()
      queueMicrotask(() => {
        for (const name of names) this.#appended.emit(name)
      })
    })
    // Every open stream listens on its thread; many of them are normal, not a leak.
    this.#appended.setMaxListeners(0)
  }

  /** Logs a run's protocol event on its thread (stamped with the clock) and wakes the thread's followers; returns its seq. */
  append(scope: string, thread: { seq: number; thread_id: string }, runId: string | null, event: ProtocolEvent): number {
    const seq = this.#o.events.append(thread.seq, { runId, method: event.method, namespace: event.namespace, node: event.node, data: event.data, at: this.#o.clock.now() })
    // Followers hear of it once the caller's work is done: an append inside a transaction that
    // later rolls back must not have been sent.
    const name = key(scope, thread.thread_id)
    this.#pages.delete(name)
    const open = this.#o.commits?.durable() ?? null
    if (open && !this.#uncommitted.has(name)) this.#uncommitted.set(name, seq)
    // Nobody follows most threads: then there is no one to wake (a follower that comes later reads the log first).
    if (this.#appended.listenerCount(name) === 0) return seq
    // A row in an open group of writes is sent only once the group commits: its followers are woken
    // then, once, and read together what the run wrote meanwhile (one page), where waking them at
    // each append would have each of them check a hundred times and read alone.
    if (open) this.#wakeAtCommit.add(name)
    else queueMicrotask(() => this.#appended.emit(name))
    return seq
  }

  /** The highest seq of the thread's log (0 when it has none, or the thread does not exist). */
  lastSeq(scope: string, threadId: string): number {
    const thread = this.#o.threads.get(scope, threadId)
    return thread ? this.#o.events.lastSeq(thread.seq) : 0
  }

  /** The thread's events after `since`, oldest first, at most `limit` (none when the thread does not exist). */
  read(scope: string, threadId: string, since: number, limit = PAGE): ThreadEventRow[] {
    const thread = this.#o.threads.get(scope, threadId)
    return thread ? this.#o.events.after(thread.seq, since, limit) : []
  }

  /**
   * Calls `listener` whenever an event is appended to the thread's log (events appended in an open
   * group of writes: once, when it commits); returns the function that stops it.
   */
  watch(scope: string, threadId: string, listener: () => void): () => void {
    const name = key(scope, threadId)
    this.#appended.on(name, listener)
    return () => {
      this.#appended.off(name, listener)
      if (this.#appended.listenerCount(name) === 0) this.#pages.delete(name)
    }
  }

  /** The event as the protocol sends it (see `envelope`), made once per row a follower was given. */
  envelope(row: ThreadEventRow): string {
    let text = this.#envelopes.get(row)
    if (text === undefined) this.#envelopes.set(row, (text = envelope(row)))
    return text
  }

  /**
   * Null when the row is committed; else the promise of the commit that holds it. A follower sends
   * a row only once it is committed, and waits only for the group its row is in, not for whatever
   * the run writes after it.
   */
  committed(scope: string, threadId: string, row: ThreadEventRow): Promise<void> | null {
    return this.committedFrom(scope, threadId, row.seq)
  }

  /** As `committed`, for the row `seq` whether it is written yet or not (see LogCursor.waitForCommit). */
  committedFrom(scope: string, threadId: string, seq: number): Promise<void> | null {
    const first = this.#uncommitted.get(key(scope, threadId))
    return first === undefined || seq < first ? null : (this.#o.commits?.durable() ?? null)
  }

  /** The event as an SSE stream writes it (its method as the event name, its seq as the id), made once per row. */
  sseFrame(row: ThreadEventRow): string {
    let text = this.#sseFrames.get(row)
    if (text === undefined) this.#sseFrames.set(row, (text = `event: ${row.method}\ndata: ${this.envelope(row)}\nid: ${row.seq}\n\n`))
    return text
  }

  /** The row's namespace, parsed once per row. */
  namespaceOf(row: ThreadEventRow): string[] {
    let namespace = this.#namespaces.get(row)
    if (namespace === undefined) this.#namespaces.set(row, (namespace = JSON.parse(row.namespace) as string[]))
    return namespace
  }

  /** The thread's events after `since` as a follower reads them: from the page another follower just read, when it is the same. */
  page(scope: string, threadId: string, since: number): ThreadEventRow[] {
    const name = key(scope, threadId)
    const shared = this.#pages.get(name)
    if (shared?.since === since) return shared.rows
    const rows = this.read(scope, threadId, since)
    if (this.#appended.listenerCount(name) > 1) this.#pages.set(name, { since, rows })
    return rows
  }

  /** Every event one run of the thread logged, oldest first. */
  ofRun(thread: { seq: number }, runId: string): ThreadEventRow[] {
    return this.#o.events.ofRun(thread.seq, runId)
  }

  /** Listeners currently following threads (for tests that check nothing is left behind). */
  get followers(): number {
    return this.#appended.eventNames().reduce((n, name) => n + this.#appended.listenerCount(name), 0)
  }
}

const key = (scope: string, threadId: string) => `${scope}\u0000${threadId}`

/**
 * A follower's place in a thread's log: `next()` hands out the rows after it one at a time, reading
 * a page at a time (the page another follower at the same place just read, when there is one).
 * Followers woken by one append that each take one row per turn stay at the same place, so a
 * thousand of them read the log once per page, not once each.
 */
export class LogCursor {
  readonly #log: ThreadLog
  readonly #scope: string
  readonly #threadId: string
  #rows: ThreadEventRow[] = []
  #at = 0
  /** The seq of the last row handed out (or where the follower started). */
  seq: number

  constructor(log: ThreadLog, scope: string, threadId: string, since: number) {
    this.#log = log
    this.#scope = scope
    this.#threadId = threadId
    this.seq = since
  }

  /**
   * When the row after `seq` is in a group of writes still open: calls `then` once that group has
   * ended, committed or lost (the log then holds what it will hold), and answers true; else false.
   * A follower woken while a run is still writing waits so before it reads: the run's appends would
   * otherwise part the followers one append wakes (the page one read is dropped at the next
   * append), and each would read the log alone. After the commit they read what the run wrote in
   * one page, together.
   */
  waitForCommit(then: () => void): boolean {
    const pending = this.#log.committedFrom(this.#scope, this.#threadId, this.seq + 1)
    if (!pending) return false
    pending.then(then, then)
    return true
  }

  /** The next row after `seq` (which moves to it), or undefined when the log holds nothing more yet. */
  next(): ThreadEventRow | undefined {
    for (;;) {
      while (this.#at < this.#rows.length) {
        const row = this.#rows[this.#at++]
        if (row.seq > this.seq) {
          this.seq = row.seq
          return row
        }
      }
      this.#rows = this.#log.page(this.#scope, this.#threadId, this.seq)
      this.#at = 0
      if (this.#rows.length === 0) return undefined
    }
  }
}

/** The event as the protocol sends it, as JSON text (the stored JSON is spliced in, not parsed again). */
function envelope(row: ThreadEventRow): string {
  const node = row.node === null ? '' : `,"node":${JSON.stringify(row.node)}`
  const params = `{"namespace":${row.namespace},"timestamp":${row.at}${node},"data":${row.data}}`
  return `{"type":"event","event_id":"${row.seq}","seq":${row.seq},"method":${JSON.stringify(row.method)},"params":${params}}`
}
