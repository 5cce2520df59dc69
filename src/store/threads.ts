import type { Clock } from '../clock.js'
import type { CheckpointRecord, Interrupt, PausedAt, State, ThreadTask } from '../agent/types.js'
import type { Statement } from 'better-sqlite3'
import { iso, pageBound, type Db } from './db.js'
import { atomically } from './group-commit.js'

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error'

interface ThreadRow {
  seq: number
  scope: string
  thread_id: string
  metadata: string
  status: ThreadStatus
  state_values: string | null
  interrupts: string
  config: string | null
  error: string | null
  created_at: number
  updated_at: number
  state_updated_at: number
  bound_assistant_id: string | null
}

interface CheckpointRow {
  seq: number
  thread_seq: number
  checkpoint_id: string
  parent_checkpoint_id: string | null
  run_id: string | null
  state_values: string
  next: string
  metadata: string
  tasks: string
  interrupts: string
  paused_at: string | null
  created_at: number
  checkpoint_ns: string
}

/** A thread as the API shows it, plus the store's handle on it. */
export interface Thread {
  seq: number
  thread_id: string
  created_at: string
  updated_at: string
  state_updated_at: string
  metadata: Record<string, unknown>
  status: ThreadStatus
  values: State | null
  interrupts: Record<string, Interrupt[]>
  config: Record<string, unknown> | null
  error: unknown
  /** The assistant the session protocol's first `run.start` bound the thread to (null: none yet). */
  boundAssistantId: string | null
}

/** What finds a thread's rows: its store handle and its id (a run reads no more than this of its thread). */
export type ThreadKey = Pick<Thread, 'seq' | 'thread_id'>

export interface Checkpoint extends CheckpointRecord {
  checkpoint_ns: string
  seq: number
  thread_id: string
  run_id: string | null
  pausedAt: PausedAt | null
  created_at: string
}

export interface ThreadFilter {
  ids?: string[] | null
  metadata?: Record<string, unknown> | null
  values?: Record<string, unknown> | null
  status?: ThreadStatus | null
}

export const THREAD_SORT_KEYS = ['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'] as const

export interface ThreadOrder {
  sortBy: (typeof THREAD_SORT_KEYS)[number]
  order: 'asc' | 'desc'
  limit: number
  offset: number
}

type Bind = Record<string, string | number>

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T))

function toThread(row: ThreadRow): Thread {
  return {
    seq: row.seq,
    thread_id: row.thread_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    state_updated_at: iso(row.state_updated_at),
    metadata: JSON.parse(row.metadata),
    status: row.status,
    values: parse<State>(row.state_values),
    interrupts: JSON.parse(row.interrupts),
    config: parse(row.config),
    error: parse(row.error),
    boundAssistantId: row.bound_assistant_id,
  }
}

function toCheckpoint(row: CheckpointRow, threadId: string): Checkpoint {
  return {
    seq: row.seq,
    thread_id: threadId,
    run_id: row.run_id,
    checkpoint_id: row.checkpoint_id,
    parent_checkpoint_id: row.parent_checkpoint_id,
    checkpoint_ns: row.checkpoint_ns,
    values: JSON.parse(row.state_values),
    next: JSON.parse(row.next),
    metadata: JSON.parse(row.metadata),
    tasks: JSON.parse(row.tasks) as ThreadTask[],
    interrupts: JSON.parse(row.interrupts),
    pausedAt: parse<PausedAt>(row.paused_at),
    created_at: iso(row.created_at),
  }
}

/** Does `actual` contain every key of `wanted` with a deeply equal value? (JSONB `@>`, as filters use.) */
export function contains(actual: unknown, wanted: unknown): boolean {
  if (wanted === null || typeof wanted !== 'object') return actual === wanted
  if (Array.isArray(wanted)) return Array.isArray(actual) && wanted.every((w) => actual.some((a) => contains(a, w)))
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false
  return Object.entries(wanted).every(([key, value]) => contains((actual as Record<string, unknown>)[key], value))
}

/**
 * Threads of a scope and their checkpoints: the root graph's (namespace '') are the thread's state
 * and history; a subgraph's sit beside them in their own namespace and never move the thread.
 */
export class ThreadRepository {
  readonly #db: Db
  readonly #clock: Clock
  readonly #sql
  /** Search statements, one per combination of filters and order actually used. */
  readonly #searchStatements = new Map<string, Statement<Bind, unknown>>()

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#sql = {
      get: db.prepare<[string, string], ThreadRow>('SELECT * FROM threads WHERE scope = ? AND thread_id = ?'),
      bySeq: db.prepare<[number], ThreadRow>('SELECT * FROM threads WHERE seq = ?'),
      key: db.prepare<[number], ThreadKey>('SELECT seq, thread_id FROM threads WHERE seq = ?'),
      insert: db.prepare(`INSERT INTO threads
        (scope, thread_id, metadata, status, state_values, interrupts, config, error, created_at, updated_at, state_updated_at)
        VALUES (@scope, @thread_id, @metadata, 'idle', NULL, '{}', NULL, NULL, @now, @now, @now)`),
      patch: db.prepare('UPDATE threads SET metadata = ?, updated_at = ? WHERE seq = ?'),
      setStatus: db.prepare('UPDATE threads SET status = ?, error = ?, updated_at = ? WHERE seq = ?'),
      setState: db.prepare(`UPDATE threads SET state_values = ?, interrupts = ?, updated_at = ?, state_updated_at = ?
        WHERE seq = ?`),
      delete: db.prepare('DELETE FROM threads WHERE seq = ?'),
      latest: db.prepare<[number, string], CheckpointRow>(
        'SELECT * FROM checkpoints WHERE thread_seq = ? AND checkpoint_ns = ? ORDER BY seq DESC LIMIT 1'),
      checkpoint: db.prepare<[number, string], CheckpointRow>('SELECT * FROM checkpoints WHERE thread_seq = ? AND checkpoint_id = ?'),
      history: db.prepare<[number, string], CheckpointRow>('SELECT * FROM checkpoints WHERE thread_seq = ? AND checkpoint_ns = ? ORDER BY seq DESC'),
      insertCheckpoint: db.prepare(`INSERT INTO checkpoints
        (thread_seq, checkpoint_id, parent_checkpoint_id, checkpoint_ns, run_id, state_values, next, metadata, tasks, interrupts, paused_at, created_at)
        VALUES (@thread_seq, @checkpoint_id, @parent, @ns, @run_id, @values, @next, @metadata, @tasks, @interrupts, @paused_at, @now)`),
      amend: db.prepare<[string, string, string, string, string | null, number, string], { seq: number }>(`UPDATE checkpoints
        SET state_values = ?, next = ?, tasks = ?, interrupts = ?, paused_at = ? WHERE thread_seq = ? AND checkpoint_id = ? RETURNING seq`),
      settleTasks: db.prepare<[string, number, string]>('UPDATE checkpoints SET tasks = ?, paused_at = NULL WHERE thread_seq = ? AND checkpoint_id = ?'),
      amendThread: db.prepare(`UPDATE threads SET state_values = @values, interrupts = @interrupts
        WHERE seq = @thread AND (SELECT max(seq) FROM checkpoints WHERE thread_seq = @thread AND checkpoint_ns = '') = @checkpoint`),
      bind: db.prepare('UPDATE threads SET bound_assistant_id = ? WHERE seq = ?'),
      deleteRunCheckpoints: db.prepare('DELETE FROM checkpoints WHERE thread_seq = ? AND run_id = ?'),
      setCheckpointMetadata: db.prepare('UPDATE checkpoints SET metadata = ? WHERE seq = ?'),
      setConfig: db.prepare('UPDATE threads SET config = ? WHERE seq = ?'),
      // The latest root checkpoint stays, and in each subgraph namespace the latest checkpoint of a
      // subgraph its tasks run (one interrupted inside a subgraph resumes from there).
      keepLatest: db.prepare(`DELETE FROM checkpoints WHERE thread_seq = @thread AND seq <> @root AND seq NOT IN (
        SELECT max(seq) FROM checkpoints WHERE thread_seq = @thread AND checkpoint_ns <> ''
          AND json_extract(metadata, '$.parents.""') = @root_id GROUP BY checkpoint_ns)`),
      copyCheckpoints: db.prepare(`INSERT INTO checkpoints
        (thread_seq, checkpoint_id, parent_checkpoint_id, checkpoint_ns, run_id, state_values, next, metadata, tasks, interrupts, paused_at, created_at)
        SELECT ?, checkpoint_id, parent_checkpoint_id, checkpoint_ns, run_id, state_values, next, metadata, tasks, interrupts, paused_at, created_at
        FROM checkpoints WHERE thread_seq = ? ORDER BY seq`),
    }
  }

  get(scope: string, threadId: string): Thread | undefined {
    const row = this.#sql.get.get(scope, threadId)
    return row && toThread(row)
  }

  bySeq(seq: number): Thread | undefined {
    const row = this.#sql.bySeq.get(seq)
    return row && toThread(row)
  }

  /** The thread's key, without its state (undefined once it is deleted). */
  key(seq: number): ThreadKey | undefined {
    return this.#sql.key.get(seq)
  }

  create(scope: string, threadId: string, metadata: Record<string, unknown>): Thread {
    const now = this.#clock.now()
    const text = JSON.stringify(metadata)
    const { lastInsertRowid } = this.#sql.insert.run({ scope, thread_id: threadId, metadata: text, now })
    // The row as a read would return it (every column is written above), without reading it back.
    return toThread({
      seq: Number(lastInsertRowid), scope, thread_id: threadId, metadata: text, status: 'idle', state_values: null, interrupts: '{}',
      config: null, error: null, created_at: now, updated_at: now, state_updated_at: now, bound_assistant_id: null,
    })
  }

  /** Binds the thread to the assistant of its first session-protocol run. */
  bindAssistant(thread: Thread, assistantId: string): Thread {
    this.#sql.bind.run(assistantId, thread.seq)
    return { ...thread, boundAssistantId: assistantId }
  }

  /** Merges metadata into the thread's (keys given replace, others stay). */

  patchMetadata(thread: Thread, metadata: Record<string, unknown>): Thread {
    const text = JSON.stringify({ ...thread.metadata, ...metadata })
    const now = this.#clock.now()
    this.#sql.patch.run(text, now, thread.seq)
    // The two columns written, as a read would show them: the rest of the row is as it was.
    return { ...thread, metadata: JSON.parse(text) as Record<string, unknown>, updated_at: iso(now) }
  }

  setStatus(seq: number, status: ThreadStatus, error: unknown = null): void {
    this.#sql.setStatus.run(status, error === null ? null : JSON.stringify(error), this.#clock.now(), seq)
  }

  delete(thread: ThreadKey): void {
    this.#sql.delete.run(thread.seq)
  }

  /**
   * One page of the threads that match, and how many match in all. Filters as the real server
   * does: exact ids and status, JSON containment on metadata and values. Ties in the sort key
   * follow creation order in the same direction (newest first when descending), so a frozen clock
   * still lists the thread created last first.
   *
   * Ids, status, order and paging are SQL; containment is checked here, on only the two columns
   * it reads, and only the page's rows are loaded whole.
   */
  search(scope: string, filter: ThreadFilter, order: ThreadOrder): { threads: Thread[]; total: number } {
    const { where, bind } = this.#where(scope, filter)
    const direction = order.order === 'asc' ? 'ASC' : 'DESC'
    const sort = `ORDER BY ${THREAD_SORT_KEYS.includes(order.sortBy) ? order.sortBy : 'created_at'} ${direction}, seq ${direction}`
    if (!filter.metadata && !filter.values) {
      const total = this.#count(scope, filter)
      const rows = this.#statement<ThreadRow>(`SELECT * FROM threads ${where} ${sort} LIMIT CAST(@limit AS INTEGER) OFFSET @offset`)
        .all({ ...bind, limit: pageBound(order.limit), offset: pageBound(order.offset) })
      return { threads: rows.map(toThread), total }
    }
    const matching = this.#matching(`${where} ${sort}`, bind, filter)
    const page = matching.slice(order.offset, order.offset + order.limit)
    return { threads: page.map((seq) => this.bySeq(seq)!), total: matching.length }
  }

  /** How many threads match (the same filters as `search`). */
  count(scope: string, filter: ThreadFilter): number {
    if (!filter.metadata && !filter.values) return this.#count(scope, filter)
    const { where, bind } = this.#where(scope, filter)
    return this.#matching(where, bind, filter).length
  }

  #where(scope: string, filter: ThreadFilter): { where: string; bind: Bind } {
    const conditions = ['scope = @scope']
    const bind: Bind = { scope }
    if (filter.ids) {
      conditions.push('thread_id IN (SELECT value FROM json_each(@ids))')
      bind.ids = JSON.stringify(filter.ids)
    }
    if (filter.status) {
      conditions.push('status = @status')
      bind.status = filter.status
    }
    return { where: `WHERE ${conditions.join(' AND ')}`, bind }
  }

  #count(scope: string, filter: ThreadFilter): number {
    const { where, bind } = this.#where(scope, filter)
    return this.#statement<{ n: number }>(`SELECT count(*) AS n FROM threads ${where}`).get(bind)!.n
  }

  /** Seqs of the rows selected by `clause` whose metadata and values contain what the filter asks. */
  #matching(clause: string, bind: Bind, filter: ThreadFilter): number[] {
    const rows = this.#statement<{ seq: number; metadata: string; state_values: string | null }>(
      `SELECT seq, metadata, state_values FROM threads ${clause}`,
    ).all(bind)
    return rows
      .filter((row) =>
        (!filter.metadata || contains(JSON.parse(row.metadata), filter.metadata)) &&
        (!filter.values || contains(parse(row.state_values) ?? {}, filter.values)))
      .map((row) => row.seq)
  }

  #statement<Row>(sql: string): Statement<Bind, Row> {
    let statement = this.#searchStatements.get(sql)
    if (!statement) {
      statement = this.#db.prepare<Bind, unknown>(sql)
      this.#searchStatements.set(sql, statement)
    }
    return statement as Statement<Bind, Row>
  }

  /** The latest checkpoint of the root graph ('') or of a subgraph's namespace. */
  latestCheckpoint(thread: ThreadKey, ns = ''): Checkpoint | undefined {
    const row = this.#sql.latest.get(thread.seq, ns)
    return row && toCheckpoint(row, thread.thread_id)
  }

  /** A checkpoint by id, in whichever namespace it is. */
  checkpoint(thread: ThreadKey, checkpointId: string): Checkpoint | undefined {
    const row = this.#sql.checkpoint.get(thread.seq, checkpointId)
    return row && toCheckpoint(row, thread.thread_id)
  }

  /** The checkpoints of the root graph ('') or of a subgraph's namespace, newest first. */
  history(thread: ThreadKey, ns = ''): Checkpoint[] {
    return this.#sql.history.all(thread.seq, ns).map((row) => toCheckpoint(row, thread.thread_id))
  }

  /** Stores a checkpoint; a root graph's becomes the thread's current state (a subgraph's leaves the thread as it is). */
  addCheckpoint(thread: ThreadKey, checkpoint: CheckpointRecord, runId: string | null, pausedAt: PausedAt | null = null): void {
    const now = this.#clock.now()
    const ns = checkpoint.checkpoint_ns ?? ''
    // Serialized once: the thread's state is the same text as its latest root checkpoint's.
    const values = JSON.stringify(checkpoint.values)
    const interrupts = JSON.stringify(checkpoint.interrupts)
    atomically(this.#db, () => {
      this.#sql.insertCheckpoint.run({
        thread_seq: thread.seq,
        checkpoint_id: checkpoint.checkpoint_id,
        parent: checkpoint.parent_checkpoint_id,
        ns,
        run_id: runId,
        values,
        next: JSON.stringify(checkpoint.next),
        metadata: JSON.stringify(checkpoint.metadata),
        tasks: JSON.stringify(checkpoint.tasks),
        interrupts,
        paused_at: pausedAt === null ? null : JSON.stringify(pausedAt),
        now,
      })
      if (ns === '') this.#sql.setState.run(values, interrupts, now, now, thread.seq)
    })
  }

  /**
   * Rewrites a stored checkpoint's tasks and interrupts (a pending task ran, interrupted or failed),
   * the values and `next` it shows (the writes of tasks that ran beside one that interrupted), and
   * where the thread is paused there; the thread's values and `interrupts` follow when it is the
   * latest root checkpoint.
   */
  amendCheckpoint(thread: ThreadKey, checkpoint: CheckpointRecord, pausedAt: PausedAt | null): void {
    const values = JSON.stringify(checkpoint.values)
    const interrupts = JSON.stringify(checkpoint.interrupts)
    atomically(this.#db, () => {
      const row = this.#sql.amend.get(
        values, JSON.stringify(checkpoint.next), JSON.stringify(checkpoint.tasks), interrupts,
        pausedAt === null ? null : JSON.stringify(pausedAt), thread.seq, checkpoint.checkpoint_id,
      )
      if (row) this.#sql.amendThread.run({ values, interrupts, thread: thread.seq, checkpoint: row.seq })
    })
  }

  /**
   * Rewrites a stored checkpoint's tasks alone (they ran; its values, `next` and interrupts stay, and
   * so does the thread's state) and leaves it unpaused: `amendCheckpoint` without the state written again.
   */
  settleTasks(thread: ThreadKey, checkpoint: CheckpointRecord): void {
    this.#sql.settleTasks.run(JSON.stringify(checkpoint.tasks), thread.seq, checkpoint.checkpoint_id)
  }

  /** Forgets the checkpoints a run wrote and returns the thread to the state before it (rollback). */
  rollbackRun(thread: ThreadKey, runId: string): void {
    const now = this.#clock.now()
    atomically(this.#db, () => {
      this.#sql.deleteRunCheckpoints.run(thread.seq, runId)
      const latest = this.#sql.latest.get(thread.seq, '')
      this.#sql.setState.run(latest?.state_values ?? null, latest?.interrupts ?? '{}', now, now, thread.seq)
    })
  }

  /** Merges metadata into a checkpoint's (keys given replace, others stay); returns it as stored now. */
  patchCheckpointMetadata(thread: Thread, checkpoint: Checkpoint, metadata: Record<string, unknown>): Checkpoint {
    this.#sql.setCheckpointMetadata.run(JSON.stringify({ ...checkpoint.metadata, ...metadata }), checkpoint.seq)
    return this.checkpoint(thread, checkpoint.checkpoint_id)!
  }

  /** Replaces the config the thread keeps from its runs (`configurable`, `tags`, …). */
  setConfig(thread: Thread, config: Record<string, unknown>): void {
    this.#sql.setConfig.run(JSON.stringify(config), thread.seq)
  }

  /**
   * Forgets every checkpoint but the latest (prune's `keep_latest`): the state stays, the history
   * goes. Of subgraphs, what the latest checkpoint's tasks run keeps its latest checkpoint.
   */
  keepLatestCheckpoint(thread: ThreadKey): void {
    const latest = this.#sql.latest.get(thread.seq, '')
    if (latest) this.#sql.keepLatest.run({ thread: thread.seq, root: latest.seq, root_id: latest.checkpoint_id })
  }

  /** A new thread with the same metadata, state and history (subgraph checkpoints too). */
  copy(scope: string, thread: Thread, newId: string): Thread {
    return atomically(this.#db, () => {
      const copy = this.create(scope, newId, thread.metadata)
      this.#sql.copyCheckpoints.run(copy.seq, thread.seq)
      const now = this.#clock.now()
      this.#sql.setState.run(
        thread.values === null ? null : JSON.stringify(thread.values), JSON.stringify(thread.interrupts), now, now, copy.seq,
      )
      return this.bySeq(copy.seq)!
    })
  }
}
