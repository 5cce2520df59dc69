// One run of a scripted graph: an async generator of EngineOutput (see types.ts). It decides where
// the run starts (a new input, a resume, a command, a re-run of an interrupted task), then runs
// supersteps as LangGraph does: the tasks of a step together on the run's clock (task-scheduler.ts),
// their writes merged by the reducers in task order, one checkpoint per step, the next step's tasks
// from every task's routes (nodes, and Sends with their own inputs). Each step's checkpoint is
// yielded before the events that report the step, so a client that reads the thread after an
// event finds the step stored.

import { checkpointId, interruptId, makeCheckpoint, settleTask, type CheckpointSpec, type TaskOutcome } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { channelsOf, uiKeyOf, type Graph, type GraphNode } from './graphs.js'
import { commandUpdate, gotoTarget, resumeValue, stopsAt } from './commands.js'
import { routeFrom } from './conditions.js'
import { configurableOf, emit, playNode, type NodeOutcome } from './node-steps.js'
import { applyWrites, initialState, normalizeUpdate, type Channels } from './state.js'
import { runMetadata, StreamModes, type TaskView } from './stream-modes.js'
import { interleave, type TaskOutput } from './task-scheduler.js'
import { runSubgraph, type SubgraphScope } from './subgraph-run.js'
import { renderValue } from './templates.js'
import type { CheckpointRecord, EngineOutput, Interrupt, PausedAt, RunRequest, State } from './types.js'

type Output = AsyncGenerator<TaskOutput, void>
const END = '__end__'
/** LangGraph's default `recursion_limit`. */
const DEFAULT_RECURSION_LIMIT = 25

/** LangGraph's error when a run takes more steps than its `recursion_limit` (JS wording, with the server's key name). */
const recursionError = (limit: number) => new GraphError(
  'GraphRecursionError',
  `Recursion limit of ${limit} reached without hitting a stop condition. You can increase the limit by setting the "recursion_limit" config key.`,
)
/** A checkpoint as a step describes it; the run adds its id, parent, step number and metadata. */
type StepSpec = Omit<CheckpointSpec, 'id' | 'parentId' | 'step' | 'metadata'>
/** A task of a superstep: a pending task of the checkpoint the step runs from. */
interface Planned {
  node: GraphNode
  /** The checkpoint's task id. */
  id: string
  /** A Send's task: its path among the checkpoint's tasks. */
  pushed?: unknown[]
  /** What the node gets instead of the state (a Send's input, a goto's). */
  input?: State
  /** The value its interrupt returns (it is being resumed). */
  resume?: { value: unknown }
}
/** A superstep to run: its tasks, and the writes of those of its tasks that already ran (their writes are in the state). */
interface Plan {
  tasks: Planned[]
  ran: { node: GraphNode; writes: Record<string, unknown> | null }[]
}
/** How a superstep ended: the next one, the graph's end, or a stop (an interrupt, a failure, a breakpoint: the run is done). */
type StepEnd = Plan | 'end' | 'stopped'
/** A place the routes lead to: a node, or a Send's task of a node with its input. */
interface Target {
  node: string
  input?: State
}
/** An update merged in: what it writes (normalized) and the state after it. */
interface Applied {
  writes: Record<string, unknown>
  state: State
}

/**
 * The run, stopped at once (without a `done`) when its signal aborts. The waits its tasks ask for
 * (task-scheduler.ts) are waited here, on the run's clock, and nowhere else.
 */
export async function* runGraph(graph: Graph | undefined, request: RunRequest, graphs: ReadonlyMap<string, Graph>): AsyncGenerator<EngineOutput, void> {
  const { signal, clock } = request
  if (signal.aborted) return
  const inner = graph
    ? new GraphRun(graph, request, graphs, null).run()
    : failed(new GraphError('ValueError', `Graph '${request.graphId}' not found`), request.start?.values ?? {})
  try {
    for await (const output of inner) {
      if (signal.aborted) return
      if (output.kind === 'wait') {
        if (output.ms > 0) await clock.until(clock.now() + output.ms, signal)
        continue
      }
      yield output
      if (signal.aborted) return
    }
  } catch (error) {
    if (signal.aborted) return
    throw error
  }
}

async function* failed(error: GraphError, values: State): Output {
  yield { kind: 'emit', event: 'error', data: error.toEvent() }
  yield { kind: 'done', status: 'error', values, pausedAt: null, error: error.toEvent() }
}

class GraphRun {
  readonly #graph: Graph
  readonly #request: RunRequest
  readonly #channels: Channels
  readonly #modes: StreamModes
  readonly #metadata: Record<string, unknown>
  /** Where the start checkpoint is paused (at an interrupt or a breakpoint), if it is. */
  readonly #pausedAt: PausedAt | null
  #state: State
  /** The step number the next checkpoint gets. */
  #step: number
  /** The latest checkpoint: the one the run started from, then the last one it wrote. */
  #last: CheckpointRecord | null
  /** How many times each node ran in this run (route and fail conditions read it). */
  readonly #visits = new Map<string, number>()
  /** How many supersteps the run took; past `recursion_limit` it fails. */
  #steps = 0
  readonly #recursionLimit: number
  /** Every graph, by id (a node's subgraph is one of them). */
  readonly #graphs: ReadonlyMap<string, Graph>
  /** Set when this run is a subgraph's: where it sits. */
  readonly #scope: SubgraphScope | null

  constructor(graph: Graph, request: RunRequest, graphs: ReadonlyMap<string, Graph>, scope: SubgraphScope | null) {
    const { start } = request
    this.#graph = graph
    this.#request = request
    this.#graphs = graphs
    this.#scope = scope
    this.#channels = channelsOf(graph)
    this.#modes = new StreamModes(request, scope?.ns ?? [])
    // A run that named its checkpoint carries it in its checkpoints' metadata, as LangGraph's do.
    const named = request.forked && start ? { checkpoint_id: start.checkpoint_id, checkpoint_ns: '' } : {}
    this.#metadata = { ...runMetadata(request), ...named, ...scope?.metadata }
    this.#pausedAt = start?.pausedAt ?? null
    this.#state = start ? structuredClone(start.values) : initialState(this.#channels)
    this.#step = start ? Number(start.metadata.step ?? -1) + 1 : -1
    this.#last = start
    const limit = request.config.recursion_limit
    this.#recursionLimit = typeof limit === 'number' && limit > 0 ? limit : DEFAULT_RECURSION_LIMIT
  }

  #checkpoint(spec: StepSpec): CheckpointRecord {
    const scope = this.#scope
    const { thread_id } = this.#request.ids
    // A subgraph's first checkpoint sorts after its parent's latest.
    const after = this.#last?.checkpoint_id ?? (scope ? Object.values(scope.parents).at(-1)! : null)
    const record = makeCheckpoint({
      ...spec,
      id: checkpointId(this.#step, this.#request.clock.now(), after),
      parentId: this.#last?.checkpoint_id ?? null,
      step: this.#step,
      metadata: this.#metadata,
      ...(scope ? { ns: scope.ns.join('|'), parents: scope.parents } : {}),
      // A pending task that runs a subgraph names the namespace of its subgraph's checkpoints.
      taskCheckpoint: ({ name, id }) =>
        this.#graph.nodes.find((n) => n.name === name)?.subgraph === undefined
          ? null
          : { thread_id, checkpoint_ns: [...(scope?.ns ?? []), `${name}:${id}`].join('|') },
    })
    this.#step += 1
    this.#last = record
    return record
  }

  /** Yields a checkpoint for the run manager to store, then its `checkpoints`/`debug` events. */
  *#store(record: CheckpointRecord): Generator<TaskOutput> {
    yield { kind: 'checkpoint', checkpoint: record }
    yield* emit(this.#modes.checkpoint(record))
  }

  /**
   * A checkpoint and the state it holds, announced together: the session protocol names the
   * checkpoint before the values, the legacy modes after them, as the real server orders them.
   */
  *#announce(record: CheckpointRecord): Generator<TaskOutput> {
    const checkpoint = this.#modes.checkpoint(record)
    yield* emit([
      ...checkpoint.filter((e) => 'protocol' in e),
      ...this.#modes.checkpointBrief(record),
      ...this.#modes.values(this.#state),
      ...checkpoint.filter((e) => !('protocol' in e)),
    ])
  }

  /** Settles the latest checkpoint's pending task (its id, or its node's name; see settleTask) and has it stored. */
  *#settle(task: string, outcome: TaskOutcome, pausedAt: PausedAt | null = null): Generator<TaskOutput> {
    if (this.#last === null) return
    this.#last = settleTask(this.#last, task, outcome)
    yield { kind: 'amend', checkpoint: this.#last, pausedAt }
  }

  #byName(name: string): GraphNode {
    const node = this.#graph.nodes.find((n) => n.name === name)
    if (!node) throw new GraphError('InvalidUpdateError', `Node '${name}' does not exist in graph '${this.#graph.graph_id}'`)
    return node
  }

  /** Where `node` leads from `state`: the nodes of the first of its routes that applies, or one task per input of its Send. */
  #targets(node: GraphNode, state: State): Target[] {
    const situation = { state, configurable: configurableOf(this.#request), visits: this.#visits.get(node.name) ?? 0 }
    const route = routeFrom(node.routes, situation)
    if (!route) return []
    if (!route.send) return route.to.filter((to) => to !== END).map((to) => ({ node: to }))
    const inputs = renderValue(route.send.inputs, state, this.#request.context)
    if (!Array.isArray(inputs) || inputs.some((i) => typeof i !== 'object' || i === null || Array.isArray(i))) {
      throw new GraphError('InvalidUpdateError', `The inputs of node '${node.name}''s Send to '${route.send.node}' must be a list of objects, got ${JSON.stringify(inputs)}`)
    }
    return (inputs as State[]).map((input) => ({ node: route.send!.node, input }))
  }

  /**
   * The step's tasks, as a checkpoint lists them: its pending tasks (not those that already ran
   * beside an interrupt); a Send's task gets the input the pause kept; `resume` answers the
   * interrupts of those that interrupted.
   */
  #planFrom(record: CheckpointRecord, resume?: { value: unknown }): Plan {
    const sends = this.#pausedAt?.sends ?? {}
    const plan: Plan = { tasks: [], ran: [] }
    // A map by interrupt id answers only the tasks it names (the others ask again); any other value answers them all.
    const answers = resume?.value
    const byId = typeof answers === 'object' && answers !== null && !Array.isArray(answers) &&
      record.tasks.some((t) => t.interrupts.some((i) => Object.hasOwn(answers, i.id)))
    const answerOf = (interrupts: Interrupt[]) => {
      if (!resume || interrupts.length === 0) return {}
      if (!byId) return { resume: { value: resume.value } }
      const named = interrupts.find((i) => Object.hasOwn(answers as object, i.id))
      return named ? { resume: { value: resumeValue(answers, [named]) } } : {}
    }
    for (const task of record.tasks) {
      const node = this.#byName(task.name)
      if (this.#pausedAt?.ran?.includes(task.id)) {
        plan.ran.push({ node, writes: task.result as Record<string, unknown> })
        continue
      }
      const pushed = task.path?.[0] === '__pregel_push' ? task.path : undefined
      plan.tasks.push({
        node,
        id: task.id,
        ...(pushed ? { pushed } : {}),
        ...(sends[task.id] ? { input: sends[task.id] } : {}),
        ...answerOf(task.interrupts),
      })
    }
    return plan
  }

  async *run(): Output {
    const { input, command } = this.#request
    const isCommand = command != null && (command.resume !== undefined || command.update !== undefined || command.goto !== undefined)
    yield* emit(this.#modes.graphStart(isCommand ? command : input))
    let plan: StepEnd
    try {
      plan = isCommand ? yield* this.#command() : input != null ? yield* this.#input(input) : yield* this.#continue()
    } catch (error) {
      if (!(error instanceof GraphError)) throw error
      return yield* failed(error, this.#state)
    }
    const { interruptBefore } = this.#request
    for (let first = true; plan !== 'end'; first = false) {
      if (plan === 'stopped') return
      // A thread stopped at a breakpoint before this step goes on past it.
      const passed = first && this.#pausedAt?.breakpoint === true
      const stop = passed ? undefined : plan.tasks.find((t) => stopsAt(interruptBefore, t.node.name))
      if (stop) return yield* this.#breakpoint(stop.node.name)
      if (this.#steps >= this.#recursionLimit) return yield* failed(recursionError(this.#recursionLimit), this.#state)
      plan = yield* this.#superstep(plan)
    }
    yield* emit(this.#modes.graphEnd(this.#state))
    yield { kind: 'done', status: 'success', values: this.#state, pausedAt: null, error: null }
  }

  /**
   * A breakpoint: the thread stops before `node` (the latest checkpoint's pending task) with no
   * interrupt value; the run succeeds and answers `{"__interrupt__": []}`.
   */
  async *#breakpoint(node: string, after?: { taskId: string }): Output {
    const pausedAt: PausedAt = { node, interrupts: [], breakpoint: true, ...this.#sendsOf(this.#last) }
    if (after && this.#last) {
      // After a node, the thread's interrupts name the task that ran, as LangGraph records it.
      this.#last = { ...this.#last, interrupts: { ...this.#last.interrupts, [after.taskId]: [] } }
      yield { kind: 'amend', checkpoint: this.#last, pausedAt }
    } else yield* this.#settle(node, { breakpoint: true }, pausedAt)
    yield* emit(this.#modes.interrupted([]))
    yield* emit(this.#modes.graphEnd(this.#state))
    yield { kind: 'done', status: 'success', values: { __interrupt__: [] }, pausedAt, error: null }
  }

  /** The Send inputs of a checkpoint this run wrote (kept in memory), for a pause to keep them. */
  #sendsOf(record: CheckpointRecord | null): { sends?: Record<string, State> } {
    const sends = record === null ? undefined : this.#pendingSends.get(record.checkpoint_id)
    return sends ? { sends } : {}
  }

  /** The inputs of the Send tasks of the checkpoints this run wrote, by checkpoint and task id. */
  readonly #pendingSends = new Map<string, Record<string, State>>()

  /** A new input: the input checkpoint, the input applied (step checkpoint), then the first step. */
  async *#input(input: unknown): AsyncGenerator<TaskOutput, StepEnd> {
    const entry: StepSpec = { source: 'input', values: this.#state, next: ['__start__'], writes: { __start__: input } }
    let applied: Applied
    try {
      applied = this.#apply(input)
    } catch (error) {
      if (!(error instanceof GraphError)) throw error
      // The input checkpoint still records the input, its `__start__` task the error.
      yield* this.#store(this.#checkpoint({ ...entry, task: { result: input, error: error.toTaskError() } }))
      throw error
    }
    yield* this.#store(this.#checkpoint({ ...entry, task: { result: input } }))
    return yield* this.#started(applied)
  }

  /** The state with `input` merged in (throws a GraphError when the reducers refuse it). */
  #apply(input: unknown): Applied {
    const writes = normalizeUpdate(this.#channels, input)
    return { writes, state: applyWrites(this.#channels, this.#state, writes) }
  }

  /** The input applied: the step checkpoint before the first step (the graph's entry nodes). */
  async *#started({ writes, state }: Applied): AsyncGenerator<TaskOutput, Plan> {
    this.#state = state
    const record = this.#checkpoint({ source: 'loop', values: state, next: this.#graph.entry, writes: null })
    yield { kind: 'checkpoint', checkpoint: record }
    if (Object.keys(writes).length > 0) yield* this.#announce(record)
    else yield* emit(this.#modes.checkpoint(record))
    return this.#planFrom(record)
  }

  /**
   * A command. With `resume` on an interrupted thread: the interrupted tasks run again and their
   * interrupts return the value (or each its own, from a map by interrupt id); `update` joins
   * that step (no checkpoint of its own). Else the command is the run's input, as in LangGraph:
   * an `input` checkpoint with `update` applied, whose tasks are the `goto` target and the tasks
   * still pending there, which run again.
   */
  async *#command(): AsyncGenerator<TaskOutput, StepEnd> {
    const command = this.#request.command!
    const target = gotoTarget(command.goto)
    if (target !== null) this.#byName(target.node)
    const update = command.update === undefined ? undefined : commandUpdate(command.update)
    const writes = update === undefined ? {} : normalizeUpdate(this.#channels, update)
    const pending = this.#pausedAt !== null && this.#last !== null ? this.#planFrom(this.#last).tasks.map((t) => t.node.name) : []
    if (pending.length > 0 && command.resume !== undefined && (target === null || pending.includes(target.node))) {
      this.#state = applyWrites(this.#channels, this.#state, writes)
      // A resume announces the checkpoint it resumes from again, as LangGraph does.
      yield* this.#announce(this.#last!)
      return this.#planFrom(this.#last!, { value: command.resume })
    }
    const hadState = this.#last !== null
    this.#state = applyWrites(this.#channels, this.#state, writes)
    const names = this.#graph.nodes.map((n) => n.name)
    const next = [...new Set([target?.node, ...pending.filter((n) => n !== target?.node)].filter((n): n is string => n != null))]
      .sort((x, y) => names.indexOf(x) - names.indexOf(y))
    const record = this.#checkpoint({ source: 'input', values: this.#state, next, writes: { __start__: update ?? null } })
    yield { kind: 'checkpoint', checkpoint: record }
    if (hadState || Object.keys(writes).length > 0) yield* this.#announce(record)
    else yield* emit(this.#modes.checkpoint(record))
    if (next.length === 0) return 'end'
    const plan = this.#planFrom(record)
    // A goto's Send gives its node an input of its own.
    if (target?.input !== undefined) plan.tasks = plan.tasks.map((t) => (t.node.name === target.node ? { ...t, input: target.input } : t))
    return plan
  }

  /**
   * No input: the run continues the start checkpoint's pending tasks (an interrupted one runs
   * again and interrupts again). From a checkpoint the run named, it first writes a `fork`
   * checkpoint (a copy of that one, its child), so the new branch starts there.
   */
  async *#continue(): AsyncGenerator<TaskOutput, StepEnd> {
    const start = this.#last
    if (start === null) throw new GraphError('EmptyInputError', 'Received no input writes for "__start__"')
    let from = start
    if (this.#request.forked) {
      from = this.#checkpoint({ source: 'fork', values: this.#state, next: start.next, writes: null })
      yield { kind: 'checkpoint', checkpoint: from }
      yield* this.#announce(from)
    } else if (start.next.length > 0) yield* this.#announce(start)
    else yield* emit(this.#modes.values(this.#state))
    if (start.next.length === 0) return 'end'
    // A pending input (an input checkpoint's, or one a thread's supersteps recorded) is applied now.
    if (start.next[0] === '__start__') return yield* this.#started(this.#apply(start.tasks.find((t) => t.name === '__start__')?.result ?? writtenInput(start)))
    return this.#planFrom(from)
  }

  /** The task view the modes describe a planned task with (its input: a Send's, or the state). */
  #view(task: Planned): TaskView {
    return { id: task.id, name: task.node.name, step: this.#step, input: task.input ?? this.#state, ...(task.pushed ? { pushed: task.pushed } : {}) }
  }

  /**
   * Runs one superstep: its tasks together on the clock, each one's events as it goes; a task's
   * update and result as soon as it finishes (the last one's after the step's checkpoint). When
   * every task succeeded: their writes merged in task order, one checkpoint, the next step from
   * all their routes. When some interrupted: no checkpoint; the one the step ran from keeps the
   * interrupts, and the writes of those that succeeded (its values include them, its `next` lists
   * only the tasks still to run), as LangGraph shows it. A failure stops the run at once.
   */
  async *#superstep(plan: Plan): AsyncGenerator<TaskOutput, StepEnd> {
    this.#steps += 1
    const views = plan.tasks.map((t) => this.#view(t))
    const context = { channels: this.#channels, modes: this.#modes, request: this.#request, uiKey: uiKeyOf(this.#graph) }
    const runs = plan.tasks.map((task, i) => {
      const visits = this.#visits.get(task.node.name) ?? 0
      this.#visits.set(task.node.name, visits + 1)
      return task.node.subgraph === undefined
        ? playNode(task.node, views[i], { ...context, resume: task.resume, visits })
        : this.#subgraph(task, views[i])
    })
    for (const view of views) yield* emit(this.#modes.taskStart(view))
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
      if (outcome.kind === 'fail') return yield* this.#failed(view, outcome.error)
      if (outcome.kind === 'interrupt') {
        // A subgraph's interrupts keep their ids; a node's own gets one from its task.
        const raised: Interrupt[] = outcome.interrupts ?? [{ id: interruptId(view.id), value: outcome.value }]
        interrupts.push(...raised)
        yield* this.#settle(view.id, { interrupts: raised }, { node: this.#pausedNode(plan, outcomes), interrupts: [...interrupts] })
        // While no task of the step has written anything, `values` shows the interrupt too.
        const ran = outcomes.some((o) => o?.kind === 'ok')
        yield* emit(this.#modes.interrupted(raised).filter((e) => !ran || 'protocol' in e || e.event !== 'values'))
        const ended = { writes: null, interrupts: raised, error: null }
        yield* emit(this.#modes.taskEnd(view, ended))
        yield* emit(this.#modes.taskDone(view, ended, outcome.interrupts !== undefined))
      } else if (finished < plan.tasks.length) yield* this.#ended(view, outcome)
      else lastRan = index
    }
    const ran = plan.tasks.flatMap((task, i) => {
      const outcome = outcomes[i]
      return outcome.kind === 'ok' ? [{ task, view: views[i], writes: outcome.writes }] : []
    })
    const state = ran.reduce((s, r) => applyWrites(this.#channels, s, r.writes), this.#state)
    if (interrupts.length > 0) return yield* this.#paused(plan, outcomes, state, interrupts, lastRan)
    this.#state = state
    let targets: Target[]
    try {
      targets = [...plan.ran.map((r) => r.node), ...plan.tasks.map((t) => t.node)].flatMap((node) => this.#targets(node, state))
    } catch (error) {
      if (!(error instanceof GraphError)) throw error
      yield* failed(error, state)
      return 'stopped'
    }
    const sends = targets.filter((t) => t.input !== undefined)
    const names = this.#graph.nodes.map((n) => n.name)
    const pulled = [...new Set(targets.filter((t) => t.input === undefined).map((t) => t.node))].sort((x, y) => names.indexOf(x) - names.indexOf(y))
    // An `interrupt_after` stops after the step; its checkpoint is stored but not announced, as on the real server.
    const breakAfter = plan.tasks.find((t) => stopsAt(this.#request.interruptAfter, t.node.name))
    const stopAfter = targets.length > 0 ? breakAfter : undefined
    let settled = this.#last
    for (const r of ran) if (settled) settled = settleTask(settled, r.task.id, { result: r.writes })
    if (settled) {
      this.#last = settled
      yield { kind: 'amend', checkpoint: settled, pausedAt: null }
    }
    const written = Object.fromEntries([
      ...plan.ran.map((r) => [r.node.name, r.writes]),
      ...ran.map((r) => [r.task.node.name, Object.keys(r.writes).length > 0 ? r.writes : null]),
    ])
    const record = this.#checkpoint({ source: 'loop', values: state, next: [...sends.map((s) => s.node), ...pulled], pushed: sends.length, writes: written })
    if (sends.length > 0) this.#pendingSends.set(record.checkpoint_id, Object.fromEntries(sends.map((s, i) => [record.tasks[i].id, s.input!])))
    yield { kind: 'checkpoint', checkpoint: record }
    if (lastRan !== undefined) yield* this.#ended(views[lastRan], outcomes[lastRan] as Extract<NodeOutcome, { kind: 'ok' }>)
    if (!stopAfter) {
      yield* this.#announce(record)
      if (record.next.length === 0) return 'end'
      const next = this.#planFrom(record)
      next.tasks.forEach((task, i) => {
        if (i < sends.length) task.input = sends[i].input
      })
      return next
    }
    yield* emit(this.#modes.values(this.#state))
    yield* this.#breakpoint(record.next[0], { taskId: stopAfter.id })
    return 'stopped'
  }

  /** A task that runs its node's subgraph (see subgraph-run.ts). */
  #subgraph(task: Planned, view: TaskView): AsyncGenerator<TaskOutput, NodeOutcome> {
    const graph = this.#graphs.get(task.node.subgraph!)!
    const above = this.#scope
    const parentNs = above?.ns.join('|') ?? ''
    const ns = [...(above?.ns ?? []), `${view.name}:${view.id}`]
    const parents = { ...above?.parents, [parentNs]: this.#last?.checkpoint_id ?? this.#request.ids.run_id }
    const { tags: _tags, ...metadata } = this.#modes.taskMetadata(view)
    return runSubgraph({
      graph,
      task: view,
      request: this.#request,
      modes: this.#modes,
      scope: { ns, parents, metadata: { ...metadata, checkpoint_map: parents } },
      parentKeys: Object.keys(this.#graph.state),
      ...(task.resume ? { resume: task.resume } : {}),
      play: (inner, request, scope) => new GraphRun(inner, request, this.#graphs, scope).run(),
    })
  }

  /** The first node of the step still paused (the earliest task that interrupted). */
  #pausedNode(plan: Plan, outcomes: NodeOutcome[]): string {
    const first = plan.tasks.findIndex((_, i) => outcomes[i]?.kind === 'interrupt')
    return plan.tasks[first].node.name
  }

  /**
   * Some tasks of the step interrupted: the checkpoint the step ran from keeps their interrupts
   * and the results of those that ran (its values include their writes, its `next` lists only the
   * tasks still to run); the run answers the last interrupt (`/wait` shows only that one, as on
   * the real server), or the state when some task wrote.
   */
  async *#paused(plan: Plan, outcomes: NodeOutcome[], state: State, interrupts: Interrupt[], lastRan: number | undefined): AsyncGenerator<TaskOutput, 'stopped'> {
    let record = this.#last!
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
      this.#state = state
    }
    const sends = Object.fromEntries(plan.tasks.filter((t) => t.pushed && t.input).map((t) => [t.id, t.input!]))
    const ran = [...(this.#pausedAt?.ran ?? []).filter((id) => record.tasks.some((t) => t.id === id)), ...ranIds]
    const pausedAt: PausedAt = {
      node: this.#pausedNode(plan, outcomes),
      interrupts,
      ...(Object.keys(sends).length > 0 ? { sends } : {}),
      ...(ran.length > 0 ? { ran } : {}),
    }
    this.#last = record
    yield { kind: 'amend', checkpoint: record, pausedAt }
    if (lastRan !== undefined) {
      const view = this.#view(plan.tasks[lastRan])
      yield* this.#ended(view, outcomes[lastRan] as Extract<NodeOutcome, { kind: 'ok' }>)
    }
    if (ranIds.length > 0) yield* emit(this.#modes.values(state))
    yield* emit(this.#modes.graphEnd(this.#state))
    const values = ranIds.length > 0 ? state : { __interrupt__: [interrupts.at(-1)!] }
    yield { kind: 'done', status: 'success', values, pausedAt, error: null }
    return 'stopped'
  }

  /** The events of a task that ran: messages written whole, its update, its result. */
  *#ended(task: TaskView, outcome: Extract<NodeOutcome, { kind: 'ok' }>): Generator<TaskOutput> {
    const own = this.#graph.nodes.find((n) => n.name === task.name)?.subgraph === undefined
    yield* emit(this.#modes.written(task, outcome.unstreamed, own))
    yield* emit(this.#modes.updates(task.name, outcome.writes))
    yield* emit(this.#modes.taskEnd(task, { writes: outcome.writes, interrupts: [], error: null }))
    yield* emit(this.#modes.taskDone(task, { writes: outcome.writes, interrupts: [], error: null }))
  }

  /**
   * A task failed: the run stops (the step's other tasks with it). The error is kept on the
   * checkpoint the task ran from (its pending task shows it), as LangGraph does; no checkpoint is written.
   */
  async *#failed(task: TaskView, failure: GraphError): AsyncGenerator<TaskOutput, 'stopped'> {
    const error = failure.toTaskError()
    yield* this.#settle(task.id, { error })
    yield* emit(this.#modes.taskEnd(task, { writes: null, interrupts: [], error }))
    yield* emit(this.#modes.taskDone(task, { writes: null, interrupts: [], error }))
    yield* failed(failure, this.#state)
    return 'stopped'
  }
}

/** The input an `input` checkpoint recorded for `__start__` (in its metadata's `writes`). */
function writtenInput(record: CheckpointRecord): unknown {
  const writes = record.metadata.writes as { __start__?: unknown } | null | undefined
  return writes?.__start__ ?? null
}
