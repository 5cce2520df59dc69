import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import { iso, type Db } from './db.js'

interface TokenRow {
  id: string
  run_id: string
  feedback_key: string
  feedback_config: string | null
  url: string
  expires_at: number
  created_at: number
  scope: string | null
}

interface FeedbackRow {
  seq: number
  id: string
  run_id: string | null
  key: string
  score: string | null
  value: string | null
  comment: string | null
  correction: string | null
  feedback_source: string | null
  feedback_config: string | null
  token_id: string | null
  created_at: number
  modified_at: number
  scope: string | null
  tenant_id: string | null
}

export interface FeedbackToken {
  id: string
  url: string
  expires_at: string
  feedback_key: string
  run_id: string
  expiresAtMs: number
  feedback_config: unknown
}

export interface NewFeedback {
  runId: string | null
  /** The agent-server scope of the run (null for feedback on no run). */
  scope: string | null
  /** The workspace that wrote it through the API (null when written with a token). */
  tenantId: string | null
  key: string
  score: unknown
  value: unknown
  comment: string | null
  correction: unknown
  source: { type: string | null; metadata: Record<string, unknown> | null; user_id: string | null; ls_user_id?: string | null }
  config: unknown
  tokenId: string | null
  id?: string
}

/** Who gave a record, as the API shows it. */
export interface FeedbackSource {
  type: string | null
  metadata: Record<string, unknown> | null
  user_id: string | null
  ls_user_id: string | null
  user_name: string | null
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value))
const parse = (text: string | null) => (text === null ? null : JSON.parse(text))

function toToken(row: TokenRow): FeedbackToken {
  return {
    id: row.id,
    url: row.url,
    expires_at: iso(row.expires_at),
    feedback_key: row.feedback_key,
    run_id: row.run_id,
    expiresAtMs: row.expires_at,
    feedback_config: parse(row.feedback_config),
  }
}

/** A feedback record as the API shows it (FeedbackSchema). */
function toFeedback(row: FeedbackRow) {
  const source = parse(row.feedback_source) as Record<string, unknown> | null
  return {
    created_at: iso(row.created_at),
    modified_at: iso(row.modified_at),
    key: row.key,
    score: parse(row.score),
    value: parse(row.value),
    comment: row.comment,
    correction: parse(row.correction),
    feedback_group_id: null,
    comparative_experiment_id: null,
    run_id: row.run_id,
    session_id: null as string | null,
    id: row.id,
    trace_id: row.run_id,
    start_time: null,
    is_root: true,
    feedback_source: source && ({ type: null, metadata: null, user_id: null, ls_user_id: null, user_name: null, ...source } as FeedbackSource),
    extra: row.feedback_config === null ? null : { feedback_config: parse(row.feedback_config) },
    feedback_thread_id: null,
  }
}
export type Feedback = ReturnType<typeof toFeedback>

const ownedOrOnARun = (row: FeedbackRow, workspace: string) => row.run_id !== null || row.tenant_id === workspace

/** Presigned feedback tokens and the feedback records on runs. */
export class FeedbackRepository {
  readonly #clock: Clock
  readonly #sql

  constructor(db: Db, clock: Clock) {
    this.#clock = clock
    this.#sql = {
      insertToken: db.prepare(`INSERT INTO feedback_tokens (id, run_id, feedback_key, feedback_config, url, expires_at, created_at, scope)
        VALUES (@id, @run_id, @key, @config, @url, @expires_at, @now, @scope)`),
      token: db.prepare<[string], TokenRow>('SELECT * FROM feedback_tokens WHERE id = ?'),
      tokens: db.prepare<[string], TokenRow>('SELECT * FROM feedback_tokens WHERE run_id = ? ORDER BY created_at, rowid'),
      insert: db.prepare(`INSERT INTO feedback
        (id, run_id, key, score, value, comment, correction, feedback_source, feedback_config, token_id, created_at, modified_at, scope, tenant_id)
        VALUES (@id, @run_id, @key, @score, @value, @comment, @correction, @source, @config, @token_id, @now, @now, @scope, @tenant_id)`),
      get: db.prepare<[string], FeedbackRow>('SELECT * FROM feedback WHERE id = ?'),
      all: db.prepare<[], FeedbackRow>('SELECT * FROM feedback ORDER BY seq DESC'),
      forRun: db.prepare<[string], FeedbackRow>('SELECT * FROM feedback WHERE run_id = ? ORDER BY seq DESC'),
      update: db.prepare(`UPDATE feedback SET score = @score, value = @value, comment = @comment, correction = @correction,
        feedback_config = @config, modified_at = @now WHERE id = @id`),
      delete: db.prepare('DELETE FROM feedback WHERE id = ?'),
    }
  }

  /** A token for (run, key): its id is a random UUID v4 from the CSPRNG, and it is the authorization. */
  createToken(input: { runId: string; scope: string; key: string; config: unknown; expiresAt: number; baseUrl: string }): FeedbackToken {
    const id = randomUUID()
    this.#sql.insertToken.run({
      id,
      run_id: input.runId,
      key: input.key,
      config: json(input.config),
      url: `${input.baseUrl}/api/v1/feedback/tokens/${id}`,
      expires_at: input.expiresAt,
      now: this.#clock.now(),
      scope: input.scope,
    })
    return toToken(this.#sql.token.get(id)!)
  }

  token(id: string): FeedbackToken | undefined {
    const row = this.#sql.token.get(id)
    return row && toToken(row)
  }

  tokensForRun(runId: string): FeedbackToken[] {
    return this.#sql.tokens.all(runId).map(toToken)
  }

  create(input: NewFeedback): Feedback {
    const id = input.id ?? randomUUID()
    this.#sql.insert.run({
      id,
      run_id: input.runId,
      key: input.key,
      score: json(input.score),
      value: json(input.value),
      comment: input.comment,
      correction: json(input.correction),
      source: JSON.stringify(input.source),
      config: json(input.config),
      token_id: input.tokenId,
      now: this.#clock.now(),
      scope: input.scope,
      tenant_id: input.tenantId,
    })
    return toFeedback(this.#sql.get.get(id)!)
  }

  /** Replaces a record's editable fields (what a PATCH leaves out, the caller passes as it was). */
  update(id: string, fields: { score: unknown; value: unknown; comment: string | null; correction: unknown; config: unknown }): Feedback | undefined {
    const { changes } = this.#sql.update.run({
      id, score: json(fields.score), value: json(fields.value), comment: fields.comment, correction: json(fields.correction), config: json(fields.config), now: this.#clock.now(),
    })
    return changes ? toFeedback(this.#sql.get.get(id)!) : undefined
  }

  /** Removes a record; whether there was one. */
  delete(id: string): boolean {
    return this.#sql.delete.run(id).changes > 0
  }

  /** Whether a record with this id exists, for anyone. */
  exists(id: string): boolean {
    return this.#sql.get.get(id) !== undefined
  }

  /** A record, unless it is on no run and another workspace wrote it. */
  get(id: string, workspace: string): Feedback | undefined {
    const row = this.#sql.get.get(id)
    return row && ownedOrOnARun(row, workspace) ? toFeedback(row) : undefined
  }

  /** Newest first, filtered by runs, keys and source types; feedback on no run only where `workspace` wrote it. */
  list(filter: { runs?: string[] | null; keys?: string[] | null; sources?: string[] | null }, workspace: string): Feedback[] {
    const rows = filter.runs?.length === 1 ? this.#sql.forRun.all(filter.runs[0]) : this.#sql.all.all()
    return rows
      .filter((row) => ownedOrOnARun(row, workspace))
      .map(toFeedback)
      .filter((f) =>
        (!filter.runs?.length || (f.run_id !== null && filter.runs.includes(f.run_id))) &&
        (!filter.keys?.length || filter.keys.includes(f.key)) &&
        (!filter.sources?.length || filter.sources.includes(String(f.feedback_source?.type))),
      )
  }
}
