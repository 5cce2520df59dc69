// The contract between the scripted-graph engine (src/agent/engine.ts and its helpers), which owns
// graph semantics and the wire form of stream-mode events, and the run manager (src/agent/runs.ts),
// which owns persistence, the event log, multitasking and transport. The engine never touches the
// database or HTTP; the run manager never looks inside a graph.

import type { Clock } from '../clock.js'

/** A thread's state values, e.g. `{ messages: [...], topic: "..." }`. */
export type State = Record<string, unknown>

/** A pending interrupt, as the wire shows it (`__interrupt__` items, thread `interrupts`). */
export interface Interrupt {
  value: unknown
  id: string
  [key: string]: unknown
}

/** One task of a checkpoint (ThreadState.tasks). */
export interface ThreadTask {
  id: string
  name: string
  path?: unknown[]
  error: string | null
  interrupts: Interrupt[]
  /**
   * Null, or for a task that runs a subgraph `{thread_id, checkpoint_ns}`: the namespace its
   * checkpoints are stored in. `GET /state?subgraphs=true` shows that namespace's latest state in
   * `state` instead (and this null), as the real server does.
   */
  checkpoint: unknown | null
  state: unknown | null
  result?: unknown
}

/** A checkpoint the engine asks the run manager to persist (the thread's state after a step). */
export interface CheckpointRecord {
  checkpoint_id: string
  parent_checkpoint_id: string | null
  values: State
  /** Nodes that would run next (empty when the graph finished). */
  next: string[]
  /** `{ source: "input" | "loop" | "update", step, writes, parents, ... }`. */
  metadata: Record<string, unknown>
  tasks: ThreadTask[]
  /** Interrupts pending at this checkpoint, keyed as the Thread `interrupts` field is. */
  interrupts: Record<string, Interrupt[]>
  /**
   * The graph it is a checkpoint of: '' or absent for the root graph; `<node>:<task id>` for a
   * subgraph run by that task (nested: the path joined by `|`), with `metadata.parents` naming the
   * checkpoint of each graph above it (`{"": <root checkpoint id>}`). Stored in the same thread, but
   * only root checkpoints are its state, its history and where its runs start.
   */
  checkpoint_ns?: string
}

/**
 * Where an interrupted thread is paused, so a `command.resume` run can continue from there: at an
 * interrupt the node raised, or (`breakpoint`) before a node an `interrupt_before`/`interrupt_after`
 * stopped at — a run without input continues there without stopping again.
 */
export interface PausedAt {
  /** The (first) node paused. */
  node: string
  /** Every interrupt pending (several when parallel tasks interrupted). */
  interrupts: Interrupt[]
  breakpoint?: true
  /** The inputs of the paused step's Send tasks, by task id (the checkpoint's tasks do not show them). */
  sends?: Record<string, State>
  /** The ids of the paused step's tasks that ran (their writes are in the checkpoint's values): a resume does not run them again. */
  ran?: string[]
}

/** A stored checkpoint as a run starts from it: the record and where it is paused (if it is). */
export interface StartCheckpoint extends CheckpointRecord {
  pausedAt: PausedAt | null
}

/** `interrupt_before` / `interrupt_after`: node names, or `*` for every node. */
export type Breakpoints = string[] | '*'

export interface Command {
  resume?: unknown
  update?: unknown
  goto?: unknown
}

/**
 * An event of the session protocol (`/threads/{id}/stream/events`): a method, the namespace of the
 * (sub)graph or task it comes from (`<node>:<task_id>` segments), for `updates` the node, and the
 * payload. The thread's log gives it its `seq` and timestamp.
 */
export interface ProtocolEvent {
  method: string
  namespace: string[]
  node?: string
  data: unknown
}

/** The store (long-term memory) as a graph's steps reach it: the agent server's the run is on. */
export interface RunStore {
  put(namespace: string[], key: string, value: Record<string, unknown>): void
  search(namespacePrefix: string[], options: { query: string | null; filter: Record<string, unknown> | null; limit: number }): unknown[]
}

/** What a run asks of the engine. */
export interface RunRequest {
  /** The graph to run (one the engine loaded). */
  graphId: string
  /**
   * The checkpoint the run starts from: the thread's latest, or the one the run named (a fork);
   * null for a thread that never ran (or a named checkpoint that does not exist: LangGraph then
   * starts from an empty state).
   */
  start: StartCheckpoint | null
  /** Whether the run named its checkpoint (`checkpoint_id` / `checkpoint`): a run without input then forks. */
  forked: boolean
  interruptBefore: Breakpoints
  interruptAfter: Breakpoints
  input: unknown
  command: Command | null
  /** The run's config (with `configurable`), as given by the client plus the ids below. */
  config: Record<string, unknown>
  /** The run's runtime context (its `context`, over its assistant's): `{{context.<key>}}` in templates. */
  context?: unknown
  streamModes: string[]
  /** Whether to also yield the session protocol's events (runs on a thread: its log records them). */
  protocol: boolean
  /** Whether the session protocol started it (`run.start`, `input.respond`): its client reads the protocol's events, not its stream modes. */
  protocolRun?: boolean
  subgraphs: boolean
  ids: { run_id: string; thread_id: string; assistant_id: string; graph_id: string }
  /**
   * The latest checkpoint of a subgraph's namespace on the thread (`<node>:<task id>`), so that a
   * resumed node resumes its subgraph where it stopped; absent for a run without a thread.
   */
  subgraphStart?: (ns: string) => StartCheckpoint | null
  /** The store of the agent server the run is on (absent: a run without one; a store step then fails). */
  store?: RunStore
  /** Delays are waited on this clock (`clock.until`), so tests drive them with a manual clock. */
  clock: Clock
  /** Aborted when the run is cancelled; the engine stops at once (between any two outputs). */
  signal: AbortSignal
}

/** A legacy stream-mode event (for the run's own log), or an event of the session protocol (for the thread's). */
export type Emit = { event: string; data: unknown } | { protocol: ProtocolEvent }

/**
 * What the engine yields, in order:
 * - `emit`: an SSE event, already in its wire form for the requested stream modes
 *   (`values`, `updates`, `messages`, `custom`, `events`, `debug`, ... or `error`);
 * - `protocol`: an event of the session protocol, for the thread's log (when the run asked for them);
 * - `emits`: several of those at once, in order, as one output (what a stream mode makes of one
 *   step: each output passes up through every generator between the node and the run manager, a
 *   few promises at each, so a step's events travel together);
 * - `checkpoint`: persist this state (the run manager writes it, and the events before it, in one
 *   transaction); `amend`: update a stored checkpoint's tasks;
 * - `done`: the last output: how the run ended.
 * The run manager itself sends `metadata` first and, on success, `feedback` last.
 */
export type EngineOutput =
  | { kind: 'emit'; event: string; data: unknown }
  | { kind: 'protocol'; event: ProtocolEvent }
  | { kind: 'emits'; list: Emit[] }
  | { kind: 'checkpoint'; checkpoint: CheckpointRecord }
  /**
   * A stored checkpoint's tasks changed (a pending task ran, interrupted or failed: LangGraph keeps
   * that beside the checkpoint instead of writing a new one), and where the thread is paused there.
   * `tasksOnly`: only the tasks' results changed (its values, `next` and interrupts are as stored),
   * so the store rewrites the tasks alone.
   */
  | { kind: 'amend'; checkpoint: CheckpointRecord; pausedAt: PausedAt | null; tasksOnly?: true }
  | {
      kind: 'done'
      /** success: finished or stopped at an interrupt; error: a node raised. */
      status: 'success' | 'error'
      values: State
      /** Set when the graph stopped at an interrupt. */
      pausedAt: PausedAt | null
      error: { error: string; message: string } | null
    }

/** A loaded graph's public description (assistants, `/graph`, `/schemas`). */
export interface GraphInfo {
  graph_id: string
  description: string | null
  /** `GET /assistants/{id}/graph`. */
  drawable: { nodes: unknown[]; edges: unknown[] }
  /** `?xray`: the drawing with subgraphs expanded 1, 2, … levels deep (the last expands them all; none without subgraphs). */
  xray: { nodes: unknown[]; edges: unknown[] }[]
  /** `GET /assistants/{id}/schemas`. */
  schemas: Record<string, unknown>
  /** The nodes that run a subgraph, in node order (`GET /assistants/{id}/subgraphs`). */
  subgraphs: SubgraphInfo[]
}

/** A node that runs a subgraph: the subgraph's schemas, under the real server's names, and its own subgraphs. */
export interface SubgraphInfo {
  node: string
  schemas: { state: unknown; input: unknown; output: unknown; config: unknown }
  subgraphs: SubgraphInfo[]
}

/** The scripted-graph engine, as the run manager and routes use it. */
export interface GraphEngine {
  /** Every graph loaded from the fixtures, in a stable order. */
  graphs(): GraphInfo[]
  /** The ids of `graphs()`, in its order (without describing each graph). */
  graphIds(): string[]
  /** Whether a graph of this id is loaded. */
  has(graphId: string): boolean
  info(graphId: string): GraphInfo | undefined
  /** Runs (or resumes) a graph; see EngineOutput for what it yields. */
  run(request: RunRequest): AsyncIterable<EngineOutput>
  /**
   * `POST /threads/{id}/state`: applies `values` as if node `asNode` (or the graph's last node)
   * had returned them, through the graph's reducers (a graph-less thread uses the default ones:
   * `messages` merged by id, other keys replaced). Returns the checkpoint to store.
   */
  updateState(
    graphId: string | null,
    current: { values: State | null; checkpointId: string | null; step: number },
    values: unknown,
    asNode: string | null,
  ): CheckpointRecord
  /**
   * One superstep of a thread's `supersteps`: several updates in one checkpoint, each as if its
   * node had returned it; `__input__` records an input (see engine.ts). Returns the checkpoint to store.
   */
  applySuperstep(
    graphId: string | null,
    current: { values: State | null; checkpointId: string | null; step: number },
    updates: { values: unknown; asNode: string | null }[],
  ): CheckpointRecord
}
