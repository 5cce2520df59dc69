// Runs and projects as the tracing service shows them (what the `langsmith` clients read), and its
// /info. The v1 shapes follow the service's `RunSchema`, `BodyParamsForRunSchema` and
// `TracerSession`; the v2 run follows the `Run` of its v2 API (as the client's types describe it).

import { Type } from '@sinclair/typebox'
import { AnyDict, DateTime, Nullable, StringEnum, Uuid } from './common.js'

const opt = <T extends Parameters<typeof Nullable>[0]>(schema: T) => Type.Optional(Nullable(schema))

export const RunTraceParams = Type.Object({ run_id: Uuid() })

/** A run (v1 `RunSchema`), as `GET /runs/{id}` and `POST /runs/query` answer it. */
export const RunTrace = Type.Object({
  id: Uuid(),
  name: Type.String(),
  run_type: Type.String(),
  start_time: DateTime(),
  end_time: Nullable(DateTime()),
  status: Type.String(),
  inputs: AnyDict(),
  outputs: Nullable(AnyDict()),
  error: Nullable(Type.String()),
  trace_id: Uuid(),
  dotted_order: Type.String(),
  parent_run_id: Nullable(Uuid()),
  parent_run_ids: Type.Array(Uuid()),
  session_id: Uuid(),
  app_path: Type.String(),
  thread_id: Nullable(Type.String()),
  reference_example_id: Nullable(Uuid()),
  tags: Type.Array(Type.String()),
  extra: AnyDict(),
  events: Type.Array(AnyDict()),
  execution_order: Type.Integer(),
  feedback_stats: AnyDict(),
  child_run_ids: Type.Array(Type.String()),
  direct_child_run_ids: Type.Array(Type.String()),
  first_token_time: Nullable(DateTime()),
  total_tokens: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_cost: Nullable(Type.String()),
  prompt_cost: Nullable(Type.String()),
  completion_cost: Nullable(Type.String()),
  in_dataset: Type.Boolean(),
}, { title: 'RunSchema' })

/** `POST /runs/query` (v1): what the client's `listRuns` sends. */
export const RunQueryBody = Type.Object({
  session: opt(Type.Array(Uuid())),
  id: opt(Type.Array(Uuid())),
  trace: opt(Uuid()),
  parent_run: opt(Uuid()),
  run_type: opt(StringEnum(['tool', 'chain', 'llm', 'retriever', 'embedding', 'prompt', 'parser'])),
  reference_example: opt(Type.Array(Uuid())),
  query: opt(Type.String()),
  filter: opt(Type.String()),
  trace_filter: opt(Type.String()),
  tree_filter: opt(Type.String()),
  execution_order: opt(Type.Integer({ minimum: 1, maximum: 1 })),
  start_time: opt(DateTime()),
  end_time: opt(DateTime()),
  error: opt(Type.Boolean()),
  is_root: opt(Type.Boolean()),
  limit: opt(Type.Integer({ minimum: 1 })),
  order: opt(StringEnum(['asc', 'desc'])),
  cursor: opt(Type.String()),
  select: opt(Type.Array(Type.String())),
}, { title: 'BodyParamsForRunSchema' })

/** The fields the service's `RunSchema` requires: a run query answers them whatever its `select` names. */
export const REQUIRED_RUN_FIELDS = ['id', 'name', 'run_type', 'status', 'trace_id', 'dotted_order', 'session_id', 'app_path'] as const
/** A run of `POST /runs/query`: with `select`, the fields it names and those `RunSchema` requires. */
const SelectedRunTrace = Type.Composite([Type.Pick(RunTrace, REQUIRED_RUN_FIELDS), Type.Partial(Type.Omit(RunTrace, REQUIRED_RUN_FIELDS))], { title: 'RunSchema' })

export const RunQueryPage = Type.Object({
  runs: Type.Array(SelectedRunTrace),
  cursors: Type.Object({ next: Nullable(Type.String()), prev: Nullable(Type.String()) }),
}, { title: 'ListRunsResponse' })

export const RUN_SELECTS = [
  'ID', 'NAME', 'RUN_TYPE', 'STATUS', 'START_TIME', 'END_TIME', 'LATENCY_SECONDS', 'FIRST_TOKEN_TIME', 'ERROR', 'ERROR_PREVIEW',
  'EXTRA', 'METADATA', 'EVENTS', 'INPUTS', 'INPUTS_PREVIEW', 'OUTPUTS', 'OUTPUTS_PREVIEW', 'MANIFEST', 'PARENT_RUN_IDS',
  'PROJECT_ID', 'TRACE_ID', 'THREAD_ID', 'DOTTED_ORDER', 'IS_ROOT', 'REFERENCE_EXAMPLE_ID', 'REFERENCE_DATASET_ID',
  'TOTAL_TOKENS', 'PROMPT_TOKENS', 'COMPLETION_TOKENS', 'TOTAL_COST', 'PROMPT_COST', 'COMPLETION_COST', 'PROMPT_TOKEN_DETAILS',
  'COMPLETION_TOKEN_DETAILS', 'PROMPT_COST_DETAILS', 'COMPLETION_COST_DETAILS', 'PRICE_MODEL_ID', 'TAGS', 'APP_PATH',
  'ATTACHMENTS', 'THREAD_EVALUATION_TIME', 'IS_IN_DATASET', 'LAST_QUEUED_AT', 'SHARE_URL', 'FEEDBACK_STATS', 'LS_USER_ID',
] as const

/** `GET /api/v2/runs/{id}` (the client's `runs.retrieve`): the project is required, `selects` repeat. */
export const RunV2Query = Type.Object({
  project_id: Uuid(),
  selects: Type.Optional(Type.Array(StringEnum(RUN_SELECTS))),
  start_time: Type.Optional(DateTime()),
})

/**
 * `POST /api/v2/runs/query` (the client's `runs.queryV2`): what its `RunQueryV2Params` sends, in
 * the body; the paginator adds `cursor`. Nulls are taken as absent, as the service's own clients
 * send them for a field the caller set to null.
 */
export const RunQueryV2Body = Type.Object({
  project_ids: opt(Type.Array(Uuid())),
  reference_dataset_id: opt(Uuid()),
  ids: opt(Type.Array(Uuid())),
  trace_id: opt(Uuid()),
  is_root: opt(Type.Boolean()),
  has_error: opt(Type.Boolean()),
  run_type: opt(StringEnum(['TOOL', 'CHAIN', 'LLM', 'RETRIEVER', 'EMBEDDING', 'PROMPT', 'PARSER'])),
  reference_examples: opt(Type.Array(Uuid())),
  min_start_time: opt(DateTime()),
  max_start_time: opt(DateTime()),
  min_feedback_modified_at: opt(DateTime()),
  max_feedback_modified_at: opt(DateTime()),
  filter: opt(Type.String()),
  trace_filter: opt(Type.String()),
  tree_filter: opt(Type.String()),
  selects: opt(Type.Array(StringEnum(RUN_SELECTS))),
  include_subtree_usage: opt(Type.Boolean()),
  ai_search: opt(Type.String({ minLength: 1 })),
  page_size: opt(Type.Integer({ minimum: 1, maximum: 1000 })),
  cursor: opt(Type.String()),
}, { title: 'QueryRunsRequest' })

const o = Type.Optional
/** The v2 run: each field present only when `selects` names it and it applies. */
export const RunV2 = Type.Object({
  id: o(Uuid()),
  name: o(Type.String()),
  run_type: o(Type.String()),
  status: o(StringEnum(['SUCCESS', 'ERROR', 'PENDING'])),
  start_time: o(DateTime()),
  end_time: o(Nullable(DateTime())),
  latency_seconds: o(Type.Number()),
  error: o(Type.String()),
  error_preview: o(Type.String()),
  extra: o(AnyDict()),
  metadata: o(AnyDict()),
  events: o(Type.Array(AnyDict())),
  inputs: o(AnyDict()),
  inputs_preview: o(Type.String()),
  outputs: o(AnyDict()),
  outputs_preview: o(Type.String()),
  parent_run_ids: o(Type.Array(Uuid())),
  project_id: o(Uuid()),
  trace_id: o(Uuid()),
  thread_id: o(Type.String()),
  dotted_order: o(Type.String()),
  is_root: o(Type.Boolean()),
  total_tokens: o(Type.Integer()),
  prompt_tokens: o(Type.Integer()),
  completion_tokens: o(Type.Integer()),
  total_cost: o(Type.Number()),
  prompt_cost: o(Type.Number()),
  completion_cost: o(Type.Number()),
  tags: o(Type.Array(Type.String())),
  app_path: o(Type.String()),
  attachments: o(AnyDict()),
  is_in_dataset: o(Type.Boolean()),
  feedback_stats: o(AnyDict()),
}, { title: 'Run' })

/** A page of `POST /api/v2/runs/query`, newest first: what the client's `ItemsCursorPostPagination` reads. */
export const RunQueryV2Page = Type.Object({
  items: Type.Array(RunV2),
  next_cursor: Nullable(Type.String()),
}, { title: 'QueryRunsResponse' })

/** A tracing project (`TracerSession`). */
export const TracerSession = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  start_time: DateTime(),
  end_time: Nullable(DateTime()),
  extra: Nullable(AnyDict()),
  tenant_id: Uuid(),
  reference_dataset_id: Nullable(Uuid()),
  default_dataset_id: Nullable(Uuid()),
  trace_tier: Nullable(Type.String()),
}, { title: 'TracerSession' })

export const SessionParams = Type.Object({ session_id: Uuid() })
export const SessionListQuery = Type.Object({
  name: opt(Type.String()),
  name_contains: opt(Type.String()),
  id: opt(Type.Array(Uuid())),
  include_stats: opt(Type.Boolean()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
})

/** The tracing service's `/info`: what the clients read before batching, querying or warning. */
export const TracingInfo = Type.Object({
  version: Type.String(),
  instance_flags: AnyDict(),
  batch_ingest_config: Type.Object({
    use_multipart_endpoint: Type.Boolean(),
    size_limit: Type.Integer(),
    size_limit_bytes: Type.Integer(),
    scale_up_qsize_trigger: Type.Integer(),
    scale_up_nthreads_limit: Type.Integer(),
    scale_down_nempty_trigger: Type.Integer(),
  }),
}, { title: 'InfoGetResponse' })
