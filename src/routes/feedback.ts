// Feedback on runs, as the tracing service serves it (the rules are in domain/feedback.ts). Every
// route is served under /api/v1 and again without it (the tracing SDKs call the latter).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Config } from '../config.js'
import type { FeedbackService } from '../domain/feedback.js'
import { publicBase } from '../public-url.js'
import { errorResponses } from '../schemas/common.js'
import {
  Feedback,
  FeedbackCreate,
  FeedbackIngestToken,
  FeedbackListQuery,
  FeedbackParams,
  FeedbackWithToken,
  FeedbackUpdate,
  FeedbackWithTokenQuery,
  TokenCreateBody,
  TokenListQuery,
  TokenParams,
} from '../schemas/feedback.js'
import type { FeedbackToken } from '../store/feedback.js'
import { namedFields } from '../validation/request.js'

export interface FeedbackRoutesOptions {
  feedbackService: FeedbackService
  config: Pick<Config, 'publicUrl'>
}

const tags = ['Feedback']
const presentToken = ({ id, url, expires_at, feedback_key }: FeedbackToken) => ({ id, url, expires_at, feedback_key })

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
export const feedbackTokenRoutes: FastifyPluginAsyncTypebox<FeedbackRoutesOptions> = async (app, { feedbackService }) => {

  app.post('/feedback/tokens/:token', {
    schema: {
      operationId: 'create_feedback_with_token_post_api_v1_feedback_tokens__token__post', tags, summary: 'Create Feedback With Token Post',
      params: TokenParams, body: FeedbackWithToken, response: { 200: Feedback, ...errorResponses(404, 410, 422) },
    },
  }, async (request) => {
    const body = request.body
    return feedbackService.submit(request.params.token, {
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
    return feedbackService.submit(request.params.token, {
      score: q.score ?? null, value: q.value ?? null, comment: q.comment ?? null, correction: parseCorrection(q.correction), metadata: null,
    })
  })
}

/** Token creation and listing, and feedback records: these need an API key. */
export const tracingRoutes: FastifyPluginAsyncTypebox<FeedbackRoutesOptions> = async (app, { feedbackService, config }) => {
  app.post('/feedback/tokens', {
    schema: {
      operationId: 'create_feedback_ingest_token_api_v1_feedback_tokens_post', tags, summary: 'Create Feedback Ingest Token',
      body: TokenCreateBody, response: { 200: Type.Union([FeedbackIngestToken, Type.Array(FeedbackIngestToken)]), ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const created = feedbackService.createTokens(request.tenantId, [request.body].flat(), publicBase(request, config.publicUrl)).map(presentToken)
    return Array.isArray(request.body) ? created : created[0]
  })

  app.get('/feedback/tokens', {
    schema: {
      operationId: 'list_feedback_ingest_tokens_api_v1_feedback_tokens_get', tags, summary: 'List Feedback Ingest Tokens',
      querystring: TokenListQuery, response: { 200: Type.Array(FeedbackIngestToken), ...errorResponses(422) },
    },
  }, async (request) => {
    const { run_id: runId, offset, limit } = request.query
    return feedbackService.tokensOf(request.tenantId, runId).slice(offset!, offset! + limit!).map(presentToken)
  })

  app.get('/feedback', {
    schema: {
      operationId: 'read_feedbacks_api_v1_feedback_get', tags, summary: 'Read Feedbacks',
      querystring: FeedbackListQuery, response: { 200: Type.Array(Feedback), ...errorResponses(422) },
    },
  }, async (request) => {
    const q = request.query
    const list = feedbackService.list(request.tenantId, { runs: q.run, keys: q.key, sources: q.source, hasComment: q.has_comment, hasScore: q.has_score })
    return list.slice(q.offset!, q.offset! + q.limit!)
  })

  app.post('/feedback', {
    schema: {
      operationId: 'create_feedback_api_v1_feedback_post', tags, summary: 'Create Feedback',
      body: FeedbackCreate, response: { 200: Feedback, ...errorResponses(404, 409, 422) },
    },
  }, async (request) => feedbackService.create(request.tenantId, request.userId, request.body))

  app.get('/feedback/:feedback_id', {
    schema: {
      operationId: 'read_feedback_api_v1_feedback__feedback_id__get', tags, summary: 'Read Feedback',
      params: FeedbackParams, response: { 200: Feedback, ...errorResponses(404, 422) },
    },
  }, async (request) => feedbackService.get(request.tenantId, request.params.feedback_id))

  app.patch('/feedback/:feedback_id', {
    schema: {
      operationId: 'update_feedback_api_v1_feedback__feedback_id__patch', tags, summary: 'Update Feedback',
      description: 'Changes the fields the body names (null clears one); the others stay as they were.',
      params: FeedbackParams, body: FeedbackUpdate, response: { 200: Feedback, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const named = namedFields(request)
    const changes = Object.fromEntries(Object.entries(request.body).filter(([field]) => named.has(field)))
    return feedbackService.update(request.tenantId, request.params.feedback_id, changes)
  })

  app.delete('/feedback/:feedback_id', {
    schema: {
      operationId: 'delete_feedback_api_v1_feedback__feedback_id__delete', tags, summary: 'Delete Feedback',
      params: FeedbackParams, response: { 200: Type.Object({}, { additionalProperties: false }), ...errorResponses(404, 422) },
    },
  }, async (request) => {
    feedbackService.delete(request.tenantId, request.params.feedback_id)
    return {}
  })
}
