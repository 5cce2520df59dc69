import type { Clock } from '../clock.js'
import type { SseEvent } from '../sse/writer.js'
import { iso, pageBound, type Db } from './db.js'

export type RunStatus = 'pending' | 'running' | 'error' | 'success' | 'timeout' | 'interrupted'
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running']

interface RunRow {
  seq: number
  scope: string
  run_id: string
  thread_seq: number
  assistant_id: string
  status: RunStatus
  metadata: string
  kwargs: string
  multitask_strategy: string | null
  created_at: number
  updated_at: number
  thread_id: string
}

/** What a run was asked to do (stored with it; the API shows it as `kwargs`). */
export type RunKwargs = {
  input: unknown
  command: unknown
  config: Record<string, unknown>
  context: unknown
  stream_mode: string[]
  subgraphs: boolean
  resumable: boolean
  feedback_keys: string[] | null
  interrupt_before: unknown
  interrupt_after: unknown
  on_disconnect: string | null
  after_seconds: number | null
  /** Given only when the client chose (`durability`, or the deprecated `checkpoint_during`). */
  durability?: 'sync' | 'async' | 'exit'
  temporary: boolean
  /** Where the run's outcome is POSTed when it ends (given only when the client named one). */
  webhook?: string
  /** Set on runs the session protocol started (the real server shows the same flag). */
  __protocol_stream_run?: true
}

export interface Run {
  seq: number
  /** Whose agent server ran it: '' for the root one, else the deployment's id. */
  scope: string
  thread_seq: number
  run_id: string
  thread_id: string
  assistant_id: string
  created_at: string
  updated_at: string
  status: RunStatus
  metadata: Record<string, unknown>
  multitask_strategy: string | null
  kwargs: RunKwargs
}

function toRun(row: RunRow): Run {
  return {
    seq: row.seq,
    scope: row.scope,
    thread_seq: row.thread_seq,
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    status: row.status,
    metadata: JSON.parse(row.metadata),
    multitask_strategy: row.multitask_strategy,
    kwargs: JSON.parse(row.kwargs),
  }
}

const RUN = 'SELECT r.*, t.thread_id FROM runs r JOIN threads t ON t.seq = r.thread_seq'
const ACTIVE_SQL = ACTIVE_RUN_STATUSES.map((s) => `'${s}'`).join(', ')

/** Runs of a scope, and each run's event log (numbered from 0: the SSE `id:`). */
export class RunRepository {
  readonly #clock: Clock
  readonly #sql

  constructor(db: Db, clock: Clock) {
    this.#clock = clock
    this.#sql = {
      insert: db.prepare(`INSERT INTO runs
        (scope, run_id, thread_seq, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at)
        VALUES (@scope, @run_id, @thread_seq, @assistant_id, 'pending', @metadata, @kwargs, @strategy, @now, @now)`),
      bySeq: db.prepare<[number], RunRow>(`${RUN} WHERE r.seq = ?`),
      get: db.prepare<[number, string], RunRow>(`${RUN} WHERE r.thread_seq = ? AND r.run_id = ?`),
      byId: db.prepare<[string, string], RunRow>(`${RUN} WHERE r.scope = ? AND r.run_id = ?`),
      anyScope: db.prepare<[string], RunRow>(`${RUN} WHERE r.run_id = ?`),
      list: db.prepare<{ thread: number; status: string | null; limit: number; offset: number }, RunRow>(`${RUN}
        WHERE r.thread_seq = @thread AND (@status IS NULL OR r.status = @status)
        ORDER BY r.seq DESC LIMIT CAST(@limit AS INTEGER) OFFSET @offset`),
      active: db.prepare<[number], RunRow>(`${RUN} WHERE r.thread_seq = ? AND r.status IN (${ACTIVE_SQL}) ORDER BY r.seq`),
      allActive: db.prepare<[], RunRow>(`${RUN} WHERE r.status IN (${ACTIVE_SQL}) ORDER BY r.seq`),
      withStatus: db.prepare<[string, string], RunRow>(`${RUN} WHERE r.scope = ? AND r.status IN (SELECT value FROM json_each(?)) ORDER BY r.seq`),
      nextOnThread: db.prepare<[number, number], RunRow>(`${RUN} WHERE r.thread_seq = ? AND r.seq > ? ORDER BY r.seq LIMIT 1`),
      setStatus: db.prepare('UPDATE runs SET status = ?, updated_at = ? WHERE seq = ?'),
      delete: db.prepare('DELETE FROM runs WHERE seq = ?'),
      // The idx is read, then written, in one synchronous call (see ThreadEventRepository.append).
      lastIdx: db.prepare<[number], number | null>('SELECT max(idx) FROM run_events WHERE run_seq = ?').pluck(),
      append: db.prepare<[number, number, string, string]>('INSERT INTO run_events (run_seq, idx, event, data) VALUES (?, ?, ?, ?)'),
      inScopes: db.prepare<[string], RunRow>(`${RUN} WHERE r.scope IN (SELECT value FROM json_each(?)) ORDER BY r.created_at DESC, r.seq DESC`),
      lastEvent: db.prepare<[number, string], { idx: number; event: string; data: string }>(
        'SELECT idx, event, data FROM run_events WHERE run_seq = ? AND event = ? ORDER BY idx DESC LIMIT 1'),
      eventCount: db.prepare<[number], { count: number }>('SELECT count(*) AS count FROM run_events WHERE run_seq = ?'),
      after: db.prepare<[number, number, number], { idx: number; event: string; data: string }>(
        'SELECT idx, event, data FROM run_events WHERE run_seq = ? AND idx > ? ORDER BY idx LIMIT CAST(? AS INTEGER)'),
    }
  }

  create(input: { scope: string; runId: string; threadSeq: number; threadId: string; assistantId: string; metadata: Record<string, unknown>; kwargs: RunKwargs; strategy: string | null }): Run {
    const now = this.#clock.now()
    const metadata = JSON.stringify(input.metadata)
    const kwargs = JSON.stringify(input.kwargs)
    const { lastInsertRowid } = this.#sql.insert.run({
      scope: input.scope,
      run_id: input.runId,
      thread_seq: input.threadSeq,
      assistant_id: input.assistantId,
      metadata,
      kwargs,
      strategy: input.strategy,
      now,
    })
    // The row as a read would return it (every column is written above), without reading it back.
    return toRun({
      seq: Number(lastInsertRowid), scope: input.scope, run_id: input.runId, thread_seq: input.threadSeq, thread_id: input.threadId,
      assistant_id: input.assistantId, status: 'pending', metadata, kwargs, multitask_strategy: input.strategy, created_at: now, updated_at: now,
    })
  }

  bySeq(seq: number): Run | undefined {
    const row = this.#sql.bySeq.get(seq)
    return row && toRun(row)
  }

  get(threadSeq: number, runId: string): Run | undefined {
    const row = this.#sql.get.get(threadSeq, runId)
    return row && toRun(row)
  }

  /** A run of the scope by its id alone (stateless runs are addressed this way). */
  byId(scope: string, runId: string): Run | undefined {
    const row = this.#sql.byId.get(scope, runId)
    return row && toRun(row)
  }

  /** A run by its id in whichever scope it lives (run ids are unique everywhere). */
  find(runId: string): Run | undefined {
    const row = this.#sql.anyScope.get(runId)
    return row && toRun(row)
  }

  /** Newest first. */
  list(threadSeq: number, options: { status?: string | null; limit: number; offset: number }): Run[] {
    return this.#sql.list.all({ thread: threadSeq, status: options.status ?? null, limit: pageBound(options.limit), offset: pageBound(options.offset) }).map(toRun)
  }

  /** The thread's newest run. */
  latest(threadSeq: number): Run | undefined {
    return this.list(threadSeq, { limit: 1, offset: 0 })[0]
  }

  /** Pending and running runs of a thread, oldest first. */
  active(threadSeq: number): Run[] {
    return this.#sql.active.all(threadSeq).map(toRun)
  }

  /** The thread's first run created after run `afterSeq` (0: its first run), in creation order. */
  nextOnThread(threadSeq: number, afterSeq: number): Run | undefined {
    const row = this.#sql.nextOnThread.get(threadSeq, afterSeq)
    return row && toRun(row)
  }

  /** Every pending or running run (what was in flight when hangar last stopped). */
  allActive(): Run[] {
    return this.#sql.allActive.all().map(toRun)
  }

  /** The scope's runs (on any thread, temporary ones too) whose status is one of `statuses`, oldest first. */
  withStatus(scope: string, statuses: readonly RunStatus[]): Run[] {
    return this.#sql.withStatus.all(scope, JSON.stringify(statuses)).map(toRun)
  }

  /** Every run of these scopes (on any thread), newest first. */
  inScopes(scopes: readonly string[]): Run[] {
    return this.#sql.inScopes.all(JSON.stringify(scopes)).map(toRun)
  }

  setStatus(run: Run, status: RunStatus): void {
    this.#sql.setStatus.run(status, this.#clock.now(), run.seq)
  }

  delete(run: Run): void {
    this.#sql.delete.run(run.seq)
  }

  /** Appends an event to the run's log; returns it with its id. */
  append(run: Run, event: string, data: unknown): SseEvent {
    const idx = (this.#sql.lastIdx.get(run.seq) ?? -1) + 1
    this.#sql.append.run(run.seq, idx, event, JSON.stringify(data ?? null))
    return { id: String(idx), event, data }
  }

  /** How many events the run's log holds. */
  eventCount(run: Run): number {
    return this.#sql.eventCount.get(run.seq)!.count
  }

  /** The run's last logged event of this name, if it logged one. */
  lastEvent(run: Run, event: string): SseEvent | undefined {
    const row = this.#sql.lastEvent.get(run.seq, event)
    return row && { id: String(row.idx), event: row.event, data: JSON.parse(row.data) }
  }

  /** The logged events after `afterIdx` (-1: from the start), at most `limit` of them (-1: all). */
  eventsAfter(run: Run, afterIdx: number, limit = -1): SseEvent[] {
    return this.#sql.after.all(run.seq, afterIdx, limit).map((row) => ({ id: String(row.idx), event: row.event, data: JSON.parse(row.data), json: row.data }))
  }
}
