import type { Db } from './db.js'

/** One event of a thread's session-protocol log, as stored (JSON kept as text). */
export interface ThreadEventRow {
  seq: number
  run_id: string | null
  method: string
  /** JSON: a list of `<node>:<task_id>` segments. */
  namespace: string
  node: string | null
  /** JSON. */
  data: string
  /** Epoch milliseconds on hangar's clock. */
  at: number
}

/** An event to log: the seq is the log's. */
export interface NewThreadEvent {
  runId: string | null
  method: string
  namespace: string[]
  node?: string
  data: unknown
  at: number
}

/**
 * Each thread's session-protocol log: every event of every run of the thread, numbered 1, 2, 3 …
 * across runs (the envelope's `seq` and `event_id`).
 */
export class ThreadEventRepository {
  readonly #sql

  constructor(db: Db) {
    this.#sql = {
      // The seq is read, then written, in one synchronous call (nothing else can write between them):
      // cheaper than a subquery with RETURNING, and bound by position, not by name. A run appends ~17.
      append: db.prepare<[number, number, string | null, string, string, string | null, string, number]>(
        'INSERT INTO thread_events (thread_seq, seq, run_id, method, namespace, node, data, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      after: db.prepare<[number, number, number], ThreadEventRow>(
        'SELECT seq, run_id, method, namespace, node, data, at FROM thread_events WHERE thread_seq = ? AND seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)'),
      last: db.prepare<[number], number | null>('SELECT max(seq) FROM thread_events WHERE thread_seq = ?').pluck(),
      ofRun: db.prepare<[number, string], ThreadEventRow>(
        'SELECT seq, run_id, method, namespace, node, data, at FROM thread_events WHERE thread_seq = ? AND run_id = ? ORDER BY seq'),
    }
  }

  /** Appends an event; returns its seq. */
  append(threadSeq: number, event: NewThreadEvent): number {
    const seq = this.lastSeq(threadSeq) + 1
    this.#sql.append.run(threadSeq, seq, event.runId, event.method, JSON.stringify(event.namespace),
      event.node ?? null, JSON.stringify(event.data ?? null), event.at)
    return seq
  }

  /** The events after `since`, oldest first, at most `limit`. */
  after(threadSeq: number, since: number, limit: number): ThreadEventRow[] {
    return this.#sql.after.all(threadSeq, since, limit)
  }

  /** The highest seq logged for the thread (0 when none). */
  lastSeq(threadSeq: number): number {
    return this.#sql.last.get(threadSeq) ?? 0
  }

  /** Every event one run logged, oldest first. */
  ofRun(threadSeq: number, runId: string): ThreadEventRow[] {
    return this.#sql.ofRun.all(threadSeq, runId)
  }
}
