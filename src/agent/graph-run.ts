// One run of a scripted graph: an async generator of EngineOutput (see types.ts). It decides where
// the run starts (a new input, a resume, a command, a re-run of an interrupted node), plays the
// nodes one after another on the run's clock, and yields each step's checkpoint before the events
// that report the step, so a client that reads the thread after an event finds the step stored.

import { checkpointId, interruptId, makeCheckpoint, taskId, type CheckpointSpec } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { channelsOf, type Graph, type GraphNode } from './graphs.js'
import { emit, playNode } from './node-steps.js'
import { applyWrites, normalizeUpdate, type Channels } from './state.js'
import { runMetadata, StreamModes, type TaskView } from './stream-modes.js'
import type { CheckpointRecord, EngineOutput, Interrupt, RunRequest, State } from './types.js'

type Output = AsyncGenerator<EngineOutput, void>
/** A checkpoint as a step describes it; the run adds its id, parent, step number and metadata. */
type StepSpec = Omit<CheckpointSpec, 'id' | 'parentId' | 'step' | 'metadata'>
/** Where the nodes start, and the value the first one's interrupt returns when it is resumed. */
interface Start {
  index: number
  resume?: { value: unknown }
}

/** The run, stopped at once (without a `done`) when its signal aborts. */
export async function* runGraph(graph: Graph | undefined, request: RunRequest): Output {
  const { signal } = request
  if (signal.aborted) return
  const inner = graph
    ? new GraphRun(graph, request).run()
    : failed(new GraphError('ValueError', `Graph '${request.graphId}' not found`), request.state ?? {})
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

/** `command.goto`: a node name, a `{node}` Send, or a list of them (the first is taken). */
function gotoNode(goto: unknown): string {
  const first = Array.isArray(goto) ? goto[0] : goto
  const node = typeof first === 'object' && first !== null ? (first as { node?: unknown }).node : first
  if (typeof node !== 'string') throw new GraphError('InvalidUpdateError', `Expected a node name to go to, got ${JSON.stringify(goto)}`)
  return node
}

class GraphRun {
  readonly #graph: Graph
  readonly #request: RunRequest
  readonly #channels: Channels
  readonly #modes: StreamModes
  readonly #metadata: Record<string, unknown>
  #state: State
  /** The step number the next checkpoint gets. */
  #step: number
  #lastCheckpoint: string | null

  constructor(graph: Graph, request: RunRequest) {
    this.#graph = graph
    this.#request = request
    this.#channels = channelsOf(graph)
    this.#modes = new StreamModes(request)
    this.#metadata = runMetadata(request)
    this.#state = structuredClone(request.state ?? {})
    this.#step = request.step
    this.#lastCheckpoint = request.checkpointId
  }

  #checkpoint(spec: StepSpec, id?: string): CheckpointRecord {
    const record = makeCheckpoint({
      ...spec,
      id: id ?? this.#newId(),
      parentId: this.#lastCheckpoint,
      step: this.#step,
      metadata: this.#metadata,
    })
    this.#step += 1
    this.#lastCheckpoint = record.checkpoint_id
    return record
  }

  /** Yields a checkpoint for the run manager to store, then its `checkpoints`/`debug` events. */
  *#store(record: CheckpointRecord): Generator<EngineOutput> {
    yield { kind: 'checkpoint', checkpoint: record }
    yield* emit(this.#modes.checkpoint(record))
  }

  #newId(): string {
    return checkpointId(this.#step, this.#request.clock.now(), this.#lastCheckpoint)
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
      start = isCommand ? yield* this.#command() : input != null ? yield* this.#input() : yield* this.#continue()
    } catch (error) {
      if (!(error instanceof GraphError)) throw error
      return yield* failed(error, this.#state)
    }
    if (start !== null) {
      for (let index = start.index; index < this.#graph.nodes.length; index++) {
        const next = yield* this.#node(this.#graph.nodes[index], index === start.index ? start.resume : undefined)
        if (!next) return
      }
    }
    yield* emit(this.#modes.graphEnd(this.#state))
    yield { kind: 'done', status: 'success', values: this.#state, pausedAt: null, error: null }
  }

  /** A new input: the input checkpoint, the input applied (step checkpoint), then the first node. */
  async *#input(): AsyncGenerator<EngineOutput, Start | null> {
    const { input } = this.#request
    const first = this.#graph.nodes[0].name
    const entry: StepSpec = { source: 'input', values: this.#state, next: ['__start__'], writes: { __start__: input } }
    let writes: Record<string, unknown>
    let after: State
    try {
      writes = normalizeUpdate(this.#channels, input)
      after = applyWrites(this.#channels, this.#state, writes)
    } catch (error) {
      if (!(error instanceof GraphError)) throw error
      // The input checkpoint still records the input, its `__start__` task the error.
      yield* this.#store(this.#checkpoint({ ...entry, task: { result: input, error: error.toTaskError() } }))
      throw error
    }
    yield* this.#store(this.#checkpoint({ ...entry, task: { result: input } }))
    this.#state = after
    const applied = this.#checkpoint({ source: 'loop', values: after, next: [first], writes: null })
    yield* this.#store(applied)
    if (Object.keys(writes).length > 0) yield* emit(this.#modes.values(after))
    return { index: 0 }
  }

  /**
   * A command: `update` applied first, then the run goes to `goto` or else to the interrupted node,
   * which gets `resume` as the value of its interrupt. Without either there is nothing to run.
   */
  async *#command(): AsyncGenerator<EngineOutput, Start | null> {
    const command = this.#request.command!
    const paused = this.#request.pausedAt?.node ?? null
    const target = command.goto !== undefined ? gotoNode(command.goto) : paused
    const index = target === null ? -1 : this.#nodeIndex(target)
    const resume = paused !== null && target === paused && command.resume !== undefined
      ? { value: resumeValue(command.resume, this.#request.pausedAt!.interrupts) }
      : undefined
    let changed = false
    if (command.update !== undefined || (target !== null && target !== paused)) {
      const update = commandUpdate(command.update)
      const writes = normalizeUpdate(this.#channels, update)
      this.#state = applyWrites(this.#channels, this.#state, writes)
      changed = Object.keys(writes).length > 0
      const next = target === null ? [] : [target]
      yield* this.#store(this.#checkpoint({ source: 'loop', values: this.#state, next, writes: changed ? { __start__: update } : null }))
    }
    if (this.#request.state !== null || changed) yield* emit(this.#modes.values(this.#state))
    return target === null ? null : { index, resume }
  }

  /** No input: an interrupted thread re-runs its interrupted node (which interrupts again). */
  async *#continue(): AsyncGenerator<EngineOutput, Start | null> {
    const paused = this.#request.pausedAt?.node ?? null
    if (this.#request.state !== null) yield* emit(this.#modes.values(this.#state))
    if (paused === null) return null
    return { index: this.#nodeIndex(paused) }
  }

  /** Runs one node as one step; false when the run ended there (interrupt or failure). */
  async *#node(node: GraphNode, resume: { value: unknown } | undefined): AsyncGenerator<EngineOutput, boolean> {
    // The task is the one the latest checkpoint lists as pending (its id derives from that checkpoint).
    const pending = taskId(this.#lastCheckpoint ?? this.#request.ids.run_id, node.name)
    const task: TaskView = { id: pending, name: node.name, step: this.#step, input: this.#state }
    yield* emit(this.#modes.taskStart(task))
    const outcome = yield* playNode(node, task, { channels: this.#channels, modes: this.#modes, request: this.#request, resume })
    const index = this.#graph.nodes.indexOf(node)

    if (outcome.kind === 'ok') {
      const successor = this.#graph.nodes[index + 1]?.name
      const writes = outcome.writes
      const record = this.#checkpoint({
        source: 'loop',
        values: outcome.state,
        next: successor ? [successor] : [],
        writes: { [node.name]: Object.keys(writes).length > 0 ? writes : null },
      })
      this.#state = outcome.state
      yield { kind: 'checkpoint', checkpoint: record }
      yield* emit(this.#modes.written(task, outcome.unstreamed))
      yield* emit(this.#modes.taskEnd(task, { writes, interrupts: [], error: null }))
      yield* emit(this.#modes.updates(node.name, writes))
      yield* emit(this.#modes.taskDone(task, { writes, interrupts: [], error: null }))
      yield* emit(this.#modes.checkpoint(record))
      yield* emit(this.#modes.values(this.#state))
      return true
    }

    // Stopped: a checkpoint with the state before the node, which is still next, its task
    // carrying the interrupt or the error (checkpoints are written once, so this is a new one).
    const id = this.#newId()
    const stopped: StepSpec = { source: 'loop', values: this.#state, next: [node.name], writes: null }
    if (outcome.kind === 'interrupt') {
      const interrupt: Interrupt = { id: interruptId(taskId(id, node.name)), value: outcome.value }
      const record = this.#checkpoint({ ...stopped, task: { interrupts: [interrupt] } }, id)
      yield { kind: 'checkpoint', checkpoint: record }
      yield* emit(this.#modes.taskEnd(task, { writes: null, interrupts: [interrupt], error: null }))
      yield* emit(this.#modes.taskDone(task, { writes: null, interrupts: [interrupt], error: null }))
      yield* emit(this.#modes.checkpoint(record))
      yield* emit(this.#modes.interrupted([interrupt]))
      yield* emit(this.#modes.graphEnd(this.#state))
      const values = { __interrupt__: [interrupt] }
      yield { kind: 'done', status: 'success', values, pausedAt: { node: node.name, interrupts: [interrupt] }, error: null }
      return false
    }

    const error = outcome.error.toTaskError()
    const record = this.#checkpoint({ ...stopped, task: { error } }, id)
    yield { kind: 'checkpoint', checkpoint: record }
    yield* emit(this.#modes.taskEnd(task, { writes: null, interrupts: [], error }))
    yield* emit(this.#modes.taskDone(task, { writes: null, interrupts: [], error }))
    yield* emit(this.#modes.checkpoint(record))
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
