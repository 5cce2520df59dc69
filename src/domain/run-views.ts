// The two shapes the tracing API shows a run in: the v1 run (`RunSchema`: `GET /runs/{id}`,
// `POST /runs/query`) with every field (a query's `select` keeps those it names), and the v2 run
// (`GET /api/v2/runs/{id}`, `POST /api/v2/runs/query`), whose fields are those `selects` names.

import { REQUIRED_RUN_FIELDS } from '../schemas/tracing.js'
import { feedbackStats, feedbackStatsV2 } from './feedback-stats.js'
import { facts, runName, type Traced } from './traced-run.js'

const PREVIEW = 200

/** The v1 run (`RunSchema` of the tracing API). */
export function v1Run(traced: Traced, workspace: string) {
  const { run, project } = traced
  const p = facts(traced, workspace)
  return {
    id: run.run_id,
    name: runName(run),
    run_type: 'chain',
    start_time: run.created_at,
    end_time: p.end === null ? null : run.updated_at,
    status: p.status,
    inputs: p.inputs,
    outputs: p.outputs,
    error: p.error,
    trace_id: run.run_id,
    dotted_order: p.dottedOrder,
    parent_run_id: null,
    parent_run_ids: [],
    session_id: project.id,
    app_path: p.appPath,
    thread_id: run.thread_id,
    reference_example_id: null,
    tags: [],
    extra: { metadata: p.metadata },
    events: [],
    execution_order: 1,
    feedback_stats: feedbackStats(p.feedback),
    child_run_ids: [],
    direct_child_run_ids: [],
    first_token_time: null,
    total_tokens: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_cost: null,
    prompt_cost: null,
    completion_cost: null,
    in_dataset: false,
  }
}

type V1Run = ReturnType<typeof v1Run>

/** The v1 run with the fields `select` names and those `RunSchema` requires (a name hangar has no field for answers nothing). */
export function v1Selected(run: V1Run, select: readonly string[]): Pick<V1Run, typeof REQUIRED_RUN_FIELDS[number]> & Partial<V1Run> {
  const kept: readonly string[] = [...REQUIRED_RUN_FIELDS, ...select]
  // Every required field is kept: the cast only says so.
  return Object.fromEntries(Object.entries(run).filter(([field]) => kept.includes(field))) as Pick<V1Run, typeof REQUIRED_RUN_FIELDS[number]>
}

/** The v2 run: each selected field by its name (fields that do not apply to hangar's runs are left out). */
export function v2Run(traced: Traced, workspace: string, selects: readonly string[]) {
  const { run, project } = traced
  const p = facts(traced, workspace)
  const preview = (value: unknown) => (value === null ? undefined : JSON.stringify(value).slice(0, PREVIEW))
  const fields: Record<string, () => unknown> = {
    ID: () => run.run_id,
    NAME: () => runName(run),
    RUN_TYPE: () => 'CHAIN',
    STATUS: () => p.status.toUpperCase(),
    START_TIME: () => run.created_at,
    END_TIME: () => (p.end === null ? null : run.updated_at),
    LATENCY_SECONDS: () => (p.end === null ? undefined : (p.end - p.start) / 1000),
    ERROR: () => p.error ?? undefined,
    ERROR_PREVIEW: () => p.error?.slice(0, PREVIEW),
    EXTRA: () => ({ metadata: p.metadata }),
    METADATA: () => p.metadata,
    EVENTS: () => [],
    INPUTS: () => p.inputs,
    INPUTS_PREVIEW: () => preview(p.inputs),
    OUTPUTS: () => p.outputs ?? undefined,
    OUTPUTS_PREVIEW: () => preview(p.outputs),
    PARENT_RUN_IDS: () => [],
    PROJECT_ID: () => project.id,
    TRACE_ID: () => run.run_id,
    THREAD_ID: () => run.thread_id,
    DOTTED_ORDER: () => p.dottedOrder,
    IS_ROOT: () => true,
    TOTAL_TOKENS: () => 0,
    PROMPT_TOKENS: () => 0,
    COMPLETION_TOKENS: () => 0,
    TOTAL_COST: () => 0,
    PROMPT_COST: () => 0,
    COMPLETION_COST: () => 0,
    TAGS: () => [],
    APP_PATH: () => p.appPath,
    ATTACHMENTS: () => ({}),
    IS_IN_DATASET: () => false,
    FEEDBACK_STATS: () => feedbackStatsV2(p.feedback),
  }
  const out: Record<string, unknown> = {}
  for (const select of selects) {
    const value = fields[select]?.()
    if (value !== undefined) out[select.toLowerCase()] = value
  }
  return out
}
