// Feedback on runs, as the tracing service keeps it: presigned tokens (handed out when a run
// created with `feedback_keys` succeeds, or created through the API), submissions with a token
// (the token is the authorization), and feedback records (created, read, updated, deleted).
// Who sees what: the root agent server's runs belong to no workspace; a deployed agent's runs
// belong to its deployment's workspace; feedback on no run to the workspace that wrote it.
// A record's `session_id` is its run's project (tracing-projects.ts); `feedback_source.user_id`
// is who wrote it through the API (the caller's id), null for a submission with a token.

import type { Clock } from '../clock.js'
import { MAX_DATETIME_MS, MIN_DATETIME_MS } from '../validation/datetime.js'
import type { Feedback, FeedbackRepository, FeedbackToken } from '../store/feedback.js'
import type { Run, RunRepository } from '../store/runs.js'
import { Conflict, Expired, NotFound, RuleViolation } from './errors.js'
import { projectIdOf, type TracingProjects } from './tracing-projects.js'

export interface FeedbackServiceOptions {
  feedback: FeedbackRepository
  runs: RunRepository
  projects: TracingProjects
  clock: Clock
  /** Token lifetime when a request does not say (seconds). */
  ttlSeconds: number
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
  /** The run's project, when the client names it (it must be the run's). */
  session_id?: string | null
}

/** A PATCH of a record: what it leaves out stays as it was; null clears. */
export interface FeedbackChanges {
  score?: unknown
  value?: unknown
  comment?: string | null
  correction?: unknown
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
    return this.#present(this.#o.feedback.create({
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
    }))
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
    return this.#presentAll(this.#seen(this.#o.feedback.list({ runs: filter.runs, keys: filter.keys, sources: filter.sources }, workspace), workspace)
      .filter((f) => filter.hasComment == null || (f.comment !== null) === filter.hasComment)
      .filter((f) => filter.hasScore == null || (f.score !== null) === filter.hasScore))
  }

  /** A record written through the API by `userId`, on a run the workspace sees or on none. */
  create(workspace: string, userId: string, request: FeedbackRequest): Feedback {
    const run = request.run_id ? this.#runOf(request.run_id, workspace) : undefined
    if (request.session_id && !run) {
      throw new RuleViolation('hangar keeps feedback on runs: feedback on a project (session_id without run_id) is not supported.')
    }
    if (request.session_id && run && request.session_id !== projectIdOf(run.scope)) throw new NotFound(`Run ${run.run_id} not found`)
    if (request.id && this.#o.feedback.exists(request.id)) throw new Conflict(`Feedback ${request.id} already exists`)
    return this.#present(this.#o.feedback.create({
      id: request.id ?? undefined,
      runId: run?.run_id ?? null,
      scope: run?.scope ?? null,
      tenantId: workspace,
      key: request.key,
      score: request.score ?? null,
      value: request.value ?? null,
      comment: request.comment ?? null,
      correction: request.correction ?? null,
      source: { type: request.feedback_source?.type ?? 'api', metadata: request.feedback_source?.metadata ?? {}, user_id: userId, ls_user_id: userId },
      config: request.feedback_config ?? null,
      tokenId: null,
    }))
  }

  get(workspace: string, id: string): Feedback {
    const found = this.#o.feedback.get(id, workspace)
    if (!found || this.#seen([found], workspace).length === 0) throw new NotFound(`Feedback ${id} not found`)
    return this.#present(found)
  }

  /** Changes what the PATCH names of a record the workspace sees; the rest stays. */
  update(workspace: string, id: string, changes: FeedbackChanges): Feedback {
    const current = this.get(workspace, id)
    const has = (field: keyof FeedbackChanges) => Object.hasOwn(changes, field)
    const updated = this.#o.feedback.update(id, {
      score: has('score') ? changes.score : current.score,
      value: has('value') ? changes.value : current.value,
      comment: has('comment') ? (changes.comment ?? null) : current.comment,
      correction: has('correction') ? changes.correction : current.correction,
      config: has('feedback_config') ? changes.feedback_config : (current.extra as { feedback_config?: unknown } | null)?.feedback_config ?? null,
    })
    if (!updated) throw new NotFound(`Feedback ${id} not found`)
    return this.#present(updated)
  }

  /** Deletes a record the workspace sees. */
  delete(workspace: string, id: string): void {
    this.get(workspace, id)
    if (!this.#o.feedback.delete(id)) throw new NotFound(`Feedback ${id} not found`)
  }

  /** A record with its run's project as `session_id`. */
  #present(record: Feedback): Feedback {
    const run = record.run_id === null ? undefined : this.#o.runs.find(record.run_id)
    return run ? { ...record, session_id: projectIdOf(run.scope) } : record
  }

  #presentAll(records: Feedback[]): Feedback[] {
    return records.map((r) => this.#present(r))
  }

  #visible(run: Run | undefined, workspace: string): run is Run {
    return run !== undefined && this.#o.projects.sees(run.scope, workspace)
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
