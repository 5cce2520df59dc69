// One agent-server run as the tracing service sees it, before any view is made of it. Each run
// hangar executes is the root of its own trace (trace_id = id, no child runs), of run_type
// `chain`, named after its graph, in its agent server's project (tracing-projects.ts). Its inputs
// are the run's input, its outputs the state it ended with, its status `pending` while it runs,
// `success`, or `error` (a failed run, one that timed out, one that was cancelled). The views
// (run-views.ts) and the filter language (run-filter.ts) are made from what this module derives.

import type { RunResult } from '../agent/run-executor.js'
import type { Feedback } from '../store/feedback.js'
import type { Run } from '../store/runs.js'
import type { FilterSubject } from './run-filter.js'
import type { TracingProject } from './tracing-projects.js'

/** One run with what its views are made of. */
export interface Traced {
  run: Run
  project: TracingProject
  result: RunResult | null
  feedback: Feedback[]
}

/** Whether the run is still pending or running (it has no result yet). */
export const isActive = (run: Run) => run.status === 'pending' || run.status === 'running'

/** `pending`, `success` or `error`, as the tracing service says. */
export function tracedStatus(run: Run): 'pending' | 'success' | 'error' {
  if (isActive(run)) return 'pending'
  return run.status === 'success' ? 'success' : 'error'
}

/** The run's name: its graph. */
export const runName = (run: Run) => String(run.metadata.graph_id ?? 'LangGraph')

function errorOf(run: Run, result: RunResult | null): string | null {
  if (run.status === 'interrupted') return 'Cancelled'
  if (run.status === 'timeout') return 'Timeout'
  if (result === null || !('__error__' in result)) return null
  const error = result.__error__ as { error?: string; message?: string }
  return `${error.error}: ${error.message}`
}

/** What every view of a run is made of: its status, error, inputs, outputs, times, metadata, order and app path. */
export function facts({ run, project, result, feedback }: Traced, workspace: string) {
  const status = tracedStatus(run)
  const error = errorOf(run, result)
  const input = run.kwargs.input
  const outputs = result === null || status !== 'success' ? null : (result as Record<string, unknown>)
  const start = Date.parse(run.created_at)
  const end = status === 'pending' ? null : Date.parse(run.updated_at)
  return {
    status,
    error,
    inputs: input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input },
    outputs,
    start,
    end,
    metadata: { ...run.metadata, run_id: run.run_id, thread_id: run.thread_id, assistant_id: run.assistant_id },
    dottedOrder: dottedOrder(run.created_at, run.run_id),
    appPath: `/o/${workspace}/projects/p/${project.id}/r/${run.run_id}?trace_id=${run.run_id}&start_time=${run.created_at}`,
    feedback,
  }
}

/** What the filter language sees of a run: its feedback records are those `seen` keeps (all by default). */
export function filterSubject(traced: Traced, seen: (record: Feedback) => boolean = () => true): FilterSubject {
  const { run } = traced
  const p = facts(traced, '')
  return {
    id: run.run_id,
    trace_id: run.run_id,
    name: runName(run),
    run_type: 'chain',
    status: p.status,
    start_time: p.start,
    end_time: p.end,
    latency: p.end === null ? null : (p.end - p.start) / 1000,
    error: p.error,
    is_root: true,
    tags: [],
    feedback: traced.feedback.filter(seen).map((f) => ({ key: f.key, score: f.score, value: f.value })),
    metadata: Object.entries(p.metadata),
  }
}

/** `20250101T000000123000Z<run id>`: the start time to the microsecond, then the id (a root run). */
const dottedOrder = (startIso: string, id: string) => `${startIso.replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z')}${id}`
