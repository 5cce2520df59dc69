// Feedback on runs, as the tracing service serves it: presigned tokens (handed out by a run's
// `feedback` event, or created through the API), submissions with a token (no credentials — the
// token is the authorization), feedback records, and the run's trace with its feedback stats.
// Every route is served under /api/v1 and again without it (the tracing SDKs call the latter).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Clock } from '../clock.js'
import { runResult } from '../agent/runs.js'
import { ApiError } from '../errors.js'
import { MAX_DATETIME_MS, MIN_DATETIME_MS } from '../validation/datetime.js'
import { publicBase } from '../public-url.js'
import { errorResponses } from '../schemas/common.js'
import {
  Feedback,
  FeedbackCreate,
  FeedbackIngestToken,
  FeedbackListQuery,
  FeedbackParams,
  FeedbackWithToken,
  FeedbackWithTokenQuery,
  RunTrace,
  RunTraceParams,
  TokenCreateBody,
  TokenListQuery,
  TokenParams,
  type FeedbackIngestTokenCreate,
} from '../schemas/feedback.js'
import type { Feedback as FeedbackRecord, FeedbackRepository, FeedbackToken } from '../store/feedback.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'

export interface FeedbackRoutesOptions {
  feedback: FeedbackRepository
  runs: RunRepository
  threads: ThreadRepository
  clock: Clock
  /** Token lifetime when a request does not say (seconds). */
  ttlSeconds: number
  publicUrl: string
  /** The workspace of a deployment (a run's scope); undefined once it is deleted. */
  workspaceOf: (deploymentId: string) => string | undefined
}

const tags = ['Feedback']
const presentToken = ({ id, url, expires_at, feedback_key }: FeedbackToken) => ({ id, url, expires_at, feedback_key })

/**
 * The `feedback` event of a successful run created with `feedback_keys`: one token per key, each
 * mapped to its URL. Runs inside the transaction that records the run's completion.
 */
export function issueRunFeedback(feedback: FeedbackRepository, clock: Clock, ttlSeconds: number, run: Run, base: string) {
  const keys = run.kwargs.feedback_keys
  if (!keys?.length) return []
  const expiresAt = clock.now() + ttlSeconds * 1000
  const urls = Object.fromEntries(keys.map((key) => [key, feedback.createToken({ runId: run.run_id, key, config: null, expiresAt, baseUrl: base }).url]))
  return [{ event: 'feedback', data: urls }]
}

/** `correction` in a GET query is URL-encoded JSON text; text that is not JSON is kept as it is. */
function parseCorrection(text: string | null | undefined): unknown {
  if (text == null) return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Submissions with a token: no credentials, callable from a browser page on any origin. */
export const feedbackTokenRoutes: FastifyPluginAsyncTypebox<FeedbackRoutesOptions> = async (app, { feedback, runs, clock }) => {
  const usable = (id: string) => {
    const token = feedback.token(id)
    // A token of a run that is gone (its thread was deleted) records nothing: it is as unknown.
    if (!token || !runs.find(token.run_id)) throw ApiError.notFound('Feedback ingest token not found')
    if (clock.now() >= token.expiresAtMs) throw new ApiError(410, 'Feedback ingest token has expired')
    return token
  }
  const submit = (token: FeedbackToken, input: { score: unknown; value: unknown; comment: string | null; correction: unknown; metadata: Record<string, unknown> | null }) =>
    feedback.create({
      runId: token.run_id,
      key: token.feedback_key,
      score: input.score,
      value: input.value,
      comment: input.comment,
      correction: input.correction,
      source: { type: 'app', metadata: input.metadata ?? {}, user_id: null },
      config: token.feedback_config,
      tokenId: token.id,
    })

  app.post('/feedback/tokens/:token', {
    schema: {
      operationId: 'create_feedback_with_token_post_api_v1_feedback_tokens__token__post', tags, summary: 'Create Feedback With Token Post',
      params: TokenParams, body: FeedbackWithToken, response: { 200: Feedback, ...errorResponses(404, 410, 422) },
    },
  }, async (request) => {
    const body = request.body
    return submit(usable(request.params.token), {
      score: body.score ?? null, value: body.value ?? null, comment: body.comment ?? null, correction: body.correction ?? null, metadata: body.metadata ?? null,
    })
  })

  app.get('/feedback/tokens/:token', {
    schema: {
      operationId: 'create_feedback_with_token_get_api_v1_feedback_tokens__token__get', tags, summary: 'Create Feedback With Token Get',
      params: TokenParams, querystring: FeedbackWithTokenQuery, response: { 200: Feedback, ...errorResponses(404, 410, 422) },
    },
  }, async (request) => {
    const q = request.query
    // GET takes no metadata, as the real service's framework ignores unknown query parameters.
    if (new URL(request.url, 'http://hangar').searchParams.has('metadata')) {
      request.log.warn({ token: request.params.token }, 'metadata is not supported on GET feedback submissions; ignored')
    }
    return submit(usable(request.params.token), {
      score: q.score ?? null, value: q.value ?? null, comment: q.comment ?? null, correction: parseCorrection(q.correction), metadata: null,
    })
  })
}

/** Token creation and listing, feedback records and run traces: these need an API key. */
export const tracingRoutes: FastifyPluginAsyncTypebox<FeedbackRoutesOptions> = async (app, options) => {
  const { feedback, runs, threads, clock } = options
  /** The root agent server's runs belong to no workspace; a deployed agent's to its deployment's. */
  const visible = (run: Run | undefined, tenantId: string): run is Run =>
    run !== undefined && (run.scope === '' || options.workspaceOf(run.scope) === tenantId)
  const runOf = (runId: string, tenantId: string) => {
    const run = runs.find(runId)
    if (!visible(run, tenantId)) throw ApiError.notFound(`Run ${runId} not found`)
    return run
  }
  /** Feedback the workspace may see: on its runs (or on no run). */
  const seen = (records: FeedbackRecord[], tenantId: string) => {
    const allowed = new Map<string, boolean>()
    const may = (runId: string) => allowed.get(runId) ?? allowed.set(runId, visible(runs.find(runId), tenantId)).get(runId)!
    return records.filter((f) => f.run_id === null || may(f.run_id))
  }
  const expiry = (input: FeedbackIngestTokenCreate) => {
    const d = input.expires_in
    const at = input.expires_at ? Date.parse(input.expires_at)
      : d && (d.days || d.hours || d.minutes) ? clock.now() + (((d.days ?? 0) * 24 + (d.hours ?? 0)) * 60 + (d.minutes ?? 0)) * 60_000
        : clock.now() + options.ttlSeconds * 1000
    // What Python's datetime can hold (years 1 to 9999); beyond, the real service could not answer either.
    if (!(at >= MIN_DATETIME_MS && at <= MAX_DATETIME_MS)) throw ApiError.badRequest('The token\'s expiry is outside the dates a datetime can hold (years 1 to 9999).')
    return at
  }

  app.post('/feedback/tokens', {
    schema: {
      operationId: 'create_feedback_ingest_token_api_v1_feedback_tokens_post', tags, summary: 'Create Feedback Ingest Token',
      body: TokenCreateBody, response: { 200: Type.Union([FeedbackIngestToken, Type.Array(FeedbackIngestToken)]), ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const base = publicBase(request, options.publicUrl)
    // Every item is checked (its run, its expiry) before any token is written.
    const inputs = [request.body].flat().map((input) => ({ input, runId: runOf(input.run_id, request.tenantId).run_id, expiresAt: expiry(input) }))
    const created = inputs.map(({ input, runId, expiresAt }) =>
      presentToken(feedback.createToken({ runId, key: input.feedback_key, config: input.feedback_config ?? null, expiresAt, baseUrl: base })))
    return Array.isArray(request.body) ? created : created[0]
  })

  app.get('/feedback/tokens', {
    schema: {
      operationId: 'list_feedback_ingest_tokens_api_v1_feedback_tokens_get', tags, summary: 'List Feedback Ingest Tokens',
      querystring: TokenListQuery, response: { 200: Type.Array(FeedbackIngestToken), ...errorResponses(422) },
    },
  }, async (request) => {
    const { run_id: runId, offset, limit } = request.query
    if (!visible(runs.find(runId), request.tenantId)) return []
    return feedback.tokensForRun(runId).slice(offset!, offset! + limit!).map(presentToken)
  })

  app.get('/feedback', {
    schema: {
      operationId: 'read_feedbacks_api_v1_feedback_get', tags, summary: 'Read Feedbacks',
      querystring: FeedbackListQuery, response: { 200: Type.Array(Feedback), ...errorResponses(422) },
    },
  }, async (request) => {
    const q = request.query
    const list = seen(feedback.list({ runs: q.run, keys: q.key, sources: q.source }), request.tenantId)
      .filter((f) => q.has_comment == null || (f.comment !== null) === q.has_comment)
      .filter((f) => q.has_score == null || (f.score !== null) === q.has_score)
    return list.slice(q.offset!, q.offset! + q.limit!)
  })

  app.post('/feedback', {
    schema: {
      operationId: 'create_feedback_api_v1_feedback_post', tags, summary: 'Create Feedback',
      body: FeedbackCreate, response: { 200: Feedback, ...errorResponses(404, 409, 422) },
    },
  }, async (request) => {
    const body = request.body
    if (body.run_id) runOf(body.run_id, request.tenantId)
    if (body.id && feedback.get(body.id)) throw ApiError.conflict(`Feedback ${body.id} already exists`)
    return feedback.create({
      id: body.id ?? undefined,
      runId: body.run_id ?? null,
      key: body.key,
      score: body.score ?? null,
      value: body.value ?? null,
      comment: body.comment ?? null,
      correction: body.correction ?? null,
      source: { type: body.feedback_source?.type ?? 'api', metadata: body.feedback_source?.metadata ?? {}, user_id: null },
      config: body.feedback_config ?? null,
      tokenId: null,
    })
  })

  app.get('/feedback/:feedback_id', {
    schema: {
      operationId: 'read_feedback_api_v1_feedback__feedback_id__get', tags, summary: 'Read Feedback',
      params: FeedbackParams, response: { 200: Feedback, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const found = feedback.get(request.params.feedback_id)
    if (!found || seen([found], request.tenantId).length === 0) throw ApiError.notFound(`Feedback ${request.params.feedback_id} not found`)
    return found
  })

  app.get('/runs/:run_id', {
    schema: {
      tags: ['Runs (tracing)'], summary: 'Read Run', description: 'The run\'s trace: inputs, outputs, status, times and feedback stats.',
      params: RunTraceParams, response: { 200: RunTrace, ...errorResponses(404, 422) },
    },
  }, async (request) => trace(runOf(request.params.run_id, request.tenantId), feedback.list({ runs: [request.params.run_id] }), runs, threads))
}

/** A run's trace; `feedback_stats` per key: count, mean of numeric scores, and counts of values. */
function trace(run: Run, records: FeedbackRecord[], runs: RunRepository, threads: ThreadRepository) {
  const active = run.status === 'pending' || run.status === 'running'
  const result = active ? null : runResult(runs, threads, run)
  const failed = result !== null && '__error__' in result
  const error = failed ? (result.__error__ as { error?: string; message?: string }) : null
  const input = run.kwargs.input
  return {
    id: run.run_id,
    name: String(run.metadata.graph_id ?? 'LangGraph'),
    run_type: 'chain',
    start_time: run.created_at,
    end_time: active ? null : run.updated_at,
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

function feedbackStats(records: FeedbackRecord[]) {
  const byKey = new Map<string, FeedbackRecord[]>()
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
