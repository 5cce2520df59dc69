// The agent server's runs as the tracing service serves them: one run (v1 `GET /runs/{id}`, v2
// `GET /api/v2/runs/{id}`), pages of runs (v1 `POST /runs/query`, v2 `POST /api/v2/runs/query`)
// and the projects they are in. What
// a run is to the tracing service is traced-run.ts; its two shapes run-views.ts; what a query asks
// of a run run-queries.ts and the filter language run-filter.ts; pages and cursors run-paging.ts.

import type { Clock } from '../clock.js'
import { runResult } from '../agent/run-executor.js'
import type { Feedback, FeedbackRepository } from '../store/feedback.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { NotFound, NotImplemented, RuleViolation } from './errors.js'
import type { RunFilter } from './run-filter.js'
import { matchesAll, pageOf, PAGE, parseFilters, type PageRequest } from './run-paging.js'
import { matchesV1, matchesV2, windowV2, type RunQuery, type RunQueryV2 } from './run-queries.js'
import { v1Run, v1Selected, v2Run } from './run-views.js'
import { filterSubject, isActive, type Traced } from './traced-run.js'
import type { TracingProject, TracingProjects } from './tracing-projects.js'

export interface RunTracesOptions {
  runs: RunRepository
  threads: ThreadRepository
  feedback: FeedbackRepository
  projects: TracingProjects
  clock: Clock
}

export class RunTraces {
  readonly #o: RunTracesOptions

  constructor(options: RunTracesOptions) {
    this.#o = options
  }

  /** The v1 run (`GET /runs/{id}`). */
  trace(workspace: string, runId: string) {
    return v1Run(this.#traced(this.#find(workspace, runId), workspace), workspace)
  }

  /** The v2 run (`GET /api/v2/runs/{id}`): the fields `selects` names (only `id` without it), in the project named. */
  retrieve(workspace: string, runId: string, projectId: string, selects: readonly string[]) {
    const run = this.#find(workspace, runId)
    const traced = this.#traced(run, workspace)
    if (traced.project.id !== projectId) throw new NotFound(`Run ${runId} not found`)
    return v2Run(traced, workspace, selects.length ? selects : ['ID'])
  }

  /** One page of `POST /runs/query` (v1), newest first unless `order` says `asc`, the fields `select` names if it does; `cursors.next` asks for the next. */
  query(workspace: string, q: RunQuery) {
    if (q.query) throw new RuleViolation('Full-text search (`query`) is not supported by hangar; use `filter`.')
    const filters = parseFilters(q)
    const projects = q.session?.length ? this.#named(q.session, workspace) : this.#o.projects.list(workspace)
    const size = q.trace ? Number.MAX_SAFE_INTEGER : Math.min(q.limit ?? PAGE, PAGE)
    const page = this.#page(workspace, projects, { cursor: q.cursor, size, asc: q.order === 'asc' }, {
      wanted: (run) => matchesV1(run, q), filters, present: (traced) => (q.select?.length ? v1Selected(v1Run(traced, workspace), q.select) : v1Run(traced, workspace)),
    })
    return { runs: page.items, cursors: { next: page.next, prev: null } }
  }

  /**
   * One page of `POST /api/v2/runs/query`, newest first: the runs of the projects named (one the
   * workspace does not see is a 404) in its time window, each with the fields `selects` names
   * (only `id` without it); `next_cursor` asks for the next page, null on the last.
   */
  queryV2(workspace: string, q: RunQueryV2) {
    if (q.ai_search != null) throw new NotImplemented('AI search (`ai_search`) is not available offline: hangar has no model to judge runs with; use `filter`.')
    const projects = this.#queriedV2(q, workspace)
    const filters = parseFilters(q)
    const window = windowV2(q, this.#o.clock.now(), filters)
    const selects = q.selects?.length ? q.selects : ['ID']
    const page = this.#page(workspace, projects, { cursor: q.cursor, size: q.page_size ?? PAGE }, {
      wanted: (run) => matchesV2(run, q, window), filters, seen: window.feedback, present: (traced) => v2Run(traced, workspace, selects),
    })
    return { items: page.items, next_cursor: page.next }
  }

  /** The projects a v2 query names: `project_ids`, or a dataset's (hangar keeps no datasets, so no dataset id names one). */
  #queriedV2(q: RunQueryV2, workspace: string): TracingProject[] {
    if (q.reference_dataset_id != null && q.project_ids?.length) throw new RuleViolation('Set exactly one of `project_ids` and `reference_dataset_id`.')
    if (q.reference_dataset_id != null) throw new NotFound(`Dataset ${q.reference_dataset_id} not found`)
    if (!q.project_ids?.length) throw new RuleViolation('`project_ids` is required unless `reference_dataset_id` is set.')
    return this.#named(q.project_ids, workspace)
  }

  /**
   * A page of the projects' runs: those `wanted` and its filters keep, as `present` shows them.
   * Every run is the root of its own trace: its trace and tree filters see the run itself.
   */
  #page<T>(workspace: string, projects: readonly TracingProject[], request: PageRequest, q: {
    wanted: (run: Run) => boolean
    filters: readonly RunFilter[]
    seen?: (record: Feedback) => boolean
    present: (traced: Traced) => T
  }) {
    return pageOf(this.#o.runs.inScopes(projects.map((p) => p.scope)), request, (run) => {
      if (!q.wanted(run)) return undefined
      const traced = this.#traced(run, workspace)
      return matchesAll(q.filters, filterSubject(traced, q.seen)) ? q.present(traced) : undefined
    })
  }

  /** The projects the workspace sees, as `GET /sessions` filters them. */
  projects(workspace: string, q: { name?: string | null; name_contains?: string | null; id?: string[] | null; offset?: number; limit?: number }) {
    const offset = q.offset ?? 0
    return this.#o.projects.list(workspace)
      .filter((p) => (q.name == null || p.name === q.name) && (q.name_contains == null || p.name.includes(q.name_contains)) && (!q.id?.length || q.id.includes(p.id)))
      .slice(offset, offset + (q.limit ?? 100))
      .map((p) => this.#session(p, workspace))
  }

  project(workspace: string, id: string) {
    return this.#session(this.#named([id], workspace)[0]!, workspace)
  }

  /** A project as a `TracerSession`; it began when its first run did (else it begins now). */
  #session(project: TracingProject, workspace: string) {
    const first = this.#o.runs.inScopes([project.scope]).at(-1)
    return {
      id: project.id, name: project.name, description: null, start_time: first?.created_at ?? new Date(this.#o.clock.now()).toISOString(), end_time: null,
      extra: null, tenant_id: workspace, reference_dataset_id: null, default_dataset_id: null, trace_tier: null,
    }
  }

  /** The projects of these ids; one the workspace does not see is a 404. */
  #named(ids: readonly string[], workspace: string): TracingProject[] {
    return ids.map((id) => this.#o.projects.byId(id, workspace) ?? notFound(`Project ${id} not found`))
  }

  #find(workspace: string, runId: string): Run {
    const run = this.#o.runs.find(runId)
    if (!run || !this.#o.projects.sees(run.scope, workspace)) throw new NotFound(`Run ${runId} not found`)
    return run
  }

  #traced(run: Run, workspace: string): Traced {
    return {
      run,
      project: this.#o.projects.of(run.scope, workspace) ?? notFound(`Run ${run.run_id} not found`),
      result: isActive(run) ? null : runResult(this.#o.runs, this.#o.threads, run),
      feedback: this.#o.feedback.list({ runs: [run.run_id] }, workspace),
    }
  }
}

const notFound = (message: string): never => { throw new NotFound(message) }
