// What one run of a scripted graph (graph-run.ts) knows as it goes, and what every part of it does
// with that: the state and the latest checkpoint, writing the next checkpoint (ids, namespace,
// parents), announcing it, settling a pending task on it, and planning a superstep's tasks from it
// (pending tasks, Send inputs, which interrupts a resume answers). Where the run starts is
// run-start.ts; a superstep is superstep.ts.

import { checkpointId, makeCheckpoint, settleTask, type CheckpointSpec, type TaskOutcome } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { channelsOf, type Graph, type GraphNode } from './graphs.js'
import { resumeValue } from './commands.js'
import { routeFrom } from './conditions.js'
import { configurableOf, emit } from './node-steps.js'
import { initialState, type Channels } from './state.js'
import { runMetadata, StreamModes, type TaskView } from './stream-modes.js'
import type { SubgraphScope } from './subgraph-run.js'
import type { TaskOutput } from './task-scheduler.js'
import { renderValue } from './templates.js'
import type { CheckpointRecord, Interrupt, PausedAt, RunRequest, State } from './types.js'

export const END = '__end__'
/** LangGraph's default `recursion_limit`. */
const DEFAULT_RECURSION_LIMIT = 25

/** A checkpoint as a step describes it; the run adds its id, parent, step number and metadata. */
export type StepSpec = Omit<CheckpointSpec, 'id' | 'parentId' | 'step' | 'metadata'>
/** A task of a superstep: a pending task of the checkpoint the step runs from. */
export interface Planned {
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
export interface Plan {
  tasks: Planned[]
  ran: { node: GraphNode; writes: Record<string, unknown> | null }[]
}
/** How a superstep ended: the next one, the graph's end, or a stop (an interrupt, a failure, a breakpoint: the run is done). */
export type StepEnd = Plan | 'end' | 'stopped'
/** A place the routes lead to: a node, or a Send's task of a node with its input. */
export interface Target {
  node: string
  input?: State
}
/** Runs a graph (a subgraph, from a node). */
export type PlayGraph = (graph: Graph, request: RunRequest, scope: SubgraphScope) => AsyncGenerator<TaskOutput, void>

export class RunState {
  readonly graph: Graph
  readonly request: RunRequest
  readonly channels: Channels
  readonly modes: StreamModes
  readonly metadata: Record<string, unknown>
  /** Where the start checkpoint is paused (at an interrupt or a breakpoint), if it is. */
  readonly pausedAt: PausedAt | null
  state: State
  /** The step number the next checkpoint gets. */
  step: number
  /** The latest checkpoint: the one the run started from, then the last one it wrote. */
  last: CheckpointRecord | null
  /** How many times each node ran in this run (route and fail conditions read it). */
  readonly visits = new Map<string, number>()
  /** How many supersteps the run took; past `recursion_limit` it fails. */
  steps = 0
  readonly recursionLimit: number
  /** Every graph, by id (a node's subgraph is one of them), and how to run one. */
  readonly graphs: ReadonlyMap<string, Graph>
  readonly play: PlayGraph
  /** Set when this run is a subgraph's: where it sits. */
  readonly scope: SubgraphScope | null
  /** The inputs of the Send tasks of the checkpoints this run wrote, by checkpoint and task id. */
  readonly pendingSends = new Map<string, Record<string, State>>()

  constructor(graph: Graph, request: RunRequest, graphs: ReadonlyMap<string, Graph>, scope: SubgraphScope | null, play: PlayGraph) {
    this.play = play
    const { start } = request
    this.graph = graph
    this.request = request
    this.graphs = graphs
    this.scope = scope
    this.channels = channelsOf(graph)
    const meta = runMetadata(request)
    this.modes = new StreamModes(request, scope?.ns ?? [], meta)
    // A run that named its checkpoint carries it in its checkpoints' metadata, as LangGraph's do.
    const named = request.forked && start ? { checkpoint_id: start.checkpoint_id, checkpoint_ns: '' } : {}
    this.metadata = { ...meta, ...named, ...scope?.metadata }
    this.pausedAt = start?.pausedAt ?? null
    this.state = start ? structuredClone(start.values) : initialState(this.channels)
    this.step = start ? Number(start.metadata.step ?? -1) + 1 : -1
    this.last = start
    const limit = request.config.recursion_limit
    this.recursionLimit = typeof limit === 'number' && limit > 0 ? limit : DEFAULT_RECURSION_LIMIT
  }

  checkpoint(spec: StepSpec): CheckpointRecord {
    const scope = this.scope
    const { thread_id } = this.request.ids
    // A subgraph's first checkpoint sorts after its parent's latest.
    const after = this.last?.checkpoint_id ?? (scope ? Object.values(scope.parents).at(-1)! : null)
    const record = makeCheckpoint({
      ...spec,
      id: checkpointId(this.step, this.request.clock.now(), after),
      parentId: this.last?.checkpoint_id ?? null,
      step: this.step,
      metadata: this.metadata,
      ...(scope ? { ns: scope.ns.join('|'), parents: scope.parents } : {}),
      // A pending task that runs a subgraph names the namespace of its subgraph's checkpoints.
      taskCheckpoint: ({ name, id }) =>
        this.graph.nodes.find((n) => n.name === name)?.subgraph === undefined
          ? null
          : { thread_id, checkpoint_ns: [...(scope?.ns ?? []), `${name}:${id}`].join('|') },
    })
    this.step += 1
    this.last = record
    return record
  }

  /** Yields a checkpoint for the run manager to store, then its `checkpoints`/`debug` events. */
  *store(record: CheckpointRecord): Generator<TaskOutput> {
    yield { kind: 'checkpoint', checkpoint: record }
    yield* emit(this.modes.checkpoint(record))
  }

  /**
   * A checkpoint and the state it holds, announced together: the session protocol names the
   * checkpoint before the values, the legacy modes after them, as the real server orders them.
   */
  *announce(record: CheckpointRecord): Generator<TaskOutput> {
    const checkpoint = this.modes.checkpoint(record)
    yield* emit([
      ...checkpoint.filter((e) => 'protocol' in e),
      ...this.modes.checkpointBrief(record),
      ...this.modes.values(this.state),
      ...checkpoint.filter((e) => !('protocol' in e)),
    ])
  }

  /** Settles the latest checkpoint's pending task (its id, or its node's name; see settleTask) and has it stored. */
  *settle(task: string, outcome: TaskOutcome, pausedAt: PausedAt | null = null): Generator<TaskOutput> {
    if (this.last === null) return
    this.last = settleTask(this.last, task, outcome)
    yield { kind: 'amend', checkpoint: this.last, pausedAt }
  }

  byName(name: string): GraphNode {
    const node = this.graph.nodes.find((n) => n.name === name)
    if (!node) throw new GraphError('InvalidUpdateError', `Node '${name}' does not exist in graph '${this.graph.graph_id}'`)
    return node
  }

  /** Where `node` leads from `state`: the nodes of the first of its routes that applies, or one task per input of its Send. */
  targets(node: GraphNode, state: State): Target[] {
    const situation = { state, configurable: configurableOf(this.request), visits: this.visits.get(node.name) ?? 0 }
    const route = routeFrom(node.routes, situation)
    if (!route) return []
    if (!route.send) return route.to.filter((to) => to !== END).map((to) => ({ node: to }))
    const inputs = renderValue(route.send.inputs, state, this.request.context)
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
  planFrom(record: CheckpointRecord, resume?: { value: unknown }): Plan {
    const sends = this.pausedAt?.sends ?? {}
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
      const node = this.byName(task.name)
      if (this.pausedAt?.ran?.includes(task.id)) {
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

  /** The Send inputs of a checkpoint this run wrote (kept in memory), for a pause to keep them. */
  sendsOf(record: CheckpointRecord | null): { sends?: Record<string, State> } {
    const sends = record === null ? undefined : this.pendingSends.get(record.checkpoint_id)
    return sends ? { sends } : {}
  }

  /** The task view the modes describe a planned task with (its input: a Send's, or the state). */
  view(task: Planned): TaskView {
    return { id: task.id, name: task.node.name, step: this.step, input: task.input ?? this.state, ...(task.pushed ? { pushed: task.pushed } : {}) }
  }
}
