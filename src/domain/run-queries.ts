// What a run query asks of a run beyond its filter expressions (those are run-filter.ts): its id,
// trace, type, place in its trace, times and error. hangar's runs each are the root of their own
// trace, a chain, linked to no dataset example; the questions are answered for runs like that.

import type { Run } from '../store/runs.js'
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
