// Checkpoints as LangGraph writes them: time-ordered UUID v6 ids whose clock-sequence field holds
// the step (`ffff` for the input step −1, `8000 + step` otherwise), tasks with ids derived from
// their checkpoint, interrupt ids of 32 hex digits.

import { v5 as uuid5, v6 as uuid6, parse as parseUuid } from 'uuid'
import type { CheckpointRecord, Interrupt, State, ThreadTask } from './types.js'

// Namespaces are parsed once (uuid5 parses a namespace given as text at every call).
const NAMESPACE = parseUuid('0f0d6b2e-3c1a-5b7e-9d4f-6a8c2e1b3d5f')

/** 100-nanosecond intervals between the Gregorian epoch (1582-10-15) and the Unix epoch. */
const GREGORIAN_OFFSET = 122_192_928_000_000_000n

/** The timestamp of a v6 UUID in 100 ns ticks since 1582, or null for anything else. */
function v6Ticks(id: string): bigint | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null
  return BigInt(`0x${id.slice(0, 8)}${id.slice(9, 13)}${id.slice(15, 18)}`)
}

/**
 * A checkpoint id: a UUID v6 with the clock's time and the step in its clock-sequence field. It is
 * always later than its parent's (several checkpoints within one millisecond, or a clock moved
 * back, still sort in the order they were written).
 */
export function checkpointId(step: number, now: number, parentId: string | null): string {
  let ticks = BigInt(Math.floor(now)) * 10_000n + GREGORIAN_OFFSET
  const parent = parentId === null ? null : v6Ticks(parentId)
  if (parent !== null && ticks <= parent) ticks = parent + 1n
  const sinceUnix = ticks - GREGORIAN_OFFSET
  const clockseq = step < 0 ? 0xffff : 0x8000 + (step & 0x7fff)
  return uuid6({ msecs: Number(sinceUnix / 10_000n), nsecs: Number(sinceUnix % 10_000n), clockseq })
}

/** The id of the task that runs `node` from checkpoint `checkpointId`. */
export const taskId = (checkpointId: string, node: string) => uuid5(`task:${checkpointId}:${node}`, NAMESPACE)

/** The id of the interrupt a task raises: 32 hex digits, as the real server shows them. */
export const interruptId = (task: string) => uuid5(`interrupt:${task}`, NAMESPACE).replaceAll('-', '')

export const taskPath = (node: string) => ['__pregel_pull', node]
/** The path of a Send's task: the `i`-th Send of the step. */
export const pushPath = (i: number) => ['__pregel_push', i, false]

/** The id of a Send's task: the `i`-th Send of the step that checkpoint `checkpointId` ends. */
export const pushTaskId = (checkpointId: string, i: number) => uuid5(`task:${checkpointId}:__pregel_push:${i}`, NAMESPACE)

export interface CheckpointSpec {
  id: string
  parentId: string | null
  source: 'input' | 'loop' | 'update' | 'fork'
  step: number
  values: State
  next: string[]
  /** How many of `next` (the first ones) are Sends' tasks (pushed), not nodes the edges lead to. */
  pushed?: number
  writes: unknown
  /** Run metadata and ids, written before `source`, `step`, `writes`, `parents`. */
  metadata: Record<string, unknown>
  /** A subgraph's checkpoint: its namespace (`<node>:<task id>`, levels joined by `|`) and its parents' checkpoints by namespace. */
  ns?: string
  parents?: Record<string, string>
  /** The `checkpoint` a pending task shows: `{thread_id, checkpoint_ns}` for a task that runs a subgraph, else null. */
  taskCheckpoint?: (task: { name: string; id: string }) => unknown
  /** What the (single) pending task shows once it ran: its input's result, interrupts or error. */
  task?: { result?: unknown; interrupts?: Interrupt[]; error?: string }
}

export function makeCheckpoint(spec: CheckpointSpec): CheckpointRecord {
  const pushed = spec.pushed ?? 0
  const tasks: ThreadTask[] = spec.next.map((name, i) => {
    const id = i < pushed ? pushTaskId(spec.id, i) : taskId(spec.id, name)
    return {
      id,
      name,
      path: i < pushed ? pushPath(i) : taskPath(name),
      error: spec.task?.error ?? null,
      interrupts: spec.task?.interrupts ?? [],
      checkpoint: spec.taskCheckpoint?.({ name, id }) ?? null,
      state: null,
      result: spec.task?.result ?? null,
    }
  })
  const interrupts = Object.fromEntries(
    tasks.filter((t) => t.interrupts.length > 0 || t.error !== null).map((t) => [t.id, t.interrupts]),
  )
  return {
    checkpoint_id: spec.id,
    parent_checkpoint_id: spec.parentId,
    values: spec.values,
    next: spec.next,
    metadata: { ...spec.metadata, source: spec.source, step: spec.step, writes: spec.writes, parents: spec.parents ?? {} },
    tasks,
    interrupts,
    ...(spec.ns ? { checkpoint_ns: spec.ns } : {}),
  }
}

/** How a checkpoint's pending task turned out: its result, its interrupts, its error, or a breakpoint before it. */
export interface TaskOutcome {
  result?: unknown
  interrupts?: Interrupt[]
  error?: string
  breakpoint?: boolean
}

/**
 * The checkpoint with its pending task `task` (its id, or its node's name) settled, as LangGraph
 * shows it: the task's result (kept when an earlier run already gave one), interrupts and error; a
 * task that stopped the thread (an interrupt, an error, a breakpoint) is listed in the checkpoint's
 * `interrupts`.
 */
export function settleTask(record: CheckpointRecord, which: string, outcome: TaskOutcome): CheckpointRecord {
  const task = record.tasks.find((t) => t.id === which) ?? record.tasks.find((t) => t.name === which)
  if (!task) return record
  const settled: ThreadTask = {
    ...task,
    ...(outcome.result !== undefined && (task.result === null || task.result === undefined) ? { result: outcome.result } : {}),
    ...(outcome.interrupts ? { interrupts: outcome.interrupts } : {}),
    ...(outcome.error !== undefined ? { error: outcome.error } : {}),
  }
  const stopped = (outcome.interrupts?.length ?? 0) > 0 || outcome.error !== undefined || outcome.breakpoint === true
  return {
    ...record,
    tasks: record.tasks.map((t) => (t === task ? settled : t)),
    interrupts: stopped ? { ...record.interrupts, [task.id]: settled.interrupts } : record.interrupts,
  }
}
