// Runs of the agent server: created under a multitask strategy, executed one at a time per thread
// by the graph engine, their events appended to the run's log and handed live to whoever streams
// them; cancelled, joined, and finished with the thread's status set. A run does not depend on any
// connection: a client that goes away only stops receiving (unless it asked to cancel on disconnect).

import { EventEmitter } from 'node:events'
import type { Clock } from '../clock.js'
import { ThreadBusy } from '../domain/errors.js'
import type { SseEvent } from '../sse/writer.js'
import type { Assistant } from '../store/assistants.js'
import type { Run, RunKwargs, RunRepository, RunStatus } from '../store/runs.js'
import type { Thread, ThreadKey, ThreadRepository } from '../store/threads.js'
import { rootLifecycle } from './protocol-events.js'
import type { ThreadLog } from './thread-log.js'
import type { Breakpoints, EngineOutput, GraphEngine, PausedAt, ProtocolEvent, RunStore, State } from './types.js'
import type { RunEnd } from './webhooks.js'

export type CancelAction = 'interrupt' | 'rollback'
export type MultitaskStrategy = 'reject' | 'interrupt' | 'rollback' | 'enqueue'

/** How many logged events a stream reader holds at once. */
const EVENT_PAGE = 64

interface LiveRun {
  run: Run
  controller: AbortController
  cancelAction: CancelAction
  /** 'event' (its log grew) and 'end'. */
  events: EventEmitter
  done: Promise<void>
  /** What the run ended with (kept because a temporary thread is gone once it ends). */
  result?: RunResult
  /** Whether it started executing (a pending run that is cancelled has sent nothing). */
  started: boolean
  /** When it started executing, on the clock. */
  startedAt: number
  /** The base URL the client reached hangar at (for the URLs the run hands out). */
  publicBase: string
  /** The graph it runs (the protocol's root lifecycle names it). */
  graphId: string
  /**
   * The last event of a run that was rolled back: its log is deleted with it, so streams still
   * following it get this from here.
   */
  farewell?: SseEvent
  /**
   * Everything a run on a temporary thread logged, read just before the thread (and its log) is
   * deleted at the run's end: its streams, which read only what is committed, read the rest here.
   */
  kept?: SseEvent[]
  /** How many events it appended to its log (or tried to, in a transaction that may have rolled back). */
  appended: number
  /**
   * The page of its log its streams read last: streams at the same place in the log (a thousand
   * browser tabs joining one run) share one read, until the run appends again.
   */
  page?: { after: number; appended: number; events: SseEvent[] }
  /** The id of its first event appended in the group of writes still open (its streams wait for that commit). */
  uncommittedFrom?: number
}

/** What `/join` and `/runs/wait` answer: the final values, or the error as `__error__`. */
export type RunResult = State | { __error__: unknown }

export interface RunExecutorOptions {
  runs: RunRepository
  threads: ThreadRepository
  engine: GraphEngine
  clock: Clock
  /** Each thread's session-protocol log: runs on a thread (not temporary ones) log their protocol events there. */
  threadLog: ThreadLog
  /** Send a trailing `end` event (HANGAR_SSE_END_EVENT). */
  endEvent: boolean
  /**
   * Extra events after a successful run's output (the `feedback` event). Called inside the
   * transaction that records the run's completion, so whatever it writes commits with it.
   */
  onSuccess?: (run: Run, publicBase: string) => { event: string; data: unknown }[]
  /** The store of each agent-server scope, as a run's store steps reach it. */
  store?: (scope: string) => RunStore
  /** Runs `fn` in one database transaction. */
  transaction: <T>(fn: () => T) => T
  /**
   * Writes commit in groups (Services.durable), as for the thread log: a run's streams are woken,
   * and read its log, once the group holding its new events commits. Without it every event counts
   * as committed once written.
   */
  commits?: { durable: () => Promise<void> | null; onCommitted: (listener: () => void) => void }
  log: { error: (obj: object, msg: string) => void }
  /** Hears of every status a run takes and every event appended to its log (the inspector's live view). */
  observe?: (change: RunChange) => void
  /**
   * Hears of each run that started and then ended (succeeded, failed or was interrupted; not one
   * rolled back, which is gone): its webhook is called from here. Called before a temporary
   * thread is deleted; what it throws is logged, never the run's concern.
   */
  onEnd?: (end: RunEnd) => void
}

/** A run changed status (`status`), or an event was appended to its log (`event`, `event_id`). */
export interface RunChange {
  run_id: string
  thread_id: string
  scope: string
  status: RunStatus | null
  event: string | null
  event_id: string | null
}

export interface NewRun {
  assistant: Assistant
  kwargs: RunKwargs
  metadata: Record<string, unknown>
  strategy: MultitaskStrategy
  /** See LiveRun.publicBase. */
  publicBase: string
}

export class RunExecutor {
  readonly #live = new Map<number, LiveRun>()
  /** The tail of each thread's queue: runs of a thread execute one after another. */
  readonly #queues = new Map<number, Promise<void>>()
  readonly #o: RunExecutorOptions
  /** Live runs that appended events in the group of writes still open. */
  readonly #uncommitted = new Set<LiveRun>()

  constructor(options: RunExecutorOptions) {
    this.#o = options
    options.commits?.onCommitted(() => {
      if (this.#uncommitted.size === 0) return
      const lives = [...this.#uncommitted]
      this.#uncommitted.clear()
      for (const live of lives) live.uncommittedFrom = undefined
      queueMicrotask(() => {
        for (const live of lives) live.events.emit('event')
      })
    })
  }

  /**
   * Creates a run on a thread under its multitask strategy (reject: 422 when the thread is busy;
   * interrupt/rollback: the active runs are cancelled that way; enqueue: it waits its turn), and
   * schedules it.
   */
  create(scope: string, thread: Thread, runId: string, input: NewRun): Run {
    const { runs } = this.#o
    const active = runs.active(thread.seq)
    if (active.length > 0 && input.strategy === 'reject') throw new ThreadBusy()
    const run = runs.create({
      scope,
      runId,
      threadSeq: thread.seq,
      threadId: thread.thread_id,
      assistantId: input.assistant.assistant_id,
      metadata: input.metadata,
      kwargs: input.kwargs,
      strategy: input.strategy,
    })
    this.#o.threads.setStatus(thread.seq, 'busy')
    // The protocol announces a run as soon as it exists, queued or not (the real server's `running`
    // comes before its answer to `run.start`).
    if (!run.kwargs.temporary) this.#o.threadLog.append(scope, thread, run.run_id, rootLifecycle('running', input.assistant.graph_id))
    if (input.strategy === 'interrupt' || input.strategy === 'rollback') {
      for (const other of active) this.cancel(other, input.strategy)
    }
    this.#schedule(run, input.assistant, input.publicBase)
    this.#observe(run, 'pending')
    this.#created.emit(String(thread.seq))
    return run
  }

  /** Whether the run is still pending or running in this process. */
  isLive(run: Run): boolean {
    return this.#live.has(run.seq)
  }

  /** Stops a run: `interrupt` keeps what it did; `rollback` removes the run and its checkpoints. */
  cancel(run: Run, action: CancelAction): void {
    const live = this.#live.get(run.seq)
    if (!live) return
    live.cancelAction = action
    live.controller.abort(new Error(`run ${action === 'rollback' ? 'rolled back' : 'interrupted'}`))
  }

  /** Cancels every run of a thread (before the thread is deleted) and waits for them to stop. */
  async cancelThread(thread: Thread): Promise<void> {
    const live = [...this.#live.values()].filter((l) => l.run.thread_seq === thread.seq)
    for (const l of live) this.cancel(l.run, 'interrupt')
    await Promise.all(live.map((l) => l.done))
  }

  /** Waits until the run is no longer pending or running; answers what it ended with. */
  async join(run: Run): Promise<RunResult> {
    const live = this.#live.get(run.seq)
    if (!live) return runResult(this.#o.runs, this.#o.threads, run)
    await live.done
    return live.result ?? runResult(this.#o.runs, this.#o.threads, run)
  }

  /**
   * The run's events from after `afterIdx` (-1: all), a page at a time as read from the log, then
   * followed live until the run ends; ends early when `signal` aborts. Every event is in the log
   * before it is announced, so announcements only wake the reader: a reader that falls behind (a
   * stalled client) holds one page, not the rest of the run's output.
   */
  async *pages(run: Run, afterIdx: number, signal: AbortSignal): AsyncGenerator<SseEvent[]> {
    const live = this.#live.get(run.seq)
    let ended = !live
    // Whether the log may hold events this reader has not read yet.
    let unread = true
    let wake: (() => void) | undefined
    const onEvent = () => {
      unread = true
      wake?.()
    }
    const onEnd = () => {
      ended = true
      unread = true
      wake?.()
    }
    const onAbort = () => wake?.()
    live?.events.on('event', onEvent)
    live?.events.once('end', onEnd)
    signal.addEventListener('abort', onAbort)
    try {
      let last = afterIdx
      while (!signal.aborted) {
        if (!unread) {
          if (ended) return
          await new Promise<void>((resolve) => (wake = resolve))
          wake = undefined
          continue
        }
        // The run's next event is in a group of writes still open: read once it has committed.
        const open = live?.uncommittedFrom !== undefined && live.uncommittedFrom <= last + 1 ? this.#o.commits?.durable() : null
        if (open) {
          await open.catch(() => {})
          continue
        }
        unread = false
        const endedBeforeRead = ended
        // While the run is live its streams share reads; once it is over its log may go (a reset, its thread deleted).
        let page = live !== undefined && this.#live.get(run.seq) === live ? this.#page(live, last)
          : live?.kept ? keptAfter(live.kept, last) : this.#o.runs.eventsAfter(run, last, EVENT_PAGE)
        // The connection reads its own writes: a page may run into a group of writes the run opened
        // since this reader was woken. What is in it is handed out once it commits.
        const cut = live?.uncommittedFrom
        if (cut !== undefined && page.length > 0 && Number(page[page.length - 1].id) >= cut) {
          page = page.filter((event) => Number(event.id) < cut)
          unread = true
        }
        if (page.length > 0) {
          yield page
          last = Number(page[page.length - 1].id)
          if (signal.aborted) return
        }
        if (page.length === EVENT_PAGE) unread = true
        else if (endedBeforeRead) {
          if (live?.farewell && Number(live.farewell.id) > last) yield [live.farewell]
          return
        }
      }
    } finally {
      live?.events.off('event', onEvent)
      live?.events.off('end', onEnd)
      signal.removeEventListener('abort', onAbort)
    }
  }

  /** The events `pages` hands out, one at a time. */
  async *events(run: Run, afterIdx: number, signal: AbortSignal): AsyncGenerator<SseEvent> {
    for await (const page of this.pages(run, afterIdx, signal)) {
      for (const event of page) {
        yield event
        if (signal.aborted) return
      }
    }
  }

  /**
   * Runs a previous process left pending or running (it stopped without finishing them) end
   * `interrupted`, as a cancel would leave them; their threads become idle again.
   */
  recover(): void {
    for (const run of this.#o.runs.allActive()) {
      this.#o.runs.setStatus(run, 'interrupted')
      this.#o.threads.setStatus(run.thread_seq, 'idle')
    }
  }

  /**
   * Stops the live runs (all of them at shutdown, or those of some agent servers' scopes when their
   * data is about to go): they end `interrupted`, as a cancel would leave them.
   */
  async stopAll(scopes?: ReadonlySet<string>): Promise<void> {
    const live = [...this.#live.values()].filter((l) => scopes === undefined || scopes.has(l.run.scope))
    for (const l of live) this.cancel(l.run, 'interrupt')
    await Promise.all(live.map((l) => l.done))
  }

  #schedule(run: Run, assistant: Assistant, publicBase: string): void {
    const live: LiveRun = {
      run,
      publicBase,
      graphId: assistant.graph_id,
      controller: new AbortController(),
      cancelAction: 'interrupt',
      started: false,
      startedAt: 0,
      events: new EventEmitter(),
      done: Promise.resolve(),
      appended: 0,
    }
    live.events.setMaxListeners(0)
    this.#live.set(run.seq, live)
    const previous = this.#queues.get(run.thread_seq) ?? Promise.resolve()
    live.done = previous.then(() => this.#execute(live, assistant)).finally(() => {
      this.#live.delete(run.seq)
      live.events.emit('end')
      if (this.#queues.get(run.thread_seq) === live.done) this.#queues.delete(run.thread_seq)
    })
    this.#queues.set(run.thread_seq, live.done)
  }

  #emit(live: LiveRun, event: string, data: unknown): void {
    this.#announce(live, this.#log(live, event, data))
  }

  /** Appends an event to the run's log (streams hear of it when it is announced). */
  #log(live: LiveRun, event: string, data: unknown): SseEvent {
    live.appended++
    const logged = this.#o.runs.append(live.run, event, data)
    if (live.uncommittedFrom === undefined && this.#o.commits?.durable()) {
      live.uncommittedFrom = Number(logged.id)
      this.#uncommitted.add(live)
    }
    return logged
  }

  /** The events of the run's log after `after` (a page of them), read once for all its streams at that place. */
  #page(live: LiveRun, after: number): SseEvent[] {
    const kept = live.page
    if (kept !== undefined && kept.after === after && kept.appended === live.appended) return kept.events
    // The run's log holds what this run appended and nothing else (idx 0, 1, …): a reader past the
    // last of them has nothing to read (a stream that attaches before the run's first event).
    if (after >= live.appended - 1) return []
    const events = this.#o.runs.eventsAfter(live.run, after, EVENT_PAGE)
    live.page = { after, appended: live.appended, events }
    return events
  }

  /** Logs a protocol event of the run on its thread (runs on temporary threads log none). */
  #protocol(live: LiveRun, event: ProtocolEvent): void {
    const { run } = live
    if (!run.kwargs.temporary) this.#o.threadLog.append(run.scope, { seq: run.thread_seq, thread_id: run.thread_id }, run.run_id, event)
  }

  /** Hands a logged event to the run's streams (and observer). */
  #announce(live: LiveRun, event: SseEvent): void {
    // An event in an open group of writes is sent once the group commits: its streams are woken
    // then (see the constructor), once, and read what the run wrote meanwhile in one page.
    if (live.uncommittedFrom === undefined) live.events.emit('event')
    this.#observe(live.run, null, event)
  }

  #observe(run: Run, status: RunStatus | null, event?: SseEvent): void {
    this.#o.observe?.({ run_id: run.run_id, thread_id: run.thread_id, scope: run.scope, status, event: event?.event ?? null, event_id: event?.id ?? null })
  }

  async #execute(live: LiveRun, assistant: Assistant): Promise<void> {
    const { runs, threads, engine, clock } = this.#o
    const { run, controller } = live
    const signal = controller.signal
    let outcome: Extract<EngineOutput, { kind: 'done' }> | undefined
    try {
      if (run.kwargs.after_seconds) await clock.until(Date.parse(run.created_at) + run.kwargs.after_seconds * 1000, signal)
      if (signal.aborted) return this.#cancelled(live)
      const thread = threads.key(run.thread_seq)!
      runs.setStatus(run, 'running')
      threads.setStatus(thread.seq, 'busy')
      this.#observe(run, 'running')
      live.started = true
      live.startedAt = clock.now()
      this.#emit(live, 'metadata', { run_id: run.run_id, attempt: 1 })

      // A run that names a checkpoint starts there (a fork); one that names a checkpoint the thread
      // does not have starts from nothing, as LangGraph's does.
      const named = namedCheckpoint(run.kwargs)
      const start = (named === null ? threads.latestCheckpoint(thread) : threads.checkpoint(thread, named)) ?? null
      const ids = { run_id: run.run_id, thread_id: thread.thread_id, assistant_id: assistant.assistant_id, graph_id: assistant.graph_id }
      const config = { ...mergeConfig(assistant.config, run.kwargs.config, ids), metadata: run.metadata }
      for await (const output of engine.run({
        graphId: assistant.graph_id,
        start,
        forked: named !== null,
        // The run's own; an assistant's `config.interrupt_before` is kept but ignored, as on the real server.
        interruptBefore: breakpoints(run.kwargs.interrupt_before),
        interruptAfter: breakpoints(run.kwargs.interrupt_after),
        input: run.kwargs.input,
        command: (run.kwargs.command as never) ?? null,
        config,
        context: run.kwargs.context,
        streamModes: run.kwargs.stream_mode,
        protocol: !run.kwargs.temporary,
        protocolRun: run.kwargs.__protocol_stream_run === true,
        subgraphs: run.kwargs.subgraphs,
        subgraphStart: (ns) => threads.latestCheckpoint(thread, ns) ?? null,
        ...(this.#o.store ? { store: this.#o.store(run.scope) } : {}),
        ids,
        clock,
        signal,
      })) {
        if (signal.aborted) break
        if (output.kind === 'emits') {
          for (const item of output.list) {
            if (signal.aborted) break
            if ('protocol' in item) this.#protocol(live, item.protocol)
            else this.#emit(live, item.event, item.data)
          }
        } else if (output.kind === 'emit') this.#emit(live, output.event, output.data)
        else if (output.kind === 'protocol') this.#protocol(live, output.event)
        else if (output.kind === 'checkpoint') threads.addCheckpoint(thread, output.checkpoint, run.run_id)
        else if (output.kind === 'amend' && output.tasksOnly) threads.settleTasks(thread, output.checkpoint)
        else if (output.kind === 'amend') threads.amendCheckpoint(thread, output.checkpoint, output.pausedAt)
        else outcome = output
      }
    } catch (error) {
      if (!signal.aborted) {
        this.#o.log.error({ err: error, run_id: run.run_id }, 'the graph engine failed')
        outcome = { kind: 'done', status: 'error', values: {}, pausedAt: null, error: { error: 'InternalError', message: String((error as Error).message ?? error) } }
        this.#emit(live, 'error', outcome.error)
      }
    }
    if (signal.aborted || !outcome) return this.#cancelled(live)
    this.#finish(live, outcome)
  }

  #finish(live: LiveRun, outcome: Extract<EngineOutput, { kind: 'done' }>): void {
    const { runs, threads } = this.#o
    const { run } = live
    const thread = threads.key(run.thread_seq)
    if (!thread) return
    live.result = outcome.status === 'error' ? { __error__: outcome.error } : outcome.values
    // The run's completion is one transaction (tokens, the feedback event, statuses); streams
    // hear of its last events only once it committed.
    const finalEvents = this.#o.transaction(() => {
      const logged = []
      if (outcome.status === 'error') {
        runs.setStatus(run, 'error')
        threads.setStatus(thread.seq, 'error', outcome.error)
      } else {
        for (const extra of this.#o.onSuccess?.(run, live.publicBase) ?? []) {
          logged.push(this.#log(live, extra.event, extra.data))
          if (extra.event === 'feedback') live.result = { ...live.result, __feedback__: extra.data }
        }
        runs.setStatus(run, 'success')
        threads.setStatus(thread.seq, nextStatus(outcome.pausedAt))
      }
      if (this.#o.endEvent) logged.push(this.#log(live, 'end', null))
      return logged
    })
    for (const event of finalEvents) this.#announce(live, event)
    this.#protocol(live, outcome.status === 'error'
      ? rootLifecycle('failed', live.graphId, outcome.error)
      : rootLifecycle(outcome.pausedAt ? 'interrupted' : 'completed', live.graphId))
    this.#observe(run, outcome.status === 'error' ? 'error' : 'success')
    this.#ended(live, outcome.status === 'error'
      ? { status: 'error', values: outcome.values, error: outcome.error }
      : { status: 'success', values: outcome.values })
    if (run.kwargs.temporary) this.#deleteTemporary(live, thread)
  }

  #cancelled(live: LiveRun): void {
    const { runs, threads } = this.#o
    const { run } = live
    const thread = threads.key(run.thread_seq)
    if (!thread) return
    live.result = threads.latestCheckpoint(thread)?.values ?? {}
    // A stream following a run that is rolled back ends with this error; one that is interrupted just
    // ends, as on the real server 1.5.1 (langgraph-api 2.0.0 sent `"message": "interrupt"` too).
    if (live.started && live.cancelAction === 'rollback') {
      live.farewell = this.#log(live, 'error', { error: 'Error', message: 'rollback' })
      this.#announce(live, live.farewell)
    }
    if (live.cancelAction === 'rollback') {
      threads.rollbackRun(thread, run.run_id)
      runs.delete(run)
    } else {
      runs.setStatus(run, 'interrupted')
    }
    this.#protocol(live, rootLifecycle('interrupted', live.graphId))
    this.#observe(run, 'interrupted')
    if (live.started && live.cancelAction !== 'rollback') this.#ended(live, { status: 'interrupted', values: null })
    const others = runs.active(thread.seq).filter((r) => r.seq !== run.seq)
    if (others.length === 0) {
      const paused = threads.latestCheckpoint(thread)?.pausedAt ?? null
      threads.setStatus(thread.seq, nextStatus(paused))
    }
    if (run.kwargs.temporary) this.#deleteTemporary(live, thread)
  }

  /** Deletes a temporary thread at its run's end, keeping the run's log for the streams still reading it. */
  #deleteTemporary(live: LiveRun, thread: ThreadKey): void {
    live.kept = this.#o.runs.eventsAfter(live.run, -1)
    this.#o.threads.delete(thread)
  }

  /** Tells `onEnd` how a run that started has ended. */
  #ended(live: LiveRun, how: Pick<RunEnd, 'status' | 'values' | 'error'>): void {
    const { run } = live
    const { runs } = this.#o
    try {
      this.#o.onEnd?.({
        run, stored: () => runs.bySeq(run.seq) ?? run, status: how.status, values: how.values, error: how.error,
        startedAt: live.startedAt, endedAt: this.#o.clock.now(), publicBase: live.publicBase,
      })
    } catch (error) {
      this.#o.log.error({ err: error, run_id: run.run_id }, 'the end of a run could not be reported')
    }
  }

  // ---- following a thread from one run to the next (its join stream) ---------------------------

  /** Wakes whoever waits for a thread's next run: `create` emits the thread's seq. */
  readonly #created = new EventEmitter().setMaxListeners(0)

  /**
   * Resolves once a run is created on the thread (read it from the store), or once `signal` aborts.
   * The wait starts when this is called: a caller that found no run in the store and calls it in
   * the same turn misses none.
   */
  async runCreated(thread: Thread, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return
    const key = String(thread.seq)
    await new Promise<void>((resolve) => {
      const done = () => {
        this.#created.off(key, done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      this.#created.on(key, done)
      signal.addEventListener('abort', done)
    })
  }

  /** How many are waiting for a run to be created, on any thread. */
  get threadFollowers(): number {
    return this.#created.eventNames().reduce((sum, key) => sum + this.#created.listenerCount(key), 0)
  }
}

/** A page of `kept` (in id order) after the event `after`. */
function keptAfter(kept: SseEvent[], after: number): SseEvent[] {
  const from = kept.findIndex((event) => Number(event.id) > after)
  return from === -1 ? [] : kept.slice(from, from + EVENT_PAGE)
}

const nextStatus = (pausedAt: PausedAt | null) => (pausedAt ? 'interrupted' : 'idle')

/** The checkpoint a run named (`checkpoint_id`, or `checkpoint.checkpoint_id`: both land in `configurable`). */
function namedCheckpoint(kwargs: RunKwargs): string | null {
  const configurable = (kwargs.config.configurable ?? {}) as Record<string, unknown>
  return typeof configurable.checkpoint_id === 'string' && configurable.checkpoint_id !== '' ? configurable.checkpoint_id : null
}

/** A run's breakpoints: a list of node names or `*` (anything else stops nowhere). */
function breakpoints(value: unknown): Breakpoints {
  return value === '*' || (Array.isArray(value) && value.every((v) => typeof v === 'string')) ? value : []
}

/** The run's config: the assistant's, then the run's, with the ids in `configurable`. */
function mergeConfig(assistantConfig: Record<string, unknown>, runConfig: Record<string, unknown>, ids: Record<string, string>) {
  const configurable = {
    ...(assistantConfig.configurable as object | undefined),
    ...(runConfig.configurable as object | undefined),
    ...ids,
  }
  return { ...assistantConfig, ...runConfig, configurable }
}

/**
 * The result of a run that has ended, read back from the store. A run created with `feedback_keys`
 * that succeeded adds the URLs its `feedback` event handed out, as `__feedback__` (key → URL).
 */
export function runResult(runs: RunRepository, threads: ThreadRepository, run: Run): RunResult {
  const current = runs.bySeq(run.seq) ?? run
  if (current.status === 'error') {
    const error = runs.lastEvent(current, 'error')
    return { __error__: error?.data ?? { error: 'Error', message: 'The run failed.' } }
  }
  const feedback = current.kwargs.feedback_keys?.length ? runs.lastEvent(current, 'feedback') : undefined
  const values = settledValues(runs, threads, run)
  return feedback ? { ...values, __feedback__: feedback.data } : values
}

function settledValues(runs: RunRepository, threads: ThreadRepository, run: Run): State {
  const thread = threads.bySeq(run.thread_seq)
  if (!thread) return {}
  // The thread's latest run, stopped at an interrupt or a breakpoint, answers it as it did live.
  const latest = threads.latestCheckpoint(thread)
  if (latest?.pausedAt && runs.latest(thread.seq)?.seq === run.seq) return { __interrupt__: latest.pausedAt.interrupts }
  return threads.history(thread).find((c) => c.run_id === run.run_id)?.values ?? thread.values ?? {}
}
