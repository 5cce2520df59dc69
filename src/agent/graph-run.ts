// One run of a scripted graph: an async generator of EngineOutput (see types.ts). It decides where
// the run starts (a new input, a resume, a command, a re-run of an interrupted node), plays the
// nodes one after another on the run's clock, and yields each step's checkpoint before the events
// that report the step, so a client that reads the thread after an event finds the step stored.

import { checkpointId, interruptId, makeCheckpoint, settleTask, taskId, type CheckpointSpec, type TaskOutcome } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { channelsOf, uiKeyOf, type Graph, type GraphNode } from './graphs.js'
import { commandUpdate, gotoTarget, resumeValue, stopsAt } from './commands.js'
import { routeFrom } from './conditions.js'
import { configurableOf, emit, playNode, type NodeOutcome } from './node-steps.js'
import { applyWrites, initialState, normalizeUpdate, type Channels } from './state.js'
import { runMetadata, StreamModes, type TaskView } from './stream-modes.js'
import type { CheckpointRecord, EngineOutput, Interrupt, PausedAt, RunRequest, State } from './types.js'

type Output = AsyncGenerator<EngineOutput, void>
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
/** Where the nodes start, and the value the first one's interrupt returns when it is resumed. */
interface Start {
  /** The node to run first (`__end__`: none). */
  node: string
  resume?: { value: unknown }
  /** A Send's input: what the first node gets instead of the state. */
  input?: State
  /** A node still pending beside the first one (a goto away from an interrupted node): both run in one superstep. */
  alongside?: string
}
/** An update merged in: what it writes (normalized) and the state after it. */
interface Applied {
  writes: Record<string, unknown>
  state: State
}

/** The run, stopped at once (without a `done`) when its signal aborts. */
export async function* runGraph(graph: Graph | undefined, request: RunRequest): Output {
  const { signal } = request
  if (signal.aborted) return
  const inner = graph
    ? new GraphRun(graph, request).run()
    : failed(new GraphError('ValueError', `Graph '${request.graphId}' not found`), request.start?.values ?? {})
  try {
    for await (const output of inner) {
      if (signal.aborted) return
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
  /** How many node steps the run took; past `recursion_limit` it fails. */
  #steps = 0
  readonly #recursionLimit: number

  constructor(graph: Graph, request: RunRequest) {
    const { start } = request
    this.#graph = graph
    this.#request = request
    this.#channels = channelsOf(graph)
    this.#modes = new StreamModes(request)
    // A run that named its checkpoint carries it in its checkpoints' metadata, as LangGraph's do.
    const named = request.forked && start ? { checkpoint_id: start.checkpoint_id, checkpoint_ns: '' } : {}
    this.#metadata = { ...runMetadata(request), ...named }
    this.#pausedAt = start?.pausedAt ?? null
    this.#state = start ? structuredClone(start.values) : initialState(this.#channels)
    this.#step = start ? Number(start.metadata.step ?? -1) + 1 : -1
    this.#last = start
    const limit = request.config.recursion_limit
    this.#recursionLimit = typeof limit === 'number' && limit > 0 ? limit : DEFAULT_RECURSION_LIMIT
  }

  #checkpoint(spec: StepSpec): CheckpointRecord {
    const record = makeCheckpoint({
      ...spec,
      id: checkpointId(this.#step, this.#request.clock.now(), this.#last?.checkpoint_id ?? null),
      parentId: this.#last?.checkpoint_id ?? null,
      step: this.#step,
      metadata: this.#metadata,
    })
    this.#step += 1
    this.#last = record
    return record
  }

  /** Yields a checkpoint for the run manager to store, then its `checkpoints`/`debug` events. */
  *#store(record: CheckpointRecord): Generator<EngineOutput> {
    yield { kind: 'checkpoint', checkpoint: record }
    yield* emit(this.#modes.checkpoint(record))
  }

  /**
   * A checkpoint and the state it holds, announced together: the session protocol names the
   * checkpoint before the values, the legacy modes after them, as the real server orders them.
   */
  *#announce(record: CheckpointRecord): Generator<EngineOutput> {
    const checkpoint = this.#modes.checkpoint(record)
    yield* emit([...checkpoint.filter((e) => 'protocol' in e), ...this.#modes.values(this.#state), ...checkpoint.filter((e) => !('protocol' in e))])
  }

  /** Settles the latest checkpoint's pending task `node` (see settleTask) and has it stored. */
  *#settle(node: string, outcome: TaskOutcome, pausedAt: PausedAt | null = null): Generator<EngineOutput> {
    if (this.#last === null) return
    this.#last = settleTask(this.#last, node, outcome)
    yield { kind: 'amend', checkpoint: this.#last, pausedAt }
  }

  #byName(name: string): GraphNode {
    const node = this.#graph.nodes.find((n) => n.name === name)
    if (!node) throw new GraphError('InvalidUpdateError', `Node '${name}' does not exist in graph '${this.#graph.graph_id}'`)
    return node
  }

  /** Where `node` goes from `state`: the first of its routes that applies (`__end__`: nowhere). */
  #route(node: GraphNode, state: State): string {
    const situation = { state, configurable: configurableOf(this.#request), visits: this.#visits.get(node.name) ?? 0 }
    return routeFrom(node.routes, situation)?.to[0] ?? END
  }

  async *run(): Output {
    const { input, command } = this.#request
    const isCommand = command != null && (command.resume !== undefined || command.update !== undefined || command.goto !== undefined)
    yield* emit(this.#modes.graphStart(isCommand ? command : input))
    let start: Start | null
    try {
      start = isCommand ? yield* this.#command() : input != null ? yield* this.#input(input) : yield* this.#continue()
    } catch (error) {
      if (!(error instanceof GraphError)) throw error
      return yield* failed(error, this.#state)
    }
    if (start?.alongside !== undefined) {
      start = yield* this.#superstep(this.#byName(start.node), start.input, this.#byName(start.alongside))
      if (start === null) return
    }
    const { interruptBefore } = this.#request
    for (let name = start?.node ?? END, first = true; name !== END; first = false) {
      const node = this.#byName(name)
      // A thread stopped at a breakpoint before this node goes on past it.
      const passed = first && this.#pausedAt?.breakpoint === true && this.#pausedAt.node === node.name
      if (!passed && stopsAt(interruptBefore, node.name)) return yield* this.#breakpoint(node.name)
      if (this.#steps >= this.#recursionLimit) return yield* failed(recursionError(this.#recursionLimit), this.#state)
      const next = yield* this.#node(node, first ? { resume: start!.resume, input: start!.input } : {})
      if (next === false) return
      name = next
    }
    yield* emit(this.#modes.graphEnd(this.#state))
    yield { kind: 'done', status: 'success', values: this.#state, pausedAt: null, error: null }
  }

  /**
   * A breakpoint: the thread stops before `node` (the latest checkpoint's pending task) with no
   * interrupt value; the run succeeds and answers `{"__interrupt__": []}`.
   */
  async *#breakpoint(node: string, after?: { taskId: string }): Output {
    const pausedAt: PausedAt = { node, interrupts: [], breakpoint: true }
    if (after && this.#last) {
      // After a node, the thread's interrupts name the task that ran, as LangGraph records it.
      this.#last = { ...this.#last, interrupts: { ...this.#last.interrupts, [after.taskId]: [] } }
      yield { kind: 'amend', checkpoint: this.#last, pausedAt }
    } else yield* this.#settle(node, { breakpoint: true }, pausedAt)
    yield* emit(this.#modes.interrupted([]))
    yield* emit(this.#modes.graphEnd(this.#state))
    yield { kind: 'done', status: 'success', values: { __interrupt__: [] }, pausedAt, error: null }
  }

  /** A new input: the input checkpoint, the input applied (step checkpoint), then the first node. */
  async *#input(input: unknown): AsyncGenerator<EngineOutput, Start | null> {
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

  /** The input applied: the step checkpoint before the first node. */
  async *#started({ writes, state }: Applied): AsyncGenerator<EngineOutput, Start> {
    this.#state = state
    const first = this.#graph.nodes[0].name
    const record = this.#checkpoint({ source: 'loop', values: state, next: [first], writes: null })
    yield { kind: 'checkpoint', checkpoint: record }
    if (Object.keys(writes).length > 0) yield* this.#announce(record)
    else yield* emit(this.#modes.checkpoint(record))
    return { node: first }
  }

  /**
   * A command. With `resume` on an interrupted thread: the interrupted node runs again and its
   * interrupt returns the value; `update` joins that node's step (no checkpoint of its own). Else
   * the command is the run's input, as in LangGraph: an `input` checkpoint with `update` applied,
   * whose tasks are the `goto` target and the node still pending there, which runs again.
   */
  async *#command(): AsyncGenerator<EngineOutput, Start | null> {
    const command = this.#request.command!
    const paused = this.#pausedAt?.node ?? null
    const target = gotoTarget(command.goto)
    if (target !== null) this.#byName(target.node)
    const update = command.update === undefined ? undefined : commandUpdate(command.update)
    const writes = update === undefined ? {} : normalizeUpdate(this.#channels, update)
    if (paused !== null && command.resume !== undefined && (target === null || target.node === paused)) {
      this.#state = applyWrites(this.#channels, this.#state, writes)
      // A resume announces the checkpoint it resumes from again, as LangGraph does.
      yield* this.#announce(this.#last!)
      return { node: this.#byName(paused).name, resume: { value: resumeValue(command.resume, this.#pausedAt!.interrupts) } }
    }
    const hadState = this.#last !== null
    this.#state = applyWrites(this.#channels, this.#state, writes)
    const pending = paused !== null && paused !== target?.node ? paused : null
    const names = this.#graph.nodes.map((n) => n.name)
    const next = [target?.node, pending].filter((n): n is string => n != null).sort((x, y) => names.indexOf(x) - names.indexOf(y))
    const record = this.#checkpoint({ source: 'input', values: this.#state, next, writes: { __start__: update ?? null } })
    yield { kind: 'checkpoint', checkpoint: record }
    if (hadState || Object.keys(writes).length > 0) yield* this.#announce(record)
    else yield* emit(this.#modes.checkpoint(record))
    if (target === null) return pending === null ? null : { node: this.#byName(pending).name }
    return { node: target.node, input: target.input, ...(pending === null ? {} : { alongside: pending }) }
  }

  /**
   * No input: the run continues the start checkpoint's pending `next` (an interrupted node runs
   * again and interrupts again). From a checkpoint the run named, it first writes a `fork`
   * checkpoint (a copy of that one, its child), so the new branch starts there.
   */
  async *#continue(): AsyncGenerator<EngineOutput, Start | null> {
    const start = this.#last
    if (start === null) throw new GraphError('EmptyInputError', 'Received no input writes for "__start__"')
    if (this.#request.forked) {
      const fork = this.#checkpoint({ source: 'fork', values: this.#state, next: start.next, writes: null })
      yield { kind: 'checkpoint', checkpoint: fork }
      yield* this.#announce(fork)
    } else if (start.next.length > 0) yield* this.#announce(start)
    else yield* emit(this.#modes.values(this.#state))
    const pending = start.next[0]
    if (pending === undefined) return null
    // A pending input (an input checkpoint's, or one a thread's supersteps recorded) is applied now.
    if (pending === '__start__') return yield* this.#started(this.#apply(start.tasks.find((t) => t.name === '__start__')?.result ?? writtenInput(start)))
    return { node: this.#byName(pending).name }
  }

  /**
   * Runs one node as one step: where the run goes next (`__end__`: it ends), or false when it
   * ended there (an interrupt, a failure, an `interrupt_after`). A Send's `input` is what the node
   * gets instead of the state; its writes go to the state.
   */
  async *#node(node: GraphNode, options: { resume?: { value: unknown }; input?: State }): AsyncGenerator<EngineOutput, string | false> {
    const ranFrom = this.#last?.checkpoint_id ?? this.#request.ids.run_id
    const task = this.#task(node, options.input)
    const visits = this.#visits.get(node.name) ?? 0
    this.#visits.set(node.name, visits + 1)
    this.#steps += 1
    yield* emit(this.#modes.taskStart(task))
    const outcome = yield* playNode(node, task, {
      channels: this.#channels, modes: this.#modes, request: this.#request, resume: options.resume, visits, uiKey: uiKeyOf(this.#graph),
    })
    if (outcome.kind !== 'ok') return yield* this.#stop(node, task, outcome)
    const writes = outcome.writes
    const state = options.input === undefined ? outcome.state : applyWrites(this.#channels, this.#state, writes)
    const successor = this.#route(node, state)
    // An `interrupt_after` stops here; the checkpoint is stored but not announced, as on the real server.
    const breakAfter = successor !== END && stopsAt(this.#request.interruptAfter, node.name)
    yield* this.#settle(node.name, { result: writes })
    const record = this.#checkpoint({
      source: 'loop',
      values: state,
      next: successor === END ? [] : [successor],
      writes: { [node.name]: Object.keys(writes).length > 0 ? writes : null },
    })
    this.#state = state
    yield { kind: 'checkpoint', checkpoint: record }
    yield* this.#ended(task, outcome)
    if (!breakAfter) {
      yield* this.#announce(record)
      return successor
    }
    yield* emit(this.#modes.values(this.#state))
    yield* this.#breakpoint(successor, { taskId: taskId(ranFrom, node.name) })
    return false
  }

  /** The task that runs `node` from the latest checkpoint, which lists it as pending (its id derives from that checkpoint). */
  #task(node: GraphNode, input?: State): TaskView {
    return { id: taskId(this.#last?.checkpoint_id ?? this.#request.ids.run_id, node.name), name: node.name, step: this.#step, input: input ?? this.#state }
  }

  /** The events of a task that ran: messages written whole, its update, its result. */
  *#ended(task: TaskView, outcome: Extract<NodeOutcome, { kind: 'ok' }>): Generator<EngineOutput> {
    yield* emit(this.#modes.written(task, outcome.unstreamed))
    yield* emit(this.#modes.updates(task.name, outcome.writes))
    yield* emit(this.#modes.taskEnd(task, { writes: outcome.writes, interrupts: [], error: null }))
    yield* emit(this.#modes.taskDone(task, { writes: outcome.writes, interrupts: [], error: null }))
  }

  /**
   * A node stopped the run: the interrupt or the error is kept on the checkpoint the node ran from
   * (its pending task shows it), as LangGraph does; no checkpoint is written. Always false.
   */
  async *#stop(node: GraphNode, task: TaskView, outcome: Exclude<NodeOutcome, { kind: 'ok' }>): AsyncGenerator<EngineOutput, false> {
    if (outcome.kind === 'interrupt') {
      const interrupt: Interrupt = { id: interruptId(task.id), value: outcome.value }
      const pausedAt: PausedAt = { node: node.name, interrupts: [interrupt] }
      yield* this.#settle(node.name, { interrupts: [interrupt] }, pausedAt)
      yield* emit(this.#modes.interrupted([interrupt]))
      yield* emit(this.#modes.taskEnd(task, { writes: null, interrupts: [interrupt], error: null }))
      yield* emit(this.#modes.taskDone(task, { writes: null, interrupts: [interrupt], error: null }))
      yield* emit(this.#modes.graphEnd(this.#state))
      yield { kind: 'done', status: 'success', values: { __interrupt__: [interrupt] }, pausedAt, error: null }
      return false
    }
    const error = outcome.error.toTaskError()
    yield* this.#settle(node.name, { error })
    yield* emit(this.#modes.taskEnd(task, { writes: null, interrupts: [], error }))
    yield* emit(this.#modes.taskDone(task, { writes: null, interrupts: [], error }))
    yield* failed(outcome.error, this.#state)
    return false
  }

  /**
   * A goto away from an interrupted node: the target (`first`, with a Send's input) and the node
   * still pending (`pending`) run in one superstep from the command's input checkpoint, as in
   * LangGraph. When the pending node interrupts again, no checkpoint is written: the input
   * checkpoint shows the target's writes (its values include them) and both tasks, the thread is
   * interrupted, and the run answers the state. When both run, one checkpoint holds both writes.
   * Returns where the run goes on, or null when it ended here.
   */
  async *#superstep(first: GraphNode, input: State | undefined, pending: GraphNode): AsyncGenerator<EngineOutput, Start | null> {
    const context = { channels: this.#channels, modes: this.#modes, request: this.#request, uiKey: uiKeyOf(this.#graph) }
    const task = this.#task(first, input)
    yield* emit(this.#modes.taskStart(task))
    const outcome = yield* playNode(first, task, context)
    if (outcome.kind !== 'ok') {
      yield* this.#stop(first, task, outcome)
      return null
    }
    yield* this.#settle(first.name, { result: outcome.writes })
    yield* this.#ended(task, outcome)
    const state = applyWrites(this.#channels, this.#state, outcome.writes)
    const other = this.#task(pending)
    yield* emit(this.#modes.taskStart(other))
    const second = yield* playNode(pending, other, context)
    if (second.kind === 'fail') {
      yield* this.#stop(pending, other, second)
      return null
    }
    if (second.kind === 'interrupt') {
      const interrupt: Interrupt = { id: interruptId(other.id), value: second.value }
      const pausedAt: PausedAt = { node: pending.name, interrupts: [interrupt] }
      const settled = settleTask(this.#last!, pending.name, { interrupts: [interrupt] })
      this.#last = { ...settled, values: state, next: [pending.name], interrupts: { [task.id]: [], ...settled.interrupts } }
      this.#state = state
      yield { kind: 'amend', checkpoint: this.#last, pausedAt }
      yield* emit(this.#modes.interrupted([interrupt]).filter((e) => 'protocol' in e || e.event === 'updates'))
      yield* emit(this.#modes.taskEnd(other, { writes: null, interrupts: [interrupt], error: null }))
      yield* emit(this.#modes.taskDone(other, { writes: null, interrupts: [interrupt], error: null }))
      yield* emit(this.#modes.values(state))
      yield* emit(this.#modes.graphEnd(state))
      yield { kind: 'done', status: 'success', values: state, pausedAt, error: null }
      return null
    }
    yield* this.#settle(pending.name, { result: second.writes })
    this.#state = applyWrites(this.#channels, state, second.writes)
    // The graphs run one node at a time: the run goes on where the later node of the two leads.
    const names = this.#graph.nodes.map((n) => n.name)
    const later = names.indexOf(first.name) > names.indexOf(pending.name) ? first : pending
    const successor = this.#route(later, this.#state)
    const record = this.#checkpoint({
      source: 'loop',
      values: this.#state,
      next: successor === END ? [] : [successor],
      writes: { [first.name]: outcome.writes, [pending.name]: second.writes },
    })
    yield { kind: 'checkpoint', checkpoint: record }
    yield* this.#ended(other, second)
    yield* this.#announce(record)
    return { node: successor }
  }
}

/** The input an `input` checkpoint recorded for `__start__` (in its metadata's `writes`). */
function writtenInput(record: CheckpointRecord): unknown {
  const writes = record.metadata.writes as { __start__?: unknown } | null | undefined
  return writes?.__start__ ?? null
}
