// The agent server's runs as the tracing service shows them. Each run hangar executes is the root
// of its own trace (trace_id = id, no child runs), of run_type `chain`, named after its graph, in its
// agent server's project (tracing-projects.ts). Its inputs are the run's input, its outputs the
// state it ended with, its status `pending` while it runs, `success`, or `error` (a failed run, one
// that timed out, one that was cancelled). Three views: the v1 run (`GET /runs/{id}`, `POST
// /runs/query`), and the v2 run (`GET /api/v2/runs/{id}`), whose fields are those `selects` names.

import type { Clock } from '../clock.js'
import { runResult, type RunResult } from '../agent/run-executor.js'
import type { Feedback, FeedbackRepository } from '../store/feedback.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { NotFound, RuleViolation } from './errors.js'
import { parseRunFilter, type FilterSubject, type RunFilter } from './run-filter.js'
import type { TracingProject, TracingProjects } from './tracing-projects.js'

export interface RunTracesOptions {
  runs: RunRepository
  threads: ThreadRepository
  feedback: FeedbackRepository
  projects: TracingProjects
  clock: Clock
}

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

/** The most runs one page of `POST /runs/query` holds. */
const PAGE = 100
const PREVIEW = 200

/** One run with what its views are made of. */
interface Traced {
  run: Run
  project: TracingProject
  result: RunResult | null
  feedback: Feedback[]
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

  /** One page of `POST /runs/query` (v1), newest first unless `order` says `asc`; `cursors.next` asks for the next. */
  query(workspace: string, q: RunQuery) {
    if (q.query) throw new RuleViolation('Full-text search (`query`) is not supported by hangar; use `filter`.')
    const filters = [['filter', q.filter], ['trace_filter', q.trace_filter], ['tree_filter', q.tree_filter]]
      .filter((f): f is [string, string] => typeof f[1] === 'string' && f[1].trim() !== '')
      .map(([what, text]) => parseRunFilter(text, what))
    const projects = q.session?.length
      ? q.session.map((id) => this.#o.projects.byId(id, workspace) ?? notFound(`Project ${id} not found`))
      : this.#o.projects.list(workspace)
    const after = q.cursor ? readCursor(q.cursor) : undefined
    const asc = q.order === 'asc'
    const ordered = this.#o.runs.inScopes(projects.map((p) => p.scope))
    if (asc) ordered.reverse()
    const wanted = ordered
      .filter((run) => after === undefined || (asc ? key(run) > after : key(run) < after))
      .filter((run) => this.#structurally(run, q))
    // Every run is the root of its own trace: its trace and tree filters see the run itself.
    const page: ReturnType<typeof v1Run>[] = []
    let last: Run | undefined
    let more = false
    const size = q.trace ? Number.MAX_SAFE_INTEGER : Math.min(q.limit ?? PAGE, PAGE)
    for (const run of wanted) {
      const traced = this.#traced(run, workspace)
      if (!matchesAll(filters, subject(traced))) continue
      if (page.length === size) {
        more = true
        break
      }
      page.push(v1Run(traced, workspace))
      last = run
    }
    return { runs: page, cursors: { next: more && last ? writeCursor(key(last)) : null, prev: null } }
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
    return this.#session(this.#o.projects.byId(id, workspace) ?? notFound(`Project ${id} not found`), workspace)
  }

  /** A project as a `TracerSession`; it began when its first run did (else it begins now). */
  #session(project: TracingProject, workspace: string) {
    const first = this.#o.runs.inScopes([project.scope]).at(-1)
    return {
      id: project.id, name: project.name, description: null, start_time: first?.created_at ?? new Date(this.#o.clock.now()).toISOString(), end_time: null,
      extra: null, tenant_id: workspace, reference_dataset_id: null, default_dataset_id: null, trace_tier: null,
    }
  }

  #find(workspace: string, runId: string): Run {
    const run = this.#o.runs.find(runId)
    if (!run || !this.#o.projects.sees(run.scope, workspace)) throw new NotFound(`Run ${runId} not found`)
    return run
  }

  #traced(run: Run, workspace: string): Traced {
    const active = run.status === 'pending' || run.status === 'running'
    return {
      run,
      project: this.#o.projects.of(run.scope, workspace) ?? notFound(`Run ${run.run_id} not found`),
      result: active ? null : runResult(this.#o.runs, this.#o.threads, run),
      feedback: this.#o.feedback.list({ runs: [run.run_id] }, workspace),
    }
  }

  /** The query's fields other than the filter expressions. */
  #structurally(run: Run, q: RunQuery): boolean {
    const start = Date.parse(run.created_at)
    const ended = run.status !== 'pending' && run.status !== 'running'
    return (!q.id?.length || q.id.includes(run.run_id))
      && (!q.trace || q.trace === run.run_id)
      // No run has a parent, or is linked to a dataset example; every run is a chain and the first of its trace.
      && !q.parent_run && !q.reference_example?.length && q.is_root !== false
      && (!q.run_type || q.run_type === 'chain') && (q.execution_order == null || q.execution_order === 1)
      && (!q.start_time || start >= Date.parse(q.start_time))
      && (!q.end_time || (ended && Date.parse(run.updated_at) <= Date.parse(q.end_time)))
      && (q.error == null || (tracedStatus(run) === 'error') === q.error)
  }
}

const notFound = (message: string): never => { throw new NotFound(message) }

function matchesAll(filters: RunFilter[], s: FilterSubject): boolean {
  return filters.every((f) => f.matches(s))
}

/** A run's place in the newest-first order: its start, then its creation sequence. */
const key = (run: Run) => `${String(Date.parse(run.created_at)).padStart(16, '0')}:${String(run.seq).padStart(16, '0')}`

const writeCursor = (k: string) => Buffer.from(`v1|${k}`).toString('base64url')

function readCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString()
  if (!/^v1\|\d{16}:\d{16}$/.test(text)) throw new RuleViolation('Invalid cursor: pass `cursors.next` of the previous page as it was.')
  return text.slice(3)
}

/** `pending`, `success` or `error`, as the tracing service says. */
function tracedStatus(run: Run): 'pending' | 'success' | 'error' {
  if (run.status === 'pending' || run.status === 'running') return 'pending'
  return run.status === 'success' ? 'success' : 'error'
}

function errorOf(run: Run, result: RunResult | null): string | null {
  if (run.status === 'interrupted') return 'Cancelled'
  if (run.status === 'timeout') return 'Timeout'
  if (result === null || !('__error__' in result)) return null
  const error = result.__error__ as { error?: string; message?: string }
  return `${error.error}: ${error.message}`
}

function parts({ run, project, result, feedback }: Traced, workspace: string) {
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

/** The v1 run (`RunSchema` of the tracing API). */
function v1Run(traced: Traced, workspace: string) {
  const { run, project } = traced
  const p = parts(traced, workspace)
  return {
    id: run.run_id,
    name: String(run.metadata.graph_id ?? 'LangGraph'),
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

/** The v2 run: each selected field by its name (fields that do not apply to hangar's runs are left out). */
function v2Run(traced: Traced, workspace: string, selects: readonly string[]) {
  const { run, project } = traced
  const p = parts(traced, workspace)
  const preview = (value: unknown) => (value === null ? undefined : JSON.stringify(value).slice(0, PREVIEW))
  const fields: Record<string, () => unknown> = {
    ID: () => run.run_id,
    NAME: () => String(run.metadata.graph_id ?? 'LangGraph'),
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

/** What the filter language sees of a run. */
function subject(traced: Traced): FilterSubject {
  const { run } = traced
  const p = parts(traced, '')
  return {
    id: run.run_id,
    trace_id: run.run_id,
    name: String(run.metadata.graph_id ?? 'LangGraph'),
    run_type: 'chain',
    status: p.status,
    start_time: p.start,
    end_time: p.end,
    latency: p.end === null ? null : (p.end - p.start) / 1000,
    error: p.error,
    is_root: true,
    tags: [],
    feedback: traced.feedback.map((f) => ({ key: f.key, score: f.score, value: f.value })),
    metadata: Object.entries(p.metadata),
  }
}

/** `20250101T000000123000Z<run id>`: the start time to the microsecond, then the id (a root run). */
const dottedOrder = (startIso: string, id: string) => `${startIso.replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z')}${id}`

const numericScores = (list: Feedback[]) =>
  list.map((f) => (typeof f.score === 'boolean' ? Number(f.score) : f.score)).filter((s): s is number => typeof s === 'number')

function byKey(records: Feedback[]): [string, Feedback[]][] {
  const map = new Map<string, Feedback[]>()
  for (const record of records) map.set(record.key, [...(map.get(record.key) ?? []), record])
  return [...map]
}

function valueCounts(list: Feedback[]): Record<string, number> {
  const values: Record<string, number> = {}
  for (const f of list) if (f.value !== null && typeof f.value !== 'object') values[String(f.value)] = (values[String(f.value)] ?? 0) + 1
  return values
}

/** v1: per key, count, mean and (population) deviation of numeric scores, and counts of values. */
function feedbackStats(records: Feedback[]) {
  return Object.fromEntries(byKey(records).map(([key, list]) => {
    const scores = numericScores(list)
    const avg = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null
    const stdev = avg === null ? null : Math.sqrt(scores.reduce((a, s) => a + (s - avg) ** 2, 0) / scores.length)
    return [key, { n: list.length, avg, stdev, errors: 0, values: valueCounts(list) }]
  }))
}

/** v2: as its documentation says — `stdev` the sample deviation (left out below two scores), `min`, `max`, comments and sources. */
function feedbackStatsV2(records: Feedback[]) {
  return Object.fromEntries(byKey(records).map(([key, list]) => {
    const scores = numericScores(list)
    const avg = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : undefined
    const stdev = avg === undefined || scores.length < 2 ? undefined : Math.sqrt(scores.reduce((a, s) => a + (s - avg) ** 2, 0) / (scores.length - 1))
    return [key, {
      n: list.length,
      avg,
      stdev,
      min: scores.length ? Math.min(...scores) : undefined,
      max: scores.length ? Math.max(...scores) : undefined,
      errors: 0,
      values: valueCounts(list),
      comments: list.map((f) => f.comment).filter((c): c is string => c !== null),
      sources: [...new Set(list.map((f) => f.feedback_source?.type).filter((s): s is string => typeof s === 'string'))],
      contains_thread_feedback: false,
    }]
  }))
}
