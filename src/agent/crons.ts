// The agent server's crons: runs created on a schedule, on one thread (a thread cron) or each on a
// new thread (a stateless cron). What a cron holds, how it is searched, patched and shown, and what
// one occurrence does (a run created from the cron's payload, as POST /runs would create it) are
// here; when occurrences fall is cron-schedule.ts, and what drives them over the clock is
// cron-scheduler.ts. docs/agent-server-wire.md ("Crons") says what hangar follows and why. In
// `HANGAR_AGENT_AUTH=users` a cron is its creator's, as a thread is (`metadata.owner`, and its
// `user_id`): another user does not find it, and its runs act as its creator.

import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import { asksForOthers, owns, withOwner, type AgentUsers, type Caller } from '../domain/agent-users.js'
import { NotFound } from '../domain/errors.js'
import type { RunCreate } from '../schemas/agent.js'
import type { CronFilter, CronRecord, CronRepository } from '../store/crons.js'
import type { Run } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { nextOccurrence } from './cron-schedule.js'
import { threadNotFound, type RequestContext, type RunRequests } from './run-requests.js'

type JsonObject = Record<string, unknown>

/** A cron as the API shows it: the fields of the document's Cron, with the SDK's `timezone` and `on_run_completed`. */
export interface CronView {
  cron_id: string
  assistant_id: string
  thread_id: string | null
  on_run_completed: 'keep' | 'delete' | null
  end_time: string | null
  schedule: string
  timezone: string | null
  created_at: string
  updated_at: string
  user_id: string | null
  payload: JsonObject
  next_run_date: string | null
  metadata: JsonObject
  enabled: boolean
}

/** The fields of a cron request that are the cron's own; every other field is the run body of each occurrence. */
const CRON_FIELDS: ReadonlySet<string> = new Set(['schedule', 'timezone', 'end_time', 'enabled', 'on_run_completed'])

/** A cron create request, validated (the run body's fields besides these). */
export interface CronRequest {
  assistant_id: string
  schedule: string
  timezone?: string | null
  end_time?: string | null
  enabled?: boolean | null
  on_run_completed?: 'keep' | 'delete' | null
  metadata?: JsonObject | null
  /** Where each occurrence's run POSTs its outcome. */
  webhook?: string | null
  [field: string]: unknown
}

/** A cron patch, with only the fields the client named (run body fields besides these). */
export interface CronPatch {
  schedule?: string
  timezone?: string | null
  end_time?: string | null
  enabled?: boolean | null
  on_run_completed?: 'keep' | 'delete' | null
  metadata?: JsonObject | null
  webhook?: string | null
  [field: string]: unknown
}

export type CronSortField = 'cron_id' | 'assistant_id' | 'thread_id' | 'next_run_date' | 'end_time' | 'created_at' | 'updated_at'
export interface CronSearch {
  filter: CronFilter
  sortBy: CronSortField
  order: 'asc' | 'desc'
  limit: number
  offset: number
}

export const cronNotFound = (id: string) => new NotFound(`Cron with ID ${id} not found`)

/** An ISO date-time as epoch ms; one without an offset is read as UTC (as the real server stores it). */
function instant(text: string): number {
  const zoned = /(?:[zZ]|[+-]\d\d:?\d\d)$/.test(text) || !text.includes('T') ? text : `${text}Z`
  return Date.parse(zoned)
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
const defined = (body: JsonObject) => Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined))
const runFields = (body: JsonObject) => defined(Object.fromEntries(Object.entries(body).filter(([field]) => !CRON_FIELDS.has(field))))

export interface CronsOptions {
  crons: CronRepository
  threads: ThreadRepository
  runRequests: RunRequests
  clock: Clock
  /** Called after every change to what is scheduled (the scheduler looks again). */
  onChange: () => void
}

export class AgentCrons {
  readonly #o: CronsOptions

  constructor(options: CronsOptions) {
    this.#o = options
  }

  /** A cron on a thread (which must exist, and be the caller's), or (`threadId` null) a stateless one. */
  create(context: Pick<RequestContext, 'scope' | 'publicBase'>, threadId: string | null, body: CronRequest, caller: Caller): CronView {
    const { crons, threads, runRequests, clock } = this.#o
    const assistant = runRequests.assistant(context.scope, body.assistant_id)
    runRequests.checkWebhook(body.webhook)
    let threadSeq: number | null = null
    if (threadId !== null) {
      const thread = threads.get(context.scope, threadId)
      if (!thread || !owns(caller, thread.metadata)) throw threadNotFound(threadId)
      threadSeq = thread.seq
    }
    const now = clock.now()
    const timezone = body.timezone ?? null
    const endTime = body.end_time == null ? null : instant(body.end_time)
    const enabled = body.enabled ?? true
    const created = crons.insert(context.scope, {
      cronId: randomUUID(),
      assistantId: assistant.assistant_id,
      threadSeq,
      userId: caller?.identity ?? null,
      schedule: body.schedule,
      timezone,
      endTime,
      enabled,
      onRunCompleted: threadId === null ? body.on_run_completed ?? 'delete' : null,
      payload: runFields(body),
      metadata: withOwner(caller, body.metadata ?? {}),
      publicBase: context.publicBase,
      nextRunAt: enabled ? nextOccurrence(body.schedule, timezone, now, endTime) : null,
    }, now)
    this.#o.onChange()
    return this.#present(created, now)
  }

  get(scope: string, cronId: string, caller: Caller): CronView {
    return this.#present(this.#find(scope, cronId, caller), this.#o.clock.now())
  }

  /** The crons that match (of the caller's own), sorted and paged, and how many match in all. */
  search(scope: string, query: CronSearch, caller: Caller): { items: CronView[]; total: number } {
    const now = this.#o.clock.now()
    const views = this.#list(scope, query.filter, caller).map((cron) => ({ seq: cron.seq, view: this.#present(cron, now) }))
    const sign = query.order === 'asc' ? 1 : -1
    views.sort((a, b) => sign * (compare(a.view[query.sortBy], b.view[query.sortBy]) || a.seq - b.seq))
    return { items: views.slice(query.offset, query.offset + query.limit).map((each) => each.view), total: views.length }
  }

  count(scope: string, filter: CronFilter, caller: Caller): number {
    return this.#list(scope, filter, caller).length
  }

  /** The scope's crons that match the filter and are the caller's (a filter naming another owner matches none). */
  #list(scope: string, filter: CronFilter, caller: Caller): CronRecord[] {
    if (asksForOthers(caller, filter.metadata)) return []
    return this.#o.crons.list(scope, { ...filter, metadata: withOwner(caller, filter.metadata) })
  }

  /**
   * Changes what the patch names. Metadata is merged into the cron's; the run body's fields replace
   * the payload's (null removes one). A new schedule, timezone or end time, or enabling the cron,
   * schedules its next occurrence from now: what fell while it was disabled never fires.
   */
  patch(scope: string, cronId: string, patch: CronPatch, caller: Caller): CronView {
    const { crons, clock } = this.#o
    const cron = this.#find(scope, cronId, caller)
    this.#o.runRequests.checkWebhook(patch.webhook)
    const now = clock.now()
    const schedule = patch.schedule ?? cron.schedule
    const timezone = 'timezone' in patch ? patch.timezone ?? null : cron.timezone
    const endTime = 'end_time' in patch ? (patch.end_time == null ? null : instant(patch.end_time)) : cron.endTime
    const enabled = patch.enabled ?? cron.enabled
    // The owner stays the creator, whatever the patch says.
    const metadata = patch.metadata ? withOwner(caller, { ...cron.metadata, ...patch.metadata }) : cron.metadata
    const payload = defined({ ...cron.payload, ...runFields(patch), ...(patch.metadata ? { metadata } : {}) })
    for (const [field, value] of Object.entries(payload)) if (value === null) delete payload[field]
    const rescheduled = ['schedule', 'timezone', 'end_time'].some((field) => field in patch) || (enabled && !cron.enabled)
    const nextRunAt = !enabled ? null : rescheduled ? nextOccurrence(schedule, timezone, now, endTime) : cron.nextRunAt
    const updated = crons.update(cron, {
      schedule, timezone, endTime, enabled, metadata, payload, nextRunAt,
      onRunCompleted: cron.threadId === null ? patch.on_run_completed ?? cron.onRunCompleted : null,
    }, now)
    this.#o.onChange()
    return this.#present(updated, now)
  }

  delete(scope: string, cronId: string, caller: Caller): void {
    this.#find(scope, cronId, caller)
    this.#o.crons.delete(scope, cronId)
    this.#o.onChange()
  }

  /** The cron, if it is there for the caller: another user's is not found. */
  #find(scope: string, cronId: string, caller: Caller): CronRecord {
    const cron = this.#o.crons.get(scope, cronId)
    if (!cron || !owns(caller, cron.metadata)) throw cronNotFound(cronId)
    return cron
  }

  /** The cron as the API shows it at `now`: its next run is the stored one if still ahead, else the first after now. */
  #present(cron: CronRecord, now: number): CronView {
    const next = cron.enabled && cron.nextRunAt !== null && cron.nextRunAt > now
      ? cron.nextRunAt
      : nextOccurrence(cron.schedule, cron.timezone, now, cron.endTime)
    return {
      cron_id: cron.cronId,
      assistant_id: cron.assistantId,
      thread_id: cron.threadId,
      on_run_completed: cron.onRunCompleted,
      end_time: iso(cron.endTime),
      schedule: cron.schedule,
      timezone: cron.timezone,
      created_at: new Date(cron.createdAt).toISOString(),
      updated_at: new Date(cron.updatedAt).toISOString(),
      user_id: cron.userId,
      payload: cron.payload,
      next_run_date: iso(next),
      metadata: cron.metadata,
      enabled: cron.enabled,
    }
  }
}

/**
 * The run one occurrence of a cron creates: its payload, on its thread (queued behind a run in
 * progress unless the payload says otherwise), or on a new thread kept or deleted when it ends.
 * A user's cron runs as that user (`users` tells its permissions): the thread it creates is the
 * user's, and the run's config carries the user, as a run the user created would.
 */
export function runOccurrence(runRequests: RunRequests, cron: CronRecord, users: Pick<AgentUsers, 'actingAs'>): Run {
  const body = {
    ...cron.payload,
    assistant_id: cron.assistantId,
    ...(cron.threadId === null
      ? { on_completion: cron.onRunCompleted ?? 'delete' }
      : { multitask_strategy: cron.payload.multitask_strategy ?? 'enqueue' }),
  } as RunCreate
  const user = cron.userId === null ? null : users.actingAs(cron.userId)
  return runRequests.create({ scope: cron.scope, headers: {}, publicBase: cron.publicBase, user }, cron.threadId, body)
}

/** Ascending order of two field values; null after every value (as Postgres sorts NULLs). */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return 1
  if (b === null || b === undefined) return -1
  return String(a) < String(b) ? -1 : 1
}
