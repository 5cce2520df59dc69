import type { Db } from './db.js'
import { contains } from './threads.js'

type JsonObject = Record<string, unknown>

/** One cron of an agent server, as kept. */
export interface CronRecord {
  seq: number
  cronId: string
  scope: string
  assistantId: string
  /** The thread each run goes to; null for a stateless cron (a new thread each run). */
  threadId: string | null
  userId: string | null
  schedule: string
  timezone: string | null
  /** Epoch ms after which nothing fires; null: no end. */
  endTime: number | null
  enabled: boolean
  /** Stateless crons only: what happens to each run's thread when it ends. */
  onRunCompleted: 'keep' | 'delete' | null
  /** The run body each occurrence creates a run from. */
  payload: JsonObject
  metadata: JsonObject
  publicBase: string
  /** The next occurrence not yet fired (epoch ms); null when none is left. */
  nextRunAt: number | null
  createdAt: number
  updatedAt: number
}

/** What a new cron is made of: a record but for what the store adds (seq, scope, times) and with the thread's row for its id. */
export type CronWrite = Omit<CronRecord, 'seq' | 'scope' | 'threadId' | 'createdAt' | 'updatedAt'> & {
  /** The thread's row, for a thread cron. */
  threadSeq: number | null
}

/** What a patch may change. */
export type CronChange = Pick<CronRecord, 'schedule' | 'timezone' | 'endTime' | 'enabled' | 'onRunCompleted' | 'payload' | 'metadata' | 'nextRunAt'>

export interface CronFilter {
  assistantId?: string
  threadId?: string
  enabled?: boolean
  /** Crons whose metadata contains these keys and values. */
  metadata?: JsonObject
}

interface Row {
  seq: number
  cron_id: string
  scope: string
  assistant_id: string
  thread_id: string | null
  user_id: string | null
  schedule: string
  timezone: string | null
  end_time: number | null
  enabled: number
  on_run_completed: string | null
  payload: string
  metadata: string
  public_base: string
  next_run_at: number | null
  created_at: number
  updated_at: number
}

const toRecord = (row: Row): CronRecord => ({
  seq: row.seq,
  cronId: row.cron_id,
  scope: row.scope,
  assistantId: row.assistant_id,
  threadId: row.thread_id,
  userId: row.user_id,
  schedule: row.schedule,
  timezone: row.timezone,
  endTime: row.end_time,
  enabled: row.enabled === 1,
  onRunCompleted: row.on_run_completed as CronRecord['onRunCompleted'],
  payload: JSON.parse(row.payload) as JsonObject,
  metadata: JSON.parse(row.metadata) as JsonObject,
  publicBase: row.public_base,
  nextRunAt: row.next_run_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

const SELECT = `SELECT c.seq, c.cron_id, c.scope, c.assistant_id, t.thread_id, c.user_id, c.schedule, c.timezone, c.end_time,
  c.enabled, c.on_run_completed, c.payload, c.metadata, c.public_base, c.next_run_at, c.created_at, c.updated_at
  FROM crons c LEFT JOIN threads t ON t.seq = c.thread_seq`
/** Enabled crons with an occurrence due at @now. */
const DUE = 'c.enabled = 1 AND c.next_run_at IS NOT NULL AND c.next_run_at <= @now'

/** The agent servers' crons, one set per scope. "Not found" is undefined. */
export class CronRepository {
  readonly #sql

  constructor(db: Db) {
    this.#sql = {
      insert: db.prepare(
        `INSERT INTO crons (cron_id, scope, assistant_id, thread_seq, user_id, schedule, timezone, end_time, enabled,
                            on_run_completed, payload, metadata, public_base, next_run_at, created_at, updated_at)
         VALUES (@cronId, @scope, @assistantId, @threadSeq, @userId, @schedule, @timezone, @endTime, @enabled,
                 @onRunCompleted, @payload, @metadata, @publicBase, @nextRunAt, @now, @now)`,
      ),
      get: db.prepare<{ scope: string; cronId: string }, Row>(`${SELECT} WHERE c.scope = @scope AND c.cron_id = @cronId`),
      bySeq: db.prepare<[number], Row>(`${SELECT} WHERE c.seq = ?`),
      // Oldest first; the service sorts and pages (next_run_date is derived from the clock).
      list: db.prepare<{ scope: string; assistantId: string | null; threadId: string | null; enabled: number | null }, Row>(
        `${SELECT} WHERE c.scope = @scope
           AND (@assistantId IS NULL OR c.assistant_id = @assistantId)
           AND (@threadId IS NULL OR t.thread_id = @threadId)
           AND (@enabled IS NULL OR c.enabled = @enabled)
         ORDER BY c.created_at, c.seq`,
      ),
      update: db.prepare(
        `UPDATE crons SET schedule = @schedule, timezone = @timezone, end_time = @endTime, enabled = @enabled,
                          on_run_completed = @onRunCompleted, payload = @payload, metadata = @metadata,
                          next_run_at = @nextRunAt, updated_at = @now
          WHERE seq = @seq`,
      ),
      delete: db.prepare<{ scope: string; cronId: string }>('DELETE FROM crons WHERE scope = @scope AND cron_id = @cronId'),
      nextDue: db.prepare<{ now: number }, Row>(`${SELECT} WHERE ${DUE} ORDER BY c.next_run_at, c.seq LIMIT 1`),
      earliest: db.prepare<[], number | null>('SELECT min(next_run_at) FROM crons WHERE enabled = 1 AND next_run_at IS NOT NULL').pluck(),
      setNextRun: db.prepare<{ seq: number; nextRunAt: number | null }>('UPDATE crons SET next_run_at = @nextRunAt WHERE seq = @seq'),
    }
  }

  insert(scope: string, cron: CronWrite, now: number): CronRecord {
    const { lastInsertRowid } = this.#sql.insert.run({
      ...cron, scope, now,
      enabled: cron.enabled ? 1 : 0,
      payload: JSON.stringify(cron.payload),
      metadata: JSON.stringify(cron.metadata),
    })
    return this.bySeq(Number(lastInsertRowid))!
  }

  get(scope: string, cronId: string): CronRecord | undefined {
    const row = this.#sql.get.get({ scope, cronId })
    return row && toRecord(row)
  }

  bySeq(seq: number): CronRecord | undefined {
    const row = this.#sql.bySeq.get(seq)
    return row && toRecord(row)
  }

  /** The scope's crons that match, oldest first. */
  list(scope: string, filter: CronFilter): CronRecord[] {
    const rows = this.#sql.list.all({
      scope,
      assistantId: filter.assistantId ?? null,
      threadId: filter.threadId ?? null,
      enabled: filter.enabled === undefined ? null : filter.enabled ? 1 : 0,
    })
    const records = rows.map(toRecord)
    return filter.metadata ? records.filter((cron) => contains(cron.metadata, filter.metadata)) : records
  }

  update(cron: CronRecord, change: CronChange, now: number): CronRecord {
    this.#sql.update.run({
      ...change, seq: cron.seq, now,
      enabled: change.enabled ? 1 : 0,
      payload: JSON.stringify(change.payload),
      metadata: JSON.stringify(change.metadata),
    })
    return this.bySeq(cron.seq)!
  }

  /** Removes the cron; false when there was none. */
  delete(scope: string, cronId: string): boolean {
    return this.#sql.delete.run({ scope, cronId }).changes > 0
  }

  /** Of every scope, the enabled cron whose next occurrence is the earliest one due at `now` (ties: the older cron). */
  nextDue(now: number): CronRecord | undefined {
    const row = this.#sql.nextDue.get({ now })
    return row && toRecord(row)
  }

  /** When the earliest occurrence of any enabled cron falls (epoch ms); undefined when none is left. */
  earliestOccurrence(): number | undefined {
    return this.#sql.earliest.get() ?? undefined
  }

  setNextRun(seq: number, nextRunAt: number | null): void {
    this.#sql.setNextRun.run({ seq, nextRunAt })
  }
}
