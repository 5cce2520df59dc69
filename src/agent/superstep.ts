// One superstep of a run, as LangGraph runs it: its tasks together on the run's clock
// (task-scheduler.ts), a task that runs a subgraph through subgraph-run.ts; their writes merged by
// the reducers in task order, one checkpoint, the next superstep from every task's routes. And how
// a run stops inside one: interrupts (several at once), a failure, a breakpoint.

import { interruptId, settleTask } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { stopsAt } from './commands.js'
import { emit, playNode, type NodeOutcome } from './node-steps.js'
import type { Plan, Planned, RunState, StepEnd, Target } from './run-state.js'
import { applyWrites, uiKeyOf } from './state.js'
import type { TaskView } from './stream-modes.js'
import { runSubgraph } from './subgraph-run.js'
import { interleave, type TaskOutput } from './task-scheduler.js'
import type { Interrupt, PausedAt, State } from './types.js'

/** The run fails: its `error` event, then how it ended. */
export async function* failRun(error: GraphError, values: State): AsyncGenerator<TaskOutput, void> {
  yield { kind: 'emit', event: 'error', data: error.toEvent() }
  yield { kind: 'done', status: 'error', values, pausedAt: null, error: error.toEvent() }
}

/**
 * Runs one superstep: its tasks together on the clock, each one's events as it goes; a task's
 * update and result as soon as it finishes (the last one's after the step's checkpoint). When
 * every task succeeded: their writes merged in task order, one checkpoint, the next step from
 * all their routes. When some interrupted: no checkpoint; the one the step ran from keeps the
 * interrupts, and the writes of those that succeeded (its values include them, its `next` lists
 * only the tasks still to run), as LangGraph shows it. A failure stops the run at once.
 */
export async function* superstep(run: RunState, plan: Plan): AsyncGenerator<TaskOutput, StepEnd> {
  run.steps += 1
  const views = plan.tasks.map((t) => run.view(t))
  const context = { channels: run.channels, modes: run.modes, request: run.request, uiKey: uiKeyOf(run.graph) }
  const runs = plan.tasks.map((task, i) => {
    const visits = run.visits.get(task.node.name) ?? 0
    run.visits.set(task.node.name, visits + 1)
    return task.node.subgraph === undefined
      ? playNode(task.node, views[i], { ...context, resume: task.resume, visits })
      : subgraph(run, task, views[i])
  })
  for (const view of views) yield* emit(run.modes.taskStart(view))
  const outcomes: NodeOutcome[] = []
  const interrupts: Interrupt[] = []
  let finished = 0
  let lastRan: number | undefined
  for await (const item of interleave(runs)) {
    if (item.kind !== 'finished') {
      yield item
      continue
    }
    const { index, value: outcome } = item
    outcomes[index] = outcome
    finished += 1
    const view = views[index]
    if (outcome.kind === 'fail') return yield* failTask(run, view, outcome.error)
    if (outcome.kind === 'interrupt') {
      // A subgraph's interrupts keep their ids; a node's own gets one from its task.
      const raised: Interrupt[] = outcome.interrupts ?? [{ id: interruptId(view.id), value: outcome.value }]
      interrupts.push(...raised)
      yield* run.settle(view.id, { interrupts: raised }, { node: pausedNode(run, plan, outcomes), interrupts: [...interrupts] })
      // While no task of the step has written anything, `values` shows the interrupt too.
      const ran = outcomes.some((o) => o?.kind === 'ok')
      yield* emit(run.modes.interrupted(raised).filter((e) => !ran || 'protocol' in e || e.event !== 'values'))
      const ended = { writes: null, interrupts: raised, error: null }
      yield* emit(run.modes.taskEnd(view, ended))
      yield* emit(run.modes.taskDone(view, ended, outcome.interrupts !== undefined))
    } else if (finished < plan.tasks.length) yield* ended(run, view, outcome)
    else lastRan = index
  }
  const ran = plan.tasks.flatMap((task, i) => {
    const outcome = outcomes[i]
    return outcome.kind === 'ok' ? [{ task, view: views[i], writes: outcome.writes }] : []
  })
  const state = ran.reduce((s, r) => applyWrites(run.channels, s, r.writes), run.state)
  if (interrupts.length > 0) return yield* paused(run, plan, outcomes, state, interrupts, lastRan)
  run.state = state
  let targets: Target[]
  try {
    targets = [...plan.ran.map((r) => r.node), ...plan.tasks.map((t) => t.node)].flatMap((node) => run.targets(node, state))
  } catch (error) {
    if (!(error instanceof GraphError)) throw error
    yield* failRun(error, state)
    return 'stopped'
  }
  const sends = targets.filter((t) => t.input !== undefined)
  const names = run.graph.nodes.map((n) => n.name)
  const pulled = [...new Set(targets.filter((t) => t.input === undefined).map((t) => t.node))].sort((x, y) => names.indexOf(x) - names.indexOf(y))
  // An `interrupt_after` stops after the step; its checkpoint is stored but not announced, as on the real server.
  const breakAfter = plan.tasks.find((t) => stopsAt(run.request.interruptAfter, t.node.name))
  const stopAfter = targets.length > 0 ? breakAfter : undefined
  let settled = run.last
  for (const r of ran) if (settled) settled = settleTask(settled, r.task.id, { result: r.writes })
  if (settled) {
    run.last = settled
    // A task's result is all `settleTask` changed here (none interrupted or failed).
    yield { kind: 'amend', checkpoint: settled, pausedAt: null, tasksOnly: true }
  }
  const written = Object.fromEntries([
    ...plan.ran.map((r) => [r.node.name, r.writes]),
    ...ran.map((r) => [r.task.node.name, Object.keys(r.writes).length > 0 ? r.writes : null]),
  ])
  const record = run.checkpoint({ source: 'loop', values: state, next: [...sends.map((s) => s.node), ...pulled], pushed: sends.length, writes: written })
  if (sends.length > 0) run.pendingSends.set(record.checkpoint_id, Object.fromEntries(sends.map((s, i) => [record.tasks[i].id, s.input!])))
  yield { kind: 'checkpoint', checkpoint: record }
  if (lastRan !== undefined) yield* ended(run, views[lastRan], outcomes[lastRan] as Extract<NodeOutcome, { kind: 'ok' }>)
  if (!stopAfter) {
    yield* run.announce(record)
    if (record.next.length === 0) return 'end'
    const next = run.planFrom(record)
    next.tasks.forEach((task, i) => {
      if (i < sends.length) task.input = sends[i].input
    })
    return next
  }
  yield* emit(run.modes.values(run.state))
  yield* breakpoint(run, record.next[0], { taskId: stopAfter.id })
  return 'stopped'
}

/** A task that runs its node's subgraph (see subgraph-run.ts). */
function subgraph(run: RunState, task: Planned, view: TaskView): AsyncGenerator<TaskOutput, NodeOutcome> {
  const graph = run.graphs.get(task.node.subgraph!)!
  const above = run.scope
  const parentNs = above?.ns.join('|') ?? ''
  const ns = [...(above?.ns ?? []), `${view.name}:${view.id}`]
  const parents = { ...above?.parents, [parentNs]: run.last?.checkpoint_id ?? run.request.ids.run_id }
  const { tags: _tags, ...metadata } = run.modes.taskMetadata(view)
  return runSubgraph({
    graph,
    task: view,
    request: run.request,
    modes: run.modes,
    scope: { ns, parents, metadata: { ...metadata, checkpoint_map: parents } },
    parentKeys: Object.keys(run.graph.state),
    ...(task.resume ? { resume: task.resume } : {}),
    play: run.play,
  })
}

/** The first node of the step still paused (the earliest task that interrupted). */
function pausedNode(run: RunState, plan: Plan, outcomes: NodeOutcome[]): string {
  const first = plan.tasks.findIndex((_, i) => outcomes[i]?.kind === 'interrupt')
  return plan.tasks[first].node.name
}

/**
 * Some tasks of the step interrupted: the checkpoint the step ran from keeps their interrupts
 * and the results of those that ran (its values include their writes, its `next` lists only the
 * tasks still to run); the run answers the last interrupt (`/wait` shows only that one, as on
 * the real server), or the state when some task wrote.
 */
async function* paused(run: RunState, plan: Plan, outcomes: NodeOutcome[], state: State, interrupts: Interrupt[], lastRan: number | undefined): AsyncGenerator<TaskOutput, 'stopped'> {
  let record = run.last!
  const ranIds: string[] = []
  plan.tasks.forEach((task, i) => {
    const outcome = outcomes[i]
    if (outcome.kind !== 'ok') return
    record = settleTask(record, task.id, { result: outcome.writes })
    ranIds.push(task.id)
  })
  if (ranIds.length > 0) {
    const waiting = new Set(plan.tasks.filter((t) => !ranIds.includes(t.id)).map((t) => t.id))
    record = {
      ...record,
      values: state,
      next: record.tasks.filter((t) => waiting.has(t.id)).map((t) => t.name),
      interrupts: { ...Object.fromEntries(ranIds.map((id) => [id, []])), ...record.interrupts },
    }
    // A task that ran (answered) no longer waits: its entry stays, empty.
    for (const id of ranIds) record.interrupts[id] = []
    run.state = state
  }
  const sends = Object.fromEntries(plan.tasks.filter((t) => t.pushed && t.input).map((t) => [t.id, t.input!]))
  const ran = [...(run.pausedAt?.ran ?? []).filter((id) => record.tasks.some((t) => t.id === id)), ...ranIds]
  const pausedAt: PausedAt = {
    node: pausedNode(run, plan, outcomes),
    interrupts,
    ...(Object.keys(sends).length > 0 ? { sends } : {}),
    ...(ran.length > 0 ? { ran } : {}),
  }
  run.last = record
  yield { kind: 'amend', checkpoint: record, pausedAt }
  if (lastRan !== undefined) {
    const view = run.view(plan.tasks[lastRan])
    yield* ended(run, view, outcomes[lastRan] as Extract<NodeOutcome, { kind: 'ok' }>)
  }
  if (ranIds.length > 0) yield* emit(run.modes.values(state))
  yield* emit(run.modes.graphEnd(run.state))
  const values = ranIds.length > 0 ? state : { __interrupt__: [interrupts.at(-1)!] }
  yield { kind: 'done', status: 'success', values, pausedAt, error: null }
  return 'stopped'
}

/** The events of a task that ran: messages written whole, its update, its result. */
function* ended(run: RunState, task: TaskView, outcome: Extract<NodeOutcome, { kind: 'ok' }>): Generator<TaskOutput> {
  const own = run.graph.nodes.find((n) => n.name === task.name)?.subgraph === undefined
  yield* emit(run.modes.written(task, outcome.unstreamed, own))
  yield* emit(run.modes.updates(task.name, outcome.writes))
  yield* emit(run.modes.taskEnd(task, { writes: outcome.writes, interrupts: [], error: null }))
  yield* emit(run.modes.taskDone(task, { writes: outcome.writes, interrupts: [], error: null }))
}

/**
 * A task failed: the run stops (the step's other tasks with it). The error is kept on the
 * checkpoint the task ran from (its pending task shows it), as LangGraph does; no checkpoint is written.
 */
async function* failTask(run: RunState, task: TaskView, failure: GraphError): AsyncGenerator<TaskOutput, 'stopped'> {
  const error = failure.toTaskError()
  yield* run.settle(task.id, { error })
  yield* emit(run.modes.taskEnd(task, { writes: null, interrupts: [], error }))
  yield* emit(run.modes.taskDone(task, { writes: null, interrupts: [], error }))
  yield* failRun(failure, run.state)
  return 'stopped'
}

/**
 * A breakpoint: the thread stops before `node` (the latest checkpoint's pending task) with no
 * interrupt value; the run succeeds and answers `{"__interrupt__": []}`.
 */
export async function* breakpoint(run: RunState, node: string, after?: { taskId: string }): AsyncGenerator<TaskOutput, void> {
  const pausedAt: PausedAt = { node, interrupts: [], breakpoint: true, ...run.sendsOf(run.last) }
  if (after && run.last) {
    // After a node, the thread's interrupts name the task that ran, as LangGraph records it.
    run.last = { ...run.last, interrupts: { ...run.last.interrupts, [after.taskId]: [] } }
    yield { kind: 'amend', checkpoint: run.last, pausedAt }
  } else yield* run.settle(node, { breakpoint: true }, pausedAt)
  yield* emit(run.modes.interrupted([]))
  yield* emit(run.modes.graphEnd(run.state))
  yield { kind: 'done', status: 'success', values: { __interrupt__: [] }, pausedAt, error: null }
}
