// A node that runs another scripted graph as a subgraph, as LangGraph runs a compiled graph added
// as a node: the subgraph gets the parent's state (the keys it declares), writes its own
// checkpoints in the namespace `<node>:<task id>` (levels joined by `|`), and its final values (the
// parent's keys) are the node's update. Its events are the parent's, renamed `<mode>|<namespace>`
// when the run asked for `stream_subgraphs` (dropped otherwise; its messages then reach
// `messages-tuple` whole, from the node's update), and under its namespace in the session protocol.
// An interrupt inside it stops the parent at the node; resuming the node resumes the subgraph from
// its own latest checkpoint.

import { GraphError } from './graph-error.js'
import type { Graph } from './graphs.js'
import type { Message } from './messages.js'
import { emit, type NodeOutcome } from './node-steps.js'
import type { StreamModes, TaskView } from './stream-modes.js'
import type { TaskOutput } from './task-scheduler.js'
import type { Emit, EngineOutput, RunRequest, State } from './types.js'

/** Where a subgraph's run sits: its namespace, the checkpoints of the graphs above it, what its checkpoints' metadata adds. */
export interface SubgraphScope {
  ns: string[]
  /** The latest checkpoint id of each graph above, by namespace (`""`: the root). */
  parents: Record<string, string>
  metadata: Record<string, unknown>
}

export interface SubgraphCall {
  /** The graph the node runs. */
  graph: Graph
  /** The parent's task that runs it, its request and its modes. */
  task: TaskView
  request: RunRequest
  modes: StreamModes
  scope: SubgraphScope
  /** The parent graph's state keys (the update keeps those). */
  parentKeys: string[]
  /** Set when the node is resumed: the answer for the subgraph's interrupt. */
  resume?: { value: unknown }
  /** Runs a graph (graph-run.ts), here the subgraph. */
  play: (graph: Graph, request: RunRequest, scope: SubgraphScope) => AsyncGenerator<TaskOutput, void>
}

type Done = Extract<EngineOutput, { kind: 'done' }>

export async function* runSubgraph(call: SubgraphCall): AsyncGenerator<TaskOutput, NodeOutcome> {
  const { graph, task, request, modes, scope, resume } = call
  const segment = scope.ns.at(-1)!
  // A resumed node resumes its subgraph where it stopped; otherwise the subgraph starts afresh.
  const stored = resume ? request.subgraphStart?.(scope.ns.join('|')) ?? null : null
  const paused = stored?.pausedAt ? stored : null
  const input = Object.fromEntries(Object.entries(task.input).filter(([key]) => Object.hasOwn(graph.state, key)))
  const inner: RunRequest = {
    ...request,
    graphId: graph.graph_id,
    start: paused,
    forked: false,
    interruptBefore: [],
    interruptAfter: [],
    input: paused ? null : input,
    command: paused && resume ? { resume: resume.value } : null,
  }
  let opened = false
  let done: Done | undefined
  // The subgraph's events as the parent's: a stream mode's under the node's segment, the session
  // protocol's in its namespace, the first of those after the parent's note that the subgraph opened.
  const outer = (list: Emit[]): Emit[] => {
    const out: Emit[] = []
    for (const item of list) {
      if ('protocol' in item) {
        if (!opened) out.push(...modes.opened(task))
        opened = true
        out.push({ protocol: { ...item.protocol, namespace: [segment, ...item.protocol.namespace] } })
      // The subgraph's failure is the node's: the parent reports it once.
      } else if (item.event !== 'error' && request.subgraphs) out.push({ event: namespaced(item.event, segment), data: item.data })
    }
    return out
  }
  for await (const output of call.play(graph, inner, scope)) {
    if (output.kind === 'done') done = output
    else if (output.kind === 'emits') yield* emit(outer(output.list))
    else if (output.kind === 'emit') yield* emit(outer([{ event: output.event, data: output.data }]))
    else if (output.kind === 'protocol') yield* emit(outer([{ protocol: output.event }]))
    else yield output
  }
  if (!done) return { kind: 'fail', error: new GraphError('CancelledError', `The subgraph ${graph.graph_id} stopped before it ended`) }
  if (done.status === 'error') return { kind: 'fail', error: new GraphError(done.error?.error ?? 'Error', done.error?.message ?? '') }
  const interrupts = done.pausedAt?.interrupts ?? []
  if (interrupts.length > 0) return { kind: 'interrupt', value: interrupts.at(-1)!.value, interrupts }
  const writes = Object.fromEntries(call.parentKeys.filter((key) => Object.hasOwn(done.values, key)).map((key) => [key, done.values[key]]))
  return { kind: 'ok', state: { ...task.input, ...writes }, writes, unstreamed: request.subgraphs ? [] : newMessages(task.input, writes) }
}

/** `updates` → `updates|<segment>`; `updates|inner` → `updates|<segment>|inner`. */
function namespaced(event: string, segment: string): string {
  const bar = event.indexOf('|')
  return bar < 0 ? `${event}|${segment}` : `${event.slice(0, bar)}|${segment}${event.slice(bar)}`
}

/** The messages of the update that the node's input did not have (those the subgraph wrote). */
function newMessages(input: State, writes: Record<string, unknown>): Message[] {
  const known = new Set((Array.isArray(input.messages) ? (input.messages as Message[]) : []).map((m) => m.id))
  return (Array.isArray(writes.messages) ? (writes.messages as Message[]) : []).filter((m) => !known.has(m.id))
}
