// What a run query asks of a run beyond its filter expressions (those are run-filter.ts): its id,
// trace, type, place in its trace, times and error. hangar's runs each are the root of their own
// trace, a chain, linked to no dataset example; the questions are answered for runs like that.

import type { Static } from '@sinclair/typebox'
import type { RunQueryV2Body } from '../schemas/tracing.js'
import type { Feedback } from '../store/feedback.js'
import type { Run } from '../store/runs.js'
import { RuleViolation } from './errors.js'
import type { RunFilter } from './run-filter.js'
import { isActive, tracedStatus } from './traced-run.js'

/** What `POST /runs/query` (v1) is asked; what the client sends beyond these is not used. */
export interface RunQuery {
  session?: string[] | null
  id?: string[] | null
  trace?: string | null
  parent_run?: string | null
  run_type?: string | null
  reference_example?: string[] | null
  query?: string | null
  filter?: string | null
  trace_filter?: string | null
  tree_filter?: string | null
  execution_order?: number | null
  start_time?: string | null
  end_time?: string | null
  error?: boolean | null
  is_root?: boolean | null
  limit?: number | null
  order?: 'asc' | 'desc' | null
  cursor?: string | null
  select?: string[] | null
}

/** Whether the run answers the fields of a v1 query other than its filter expressions. */
export function matchesV1(run: Run, q: RunQuery): boolean {
  const start = Date.parse(run.created_at)
  return (!q.id?.length || q.id.includes(run.run_id))
    && (!q.trace || q.trace === run.run_id)
    // No run has a parent, or is linked to a dataset example; every run is a chain and the first of its trace.
    && !q.parent_run && !q.reference_example?.length && q.is_root !== false
    && (!q.run_type || q.run_type === 'chain') && (q.execution_order == null || q.execution_order === 1)
    && (!q.start_time || start >= Date.parse(q.start_time))
    && (!q.end_time || (!isActive(run) && Date.parse(run.updated_at) <= Date.parse(q.end_time)))
    && (q.error == null || (tracedStatus(run) === 'error') === q.error)
}

/** What `POST /api/v2/runs/query` is asked. */
export type RunQueryV2 = Static<typeof RunQueryV2Body>

const DAY = 24 * 60 * 60 * 1000

/** The bounds of a v2 query: the runs' start times, and the feedback its feedback conditions see. */
export interface WindowV2 {
  min: number
  max: number
  /** Whether a feedback record is one the filters' feedback conditions see. */
  feedback: (record: Feedback) => boolean
}

/**
 * The bounds of a v2 query, as its documentation gives them: start times from `min_start_time`
 * (a day before now without it) to `max_start_time` (now), both included; feedback modified from
 * `min_feedback_modified_at` (included) to `max_feedback_modified_at` (left out), which need a
 * feedback condition to apply to.
 */
export function windowV2(q: RunQueryV2, now: number, filters: readonly RunFilter[]): WindowV2 {
  const min = q.min_start_time == null ? now - DAY : Date.parse(q.min_start_time)
  const max = q.max_start_time == null ? now : Date.parse(q.max_start_time)
  if (min > max) throw new RuleViolation('`min_start_time` (a day ago when not given) is after `max_start_time` (now when not given).')
  const from = q.min_feedback_modified_at == null ? -Infinity : Date.parse(q.min_feedback_modified_at)
  const to = q.max_feedback_modified_at == null ? Infinity : Date.parse(q.max_feedback_modified_at)
  if ((q.min_feedback_modified_at != null || q.max_feedback_modified_at != null) && !filters.some((f) => f.feedback)) {
    throw new RuleViolation('`min_feedback_modified_at` and `max_feedback_modified_at` apply to feedback conditions (feedback_key, feedback_score, feedback_value) in `filter`, `trace_filter` or `tree_filter`; there is none.')
  }
  return { min, max, feedback: (record) => Date.parse(record.modified_at) >= from && Date.parse(record.modified_at) < to }
}

/** Whether the run answers the fields of a v2 query other than its filter expressions and projects. */
export function matchesV2(run: Run, q: RunQueryV2, window: WindowV2): boolean {
  const start = Date.parse(run.created_at)
  return start >= window.min && start <= window.max
    && (!q.ids?.length || q.ids.includes(run.run_id))
    && (q.trace_id == null || q.trace_id === run.run_id)
    // No run has a parent, or is linked to a dataset example; every run is a chain.
    && q.is_root !== false && !q.reference_examples?.length && (q.run_type == null || q.run_type === 'CHAIN')
    && (q.has_error == null || (tracedStatus(run) === 'error') === q.has_error)
}
