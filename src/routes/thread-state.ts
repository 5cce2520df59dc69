// A checkpoint as the API shows it (ThreadState): the thread's state, its history, and with
// `subgraphs` the state of the subgraphs its pending tasks run, read from their own namespaces.

import type { ThreadTask } from '../agent/types.js'
import type { Checkpoint } from '../store/threads.js'

/** The latest checkpoint of a subgraph namespace of the thread (undefined: it has none). */
export type LatestInNamespace = (ns: string) => Checkpoint | undefined

/** The state of a thread that never ran. */
const empty = () => ({ values: {}, next: [], tasks: [], metadata: null, created_at: null, checkpoint: null, parent_checkpoint: null, interrupts: [], checkpoint_id: null, parent_checkpoint_id: null })

/**
 * ThreadState of a checkpoint; a thread that never ran has the empty state. Given `subgraphs`, a
 * task that runs a subgraph (its `checkpoint` is `{thread_id, checkpoint_ns}`) shows instead, in
 * `state`, the ThreadState of that namespace's latest checkpoint (with its own subgraphs, and so
 * on), and `checkpoint: null`, as the real server's `?subgraphs=true` does. A subgraph that wrote no
 * checkpoint yet keeps its task as it is.
 */
export function presentState(threadId: string, checkpoint: Checkpoint | undefined, subgraphs: LatestInNamespace | null = null) {
  if (!checkpoint) return empty()
  const ns = checkpoint.checkpoint_ns
  return {
    values: checkpoint.values,
    next: checkpoint.next,
    tasks: subgraphs ? checkpoint.tasks.map((task) => withSubgraphState(threadId, ns, task, subgraphs)) : checkpoint.tasks,
    metadata: checkpoint.metadata,
    created_at: checkpoint.created_at,
    // A subgraph checkpoint's map names it and the checkpoints of the graphs above it; its parent's has none (as recorded).
    checkpoint: ref(threadId, ns, checkpoint.checkpoint_id, ns === '' ? null : { ...parents(checkpoint), [ns]: checkpoint.checkpoint_id }),
    parent_checkpoint: checkpoint.parent_checkpoint_id === null ? null : ref(threadId, ns, checkpoint.parent_checkpoint_id, null),
    interrupts: Object.values(checkpoint.interrupts).flat(),
    checkpoint_id: checkpoint.checkpoint_id,
    parent_checkpoint_id: checkpoint.parent_checkpoint_id,
  }
}

const ref = (threadId: string, ns: string, checkpointId: string, map: Record<string, unknown> | null) =>
  ({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId, checkpoint_map: map })

/** `metadata.parents`: the checkpoint id of each graph above a subgraph's (`{"": <root checkpoint id>}`). */
function parents(checkpoint: Checkpoint): Record<string, unknown> {
  const value = checkpoint.metadata.parents
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : {}
}

function withSubgraphState(threadId: string, ns: string, task: ThreadTask, latestIn: LatestInNamespace): ThreadTask {
  const inner = subgraphNamespace(task)
  // Only a namespace below this one: a task that named its own (or another graph's) cannot loop.
  if (inner === null || (ns !== '' && !inner.startsWith(`${ns}|`))) return task
  const latest = latestIn(inner)
  return latest ? { ...task, checkpoint: null, state: presentState(threadId, latest, latestIn) } : task
}

/** The namespace of the subgraph a task runs (its `checkpoint: {checkpoint_ns}`), or null. */
function subgraphNamespace(task: ThreadTask): string | null {
  const config = task.checkpoint as { checkpoint_ns?: unknown } | null
  const ns = config !== null && typeof config === 'object' ? config.checkpoint_ns : undefined
  return typeof ns === 'string' && ns !== '' ? ns : null
}
