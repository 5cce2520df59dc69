// The agent server's runs as the tracing service serves them (the rules are in domain/run-traces.ts
// and domain/tracing-projects.ts): v1 runs and projects under /api/v1 and without it, the v2 run
// and run query at /api/v2, and the service's /info under /api/v1.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { allowsType, namesType } from '../accept.js'
import type { RunTraces } from '../domain/run-traces.js'
import { ApiError } from '../errors.js'
import { errorResponses } from '../schemas/common.js'
import {
  RunQueryBody, RunQueryPage, RunQueryV2Body, RunQueryV2Page, RunTrace, RunTraceParams, RunV2, RunV2Query, SessionListQuery, SessionParams, TracerSession,
  TracingInfo,
} from '../schemas/tracing.js'

export interface RunTraceRoutesOptions {
  runTraces: RunTraces
}

const tags = ['Runs (tracing)']

/**
 * The tracing API level hangar answers as in `/api/v1/info`: the `langsmith` clients compare it
 * with the level each of their v2 resources needs and warn below it. It does not mean hangar
 * serves all of that API (see the README's Tracing API).
 */
export const TRACING_API_VERSION = '0.18.0'

/** v1 runs and projects; these need an API key. */
export const runTraceRoutes: FastifyPluginAsyncTypebox<RunTraceRoutesOptions> = async (app, { runTraces }) => {
  app.get('/runs/:run_id', {
    schema: {
      operationId: 'read_run_api_v1_runs__run_id__get', tags, summary: 'Read Run',
      description: 'The run\'s trace: inputs, outputs, status, times and feedback stats.',
      params: RunTraceParams, response: { 200: RunTrace, ...errorResponses(404, 422) },
    },
  }, async (request) => runTraces.trace(request.tenantId, request.params.run_id))

  app.post('/runs/query', {
    schema: {
      operationId: 'query_runs_api_v1_runs_query_post', tags, summary: 'Query Runs',
      description: 'A page of runs, newest first; `cursors.next` (sent back as `cursor`) asks for the next page.',
      body: RunQueryBody, response: { 200: RunQueryPage, ...errorResponses(400, 404, 422) },
    },
  }, async (request) => runTraces.query(request.tenantId, request.body))

  app.get('/sessions', {
    schema: {
      operationId: 'read_tracer_sessions_api_v1_sessions_get', tags, summary: 'Read Tracer Sessions',
      querystring: SessionListQuery, response: { 200: Type.Array(TracerSession), ...errorResponses(422) },
    },
  }, async (request) => runTraces.projects(request.tenantId, request.query))

  app.get('/sessions/:session_id', {
    schema: {
      operationId: 'read_tracer_session_api_v1_sessions__session_id__get', tags, summary: 'Read Tracer Session',
      params: SessionParams, response: { 200: TracerSession, ...errorResponses(404, 422) },
    },
  }, async (request) => runTraces.project(request.tenantId, request.params.session_id))
}

/**
 * What the v2 query answers in: JSON, as hangar serves it, unless the Accept header leaves JSON out.
 * AI search is streamed only (406 without `text/event-stream`), and hangar has none to stream (501).
 */
function negotiateV2(accept: string | undefined, aiSearch: boolean): void {
  if (aiSearch && !namesType(accept, 'text/event-stream')) throw ApiError.notAcceptable('`ai_search` is answered as a stream: send `Accept: text/event-stream`.')
  if (!aiSearch && !allowsType(accept, 'application/json')) throw ApiError.notAcceptable('hangar answers run queries as JSON only (`Accept: application/json`); the streamed form is not available offline.')
}

/** The v2 run (`client.runs.retrieve`) and the v2 run query (`client.runs.query`); need an API key. */
export const runV2Routes: FastifyPluginAsyncTypebox<RunTraceRoutesOptions> = async (app, { runTraces }) => {
  app.post('/api/v2/runs/query', {
    schema: {
      operationId: 'query_runs_api_v2_runs_query_post', tags, summary: 'Query Runs (v2)',
      description: 'A page of the projects\' runs, newest first, started within `min_start_time` (default: a day ago) and `max_start_time` (default: now): '
        + 'the fields `selects` names, only `id` without it; `next_cursor` (sent back as `cursor`) asks for the next page, null on the last. '
        + '`ai_search` is not available offline (501; 406 without `Accept: text/event-stream`).',
      body: RunQueryV2Body, response: { 200: RunQueryV2Page, ...errorResponses(400, 404, 406, 422, 501) },
    },
  }, async (request) => {
    negotiateV2(request.headers.accept, request.body.ai_search != null)
    return runTraces.queryV2(request.tenantId, request.body)
  })


  app.get('/api/v2/runs/:run_id', {
    schema: {
      operationId: 'retrieve_run_api_v2_runs__run_id__get', tags, summary: 'Retrieve Run (v2)',
      description: 'One run of the project named: the fields `selects` names (repeat it), only `id` without it.',
      params: RunTraceParams, querystring: RunV2Query, response: { 200: RunV2, ...errorResponses(404, 422) },
    },
  }, async (request) => runTraces.retrieve(request.tenantId, request.params.run_id, request.query.project_id, request.query.selects ?? []))
}

/** The tracing service's `/info` (no credentials, as on the real service by default). */
export const tracingInfoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/info', {
    schema: {
      operationId: 'get_info_api_v1_info_get', tags: ['Tracing'], summary: 'Info',
      description: 'What the tracing clients read first. Runs are not ingested by hangar, so the multipart endpoint is off and feedback goes to `POST /feedback`.',
      response: { 200: TracingInfo },
    },
  }, async () => ({
    version: TRACING_API_VERSION,
    instance_flags: { ch_query_enabled: true, sdb_query_enabled: false, dataset_examples_multipart_enabled: false, zstd_compression_enabled: false, gzip_body_enabled: false },
    batch_ingest_config: {
      use_multipart_endpoint: false, size_limit: 100, size_limit_bytes: 20_971_520, scale_up_qsize_trigger: 1000, scale_up_nthreads_limit: 16, scale_down_nempty_trigger: 4,
    },
  }))
}
