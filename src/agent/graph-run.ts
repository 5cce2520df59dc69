// One run of a scripted graph: an async generator of EngineOutput (see types.ts). It decides where
// the run starts (a new input, a resume, a command, a re-run of an interrupted node), plays the
// nodes one after another on the run's clock, and yields each step's checkpoint before the events
// that report the step, so a client that reads the thread after an event finds the step stored.

import { checkpointId, interruptId, makeCheckpoint, settleTask, taskId, type CheckpointSpec, type TaskOutcome } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { channelsOf, type Graph, type GraphNode } from './graphs.js'
import { emit, playNode } from './node-steps.js'
import { applyWrites, initialState, normalizeUpdate, type Channels } from './state.js'
import { runMetadata, StreamModes, type TaskView } from './stream-modes.js'
import type { Breakpoints, CheckpointRecord, EngineOutput, Interrupt, PausedAt, RunRequest, State } from './types.js'

type Output = AsyncGenerator<EngineOutput, void>
/** A checkpoint as a step describes it; the run adds its id, parent, step number and metadata. */
type StepSpec = Omit<CheckpointSpec, 'id' | 'parentId' | 'step' | 'metadata'>
/** Where the nodes start, and the value the first one's interrupt returns when it is resumed. */
interface Start {
  index: number
  resume?: { value: unknown }
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

/** `command.update` as an object (a list of `[key, value]` pairs is accepted too). */
function commandUpdate(update: unknown): unknown {
  if (Array.isArray(update) && update.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string')) {
    return Object.fromEntries(update as [string, unknown][])
  }
  return update
}

/**
 * `command.goto`: a node name, a Send (`{node, arg}`), or a list of them — the first is taken (the
 * graphs run one node at a time). An empty list, as `RemoteGraph` sends it, means no goto.
 */
function gotoNode(goto: unknown): string | null {
  if (goto === null || goto === undefined || (Array.isArray(goto) && goto.length === 0)) return null
  const first = Array.isArray(goto) ? goto[0] : goto
  const node = typeof first === 'object' && first !== null ? (first as { node?: unknown }).node : first
  if (typeof node !== 'string') throw new GraphError('InvalidUpdateError', `Expected a node name to go to, got ${JSON.stringify(goto)}`)
  return node
}

const stopsAt = (breakpoints: Breakpoints, node: string) => breakpoints === '*' || breakpoints.includes(node)

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

  #nodeIndex(name: string): number {
    const index = this.#graph.nodes.findIndex((n) => n.name === name)
    if (index < 0) throw new GraphError('InvalidUpdateError', `Node '${name}' does not exist in graph '${this.#graph.graph_id}'`)
    return index
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
    if (start !== null) {
      const { nodes } = this.#graph
      const { interruptBefore, interruptAfter } = this.#request
      for (let index = start.index; index < nodes.length; index++) {
        const node = nodes[index]
        const first = index === start.index
        // A thread stopped at a breakpoint before this node goes on past it.
        const passed = first && this.#pausedAt?.breakpoint === true && this.#pausedAt.node === node.name
        if (!passed && stopsAt(interruptBefore, node.name)) return yield* this.#breakpoint(node.name)
        const successor = nodes[index + 1]?.name
        const breakAfter = successor !== undefined && stopsAt(interruptAfter, node.name)
        const ranFrom = this.#last?.checkpoint_id ?? this.#request.ids.run_id
        const ran = yield* this.#node(node, first ? start.resume : undefined, !breakAfter)
        if (!ran) return
        if (breakAfter) return yield* this.#breakpoint(successor, { taskId: taskId(ranFrom, node.name) })
      }
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
    const record = this.#checkpoint({ source: 'loop', values: state, next: [this.#graph.nodes[0].name], writes: null })
    yield { kind: 'checkpoint', checkpoint: record }
    if (Object.keys(writes).length > 0) yield* this.#announce(record)
    else yield* emit(this.#modes.checkpoint(record))
    return { index: 0 }
  }

  /**
   * A command: `update` applied first, then the run goes to `goto` or else to the interrupted node,
   * which gets `resume` as the value of its interrupt. Without either there is nothing to run.
   */
  async *#command(): AsyncGenerator<EngineOutput, Start | null> {
    const command = this.#request.command!
    const hadState = this.#last !== null
    const paused = this.#pausedAt?.node ?? null
    const goto = gotoNode(command.goto)
    const target = goto ?? paused
    const index = target === null ? -1 : this.#nodeIndex(target)
    const resume = paused !== null && target === paused && command.resume !== undefined
      ? { value: resumeValue(command.resume, this.#pausedAt!.interrupts) }
      : undefined
    let changed = false
    if (command.update !== undefined || (target !== null && target !== paused)) {
      const update = commandUpdate(command.update)
      const writes = normalizeUpdate(this.#channels, update)
      this.#state = applyWrites(this.#channels, this.#state, writes)
      changed = Object.keys(writes).length > 0
      const next = target === null ? [] : [target]
      yield* this.#store(this.#checkpoint({ source: 'loop', values: this.#state, next, writes: changed ? { __start__: update } : null }))
    } else if (this.#last !== null) {
      // A plain resume announces the checkpoint it resumes from again, as LangGraph does.
      yield* this.#announce(this.#last)
      return target === null ? null : { index, resume }
    }
    if (hadState || changed) yield* emit(this.#modes.values(this.#state))
    return target === null ? null : { index, resume }
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
    if (pending === '__start__') return yield* this.#started(this.#apply(start.tasks.find((t) => t.name === '__start__')?.result ?? null))
    return { index: this.#nodeIndex(pending) }
  }

  /**
   * Runs one node as one step; false when the run ended there (interrupt or failure). Its
   * checkpoint is announced unless `announce` is false (an `interrupt_after` stops after it).
   */
  async *#node(node: GraphNode, resume: { value: unknown } | undefined, announce: boolean): AsyncGenerator<EngineOutput, boolean> {
    // The task is the one the latest checkpoint lists as pending (its id derives from that checkpoint).
    const pending = taskId(this.#last?.checkpoint_id ?? this.#request.ids.run_id, node.name)
    const task: TaskView = { id: pending, name: node.name, step: this.#step, input: this.#state }
    yield* emit(this.#modes.taskStart(task))
    const outcome = yield* playNode(node, task, { channels: this.#channels, modes: this.#modes, request: this.#request, resume })

    if (outcome.kind === 'ok') {
      const successor = this.#graph.nodes[this.#graph.nodes.indexOf(node) + 1]?.name
      const writes = outcome.writes
      yield* this.#settle(node.name, { result: writes })
      const record = this.#checkpoint({
        source: 'loop',
        values: outcome.state,
        next: successor ? [successor] : [],
        writes: { [node.name]: Object.keys(writes).length > 0 ? writes : null },
      })
      this.#state = outcome.state
      yield { kind: 'checkpoint', checkpoint: record }
      yield* emit(this.#modes.written(task, outcome.unstreamed))
      yield* emit(this.#modes.updates(node.name, writes))
      yield* emit(this.#modes.taskEnd(task, { writes, interrupts: [], error: null }))
      yield* emit(this.#modes.taskDone(task, { writes, interrupts: [], error: null }))
      if (announce) yield* this.#announce(record)
      else yield* emit(this.#modes.values(this.#state))
      return true
    }

    // Stopped: the interrupt or the error is kept on the checkpoint the node ran from (its pending
    // task shows it), as LangGraph does; no checkpoint is written.
    if (outcome.kind === 'interrupt') {
      const interrupt: Interrupt = { id: interruptId(pending), value: outcome.value }
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
}

/**
 * The value an interrupt resumes with: `resume` itself, or — when it is a map from interrupt id to
 * value that names a pending interrupt, as LangGraph accepts it (and the session protocol's
 * `input.respond` sends it) — that interrupt's entry.
 */
function resumeValue(resume: unknown, pending: readonly Interrupt[]): unknown {
  if (typeof resume !== 'object' || resume === null || Array.isArray(resume)) return resume
  const named = pending.find((i) => Object.hasOwn(resume, i.id))
  return named ? (resume as Record<string, unknown>)[named.id] : resume
}
