// Feedback on runs, as the tracing service keeps it: presigned tokens (handed out when a run
// created with `feedback_keys` succeeds, or created through the API), submissions with a token
// (the token is the authorization), feedback records, and a run's trace with its feedback stats.
// Who sees what: the root agent server's runs belong to no workspace; a deployed agent's runs
// belong to its deployment's workspace; feedback on no run to the workspace that wrote it.

import type { Clock } from '../clock.js'
import { runResult, type RunResult } from '../agent/run-executor.js'
import { MAX_DATETIME_MS, MIN_DATETIME_MS } from '../validation/datetime.js'
import type { Feedback, FeedbackRepository, FeedbackToken } from '../store/feedback.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { Conflict, Expired, NotFound, RuleViolation } from './errors.js'

export interface FeedbackServiceOptions {
  feedback: FeedbackRepository
  runs: RunRepository
  threads: ThreadRepository
  clock: Clock
  /** Token lifetime when a request does not say (seconds). */
  ttlSeconds: number
  /** The workspace of a deployment (a run's scope); undefined once it is deleted. */
  workspaceOf: (deploymentId: string) => string | undefined
}

/** What a submission with a token carries. */
export interface Submission {
  score: unknown
  value: unknown
  comment: string | null
  correction: unknown
  metadata: Record<string, unknown> | null
}

/** A token as the API creates it: for a run and key, with an expiry in one of two forms. */
export interface TokenRequest {
  run_id: string
  feedback_key: string
  expires_in?: { days?: number | null; hours?: number | null; minutes?: number | null } | null
  expires_at?: string | null
  feedback_config?: unknown
}

/** Feedback as the API creates it. */
export interface FeedbackRequest {
  id?: string | null
  run_id?: string | null
  key: string
  score?: unknown
  value?: unknown
  comment?: string | null
  correction?: unknown
  feedback_source?: { type?: string | null; metadata?: Record<string, unknown> | null } | null
  feedback_config?: unknown
}

export interface FeedbackFilter {
  runs?: string[] | null
  keys?: string[] | null
  sources?: string[] | null
  hasComment?: boolean | null
  hasScore?: boolean | null
}

export class FeedbackService {
  readonly #o: FeedbackServiceOptions

  constructor(options: FeedbackServiceOptions) {
    this.#o = options
  }

  /**
   * The `feedback` event of a successful run created with `feedback_keys`: one token per key, each
   * mapped to its URL. Runs inside the transaction that records the run's completion.
   */
  issueForRun(run: Run, base: string): { event: string; data: unknown }[] {
    const keys = run.kwargs.feedback_keys
    if (!keys?.length) return []
    const expiresAt = this.#o.clock.now() + this.#o.ttlSeconds * 1000
    const urls = Object.fromEntries(keys.map((key) =>
      [key, this.#o.feedback.createToken({ runId: run.run_id, scope: run.scope, key, config: null, expiresAt, baseUrl: base }).url]))
    return [{ event: 'feedback', data: urls }]
  }

  /** A submission with a token: a new record on the token's run, under its key, every time until it expires. */
  submit(tokenId: string, input: Submission): Feedback {
    const token = this.#o.feedback.token(tokenId)
    // A token of a run that is gone (its thread was deleted) records nothing: it is as unknown.
    const run = token && this.#o.runs.find(token.run_id)
    if (!token || !run) throw new NotFound('Feedback ingest token not found')
    if (this.#o.clock.now() >= token.expiresAtMs) throw new Expired('Feedback ingest token has expired')
    return this.#o.feedback.create({
      runId: token.run_id,
      scope: run.scope,
      tenantId: null,
      key: token.feedback_key,
      score: input.score,
      value: input.value,
      comment: input.comment,
      correction: input.correction,
      source: { type: 'app', metadata: input.metadata ?? {}, user_id: null },
      config: token.feedback_config,
      tokenId: token.id,
    })
  }

  /** Tokens for runs the workspace sees; every request is checked (its run, its expiry) before any token is written. */
  createTokens(workspace: string, requests: TokenRequest[], base: string): FeedbackToken[] {
    const planned = requests.map((request) => ({ request, run: this.#runOf(request.run_id, workspace), expiresAt: this.#expiry(request) }))
    return planned.map(({ request, run, expiresAt }) => this.#o.feedback.createToken({
      runId: run.run_id, scope: run.scope, key: request.feedback_key, config: request.feedback_config ?? null, expiresAt, baseUrl: base,
    }))
  }

  /** The tokens of a run the workspace sees (none for any other run). */
  tokensOf(workspace: string, runId: string): FeedbackToken[] {
    return this.#visible(this.#o.runs.find(runId), workspace) ? this.#o.feedback.tokensForRun(runId) : []
  }

  /** Records the workspace sees, newest first. */
  list(workspace: string, filter: FeedbackFilter): Feedback[] {
    return this.#seen(this.#o.feedback.list({ runs: filter.runs, keys: filter.keys, sources: filter.sources }, workspace), workspace)
      .filter((f) => filter.hasComment == null || (f.comment !== null) === filter.hasComment)
      .filter((f) => filter.hasScore == null || (f.score !== null) === filter.hasScore)
  }

  /** A record written through the API, on a run the workspace sees or on none. */
  create(workspace: string, request: FeedbackRequest): Feedback {
    const run = request.run_id ? this.#runOf(request.run_id, workspace) : undefined
    if (request.id && this.#o.feedback.exists(request.id)) throw new Conflict(`Feedback ${request.id} already exists`)
    return this.#o.feedback.create({
      id: request.id ?? undefined,
      runId: run?.run_id ?? null,
      scope: run?.scope ?? null,
      tenantId: workspace,
      key: request.key,
      score: request.score ?? null,
      value: request.value ?? null,
      comment: request.comment ?? null,
      correction: request.correction ?? null,
      source: { type: request.feedback_source?.type ?? 'api', metadata: request.feedback_source?.metadata ?? {}, user_id: null },
      config: request.feedback_config ?? null,
      tokenId: null,
    })
  }

  get(workspace: string, id: string): Feedback {
    const found = this.#o.feedback.get(id, workspace)
    if (!found || this.#seen([found], workspace).length === 0) throw new NotFound(`Feedback ${id} not found`)
    return found
  }

  /** A run's trace as the tracing service shows it, with its feedback stats. */
  trace(workspace: string, runId: string) {
    const run = this.#runOf(runId, workspace)
    const active = run.status === 'pending' || run.status === 'running'
    return runTrace(run, active ? null : runResult(this.#o.runs, this.#o.threads, run), this.#o.feedback.list({ runs: [runId] }, workspace))
  }

  #visible(run: Run | undefined, workspace: string): run is Run {
    return run !== undefined && (run.scope === '' || this.#o.workspaceOf(run.scope) === workspace)
  }

  #runOf(runId: string, workspace: string): Run {
    const run = this.#o.runs.find(runId)
    if (!this.#visible(run, workspace)) throw new NotFound(`Run ${runId} not found`)
    return run
  }

  /** Records on runs the workspace sees, or on no run. */
  #seen(records: Feedback[], workspace: string): Feedback[] {
    const allowed = new Map<string, boolean>()
    const may = (runId: string) => allowed.get(runId) ?? allowed.set(runId, this.#visible(this.#o.runs.find(runId), workspace)).get(runId)!
    return records.filter((f) => f.run_id === null || may(f.run_id))
  }

  #expiry(request: TokenRequest): number {
    const now = this.#o.clock.now()
    const d = request.expires_in
    const at = request.expires_at ? Date.parse(request.expires_at)
      : d && (d.days || d.hours || d.minutes) ? now + (((d.days ?? 0) * 24 + (d.hours ?? 0)) * 60 + (d.minutes ?? 0)) * 60_000
        : now + this.#o.ttlSeconds * 1000
    // What Python's datetime can hold (years 1 to 9999); beyond, the real service could not answer either.
    if (!(at >= MIN_DATETIME_MS && at <= MAX_DATETIME_MS)) throw new RuleViolation('The token\'s expiry is outside the dates a datetime can hold (years 1 to 9999).')
    return at
  }
}

/** A run's trace; `result` is null while it is still pending or running. */
function runTrace(run: Run, result: RunResult | null, records: Feedback[]) {
  const failed = result !== null && '__error__' in result
  const error = failed ? (result.__error__ as { error?: string; message?: string }) : null
  const input = run.kwargs.input
  return {
    id: run.run_id,
    name: String(run.metadata.graph_id ?? 'LangGraph'),
    run_type: 'chain',
    start_time: run.created_at,
    end_time: result === null ? null : run.updated_at,
    status: run.status,
    inputs: input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input },
    outputs: result === null || failed ? null : (result as Record<string, unknown>),
    error: error ? `${error.error}: ${error.message}` : null,
    trace_id: run.run_id,
    dotted_order: dottedOrder(run.created_at, run.run_id),
    parent_run_id: null,
    session_id: null,
    tags: [],
    extra: { metadata: run.metadata },
    feedback_stats: feedbackStats(records),
    child_run_ids: [],
  }
}

/** `20250101T000000123000Z<run id>`: the start time to the microsecond, then the id (a root run). */
const dottedOrder = (startIso: string, id: string) => `${startIso.replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z')}${id}`

/** Per key: count, mean and deviation of numeric scores, and counts of values. */
function feedbackStats(records: Feedback[]) {
  const byKey = new Map<string, Feedback[]>()
  for (const record of records) byKey.set(record.key, [...(byKey.get(record.key) ?? []), record])
  return Object.fromEntries([...byKey].map(([key, list]) => {
    const scores = list.map((f) => (typeof f.score === 'boolean' ? Number(f.score) : f.score)).filter((s): s is number => typeof s === 'number')
    const avg = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null
    const stdev = avg === null ? null : Math.sqrt(scores.reduce((a, s) => a + (s - avg) ** 2, 0) / scores.length)
    const values: Record<string, number> = {}
    for (const f of list) if (f.value !== null && typeof f.value !== 'object') values[String(f.value)] = (values[String(f.value)] ?? 0) + 1
    return [key, { n: list.length, avg, stdev, errors: 0, values }]
  }))
}
