// Where a run starts, before its first superstep: a new input (the input checkpoint, then the
// input applied), a command (a resume of the interrupted tasks, or the command as the run's input),
// or no input (the pending tasks of the checkpoint it starts from, after a fork checkpoint when the
// run named that checkpoint). Each returns the first superstep to run, or where the run ends.

import { GraphError } from './graph-error.js'
import { commandUpdate, gotoTarget } from './commands.js'
import { emit } from './node-steps.js'
import type { Plan, RunState, StepEnd, StepSpec } from './run-state.js'
import { applyWrites, normalizeUpdate } from './state.js'
import type { TaskOutput } from './task-scheduler.js'
import type { CheckpointRecord, State } from './types.js'

/** An update merged in: what it writes (normalized) and the state after it. */
interface Applied {
  writes: Record<string, unknown>
  state: State
}

/** Where the run starts: from its command, its input, or (neither) the pending tasks. */
export function startOf(run: RunState, isCommand: boolean): AsyncGenerator<TaskOutput, StepEnd> {
  const { input } = run.request
  return isCommand ? command(run) : input != null ? startInput(run, input) : continueRun(run)
}

/** A new input: the input checkpoint, the input applied (step checkpoint), then the first step. */
async function* startInput(run: RunState, input: unknown): AsyncGenerator<TaskOutput, StepEnd> {
  const entry: StepSpec = { source: 'input', values: run.state, next: ['__start__'], writes: { __start__: input } }
  let applied: Applied
  try {
    applied = apply(run, input)
  } catch (error) {
    if (!(error instanceof GraphError)) throw error
    // The input checkpoint still records the input, its `__start__` task the error.
    yield* run.store(run.checkpoint({ ...entry, task: { result: input, error: error.toTaskError() } }))
    throw error
  }
  yield* run.store(run.checkpoint({ ...entry, task: { result: input } }))
  return yield* started(run, applied)
}

/** The state with `input` merged in (throws a GraphError when the reducers refuse it). */
function apply(run: RunState, input: unknown): Applied {
  const writes = normalizeUpdate(run.channels, input)
  return { writes, state: applyWrites(run.channels, run.state, writes) }
}

/** The input applied: the step checkpoint before the first step (the graph's entry nodes). */
async function* started(run: RunState, { writes, state }: Applied): AsyncGenerator<TaskOutput, Plan> {
  run.state = state
  const record = run.checkpoint({ source: 'loop', values: state, next: run.graph.entry, writes: null })
  yield { kind: 'checkpoint', checkpoint: record }
  if (Object.keys(writes).length > 0) yield* run.announce(record)
  else yield* emit(run.modes.checkpoint(record))
  return run.planFrom(record)
}

/**
 * A command. With `resume` on an interrupted thread: the interrupted tasks run again and their
 * interrupts return the value (or each its own, from a map by interrupt id); `update` joins
 * that step (no checkpoint of its own). Else the command is the run's input, as in LangGraph:
 * an `input` checkpoint with `update` applied, whose tasks are the `goto` target and the tasks
 * still pending there, which run again.
 */
async function* command(run: RunState): AsyncGenerator<TaskOutput, StepEnd> {
  const command = run.request.command!
  const target = gotoTarget(command.goto)
  if (target !== null) run.byName(target.node)
  const update = command.update === undefined ? undefined : commandUpdate(command.update)
  const writes = update === undefined ? {} : normalizeUpdate(run.channels, update)
  const pending = run.pausedAt !== null && run.last !== null ? run.planFrom(run.last).tasks.map((t) => t.node.name) : []
  if (pending.length > 0 && command.resume !== undefined && (target === null || pending.includes(target.node))) {
    run.state = applyWrites(run.channels, run.state, writes)
    // A resume announces the checkpoint it resumes from again, as LangGraph does.
    yield* run.announce(run.last!)
    return run.planFrom(run.last!, { value: command.resume })
  }
  const hadState = run.last !== null
  run.state = applyWrites(run.channels, run.state, writes)
  const names = run.graph.nodes.map((n) => n.name)
  const next = [...new Set([target?.node, ...pending.filter((n) => n !== target?.node)].filter((n): n is string => n != null))]
    .sort((x, y) => names.indexOf(x) - names.indexOf(y))
  const record = run.checkpoint({ source: 'input', values: run.state, next, writes: { __start__: update ?? null } })
  yield { kind: 'checkpoint', checkpoint: record }
  if (hadState || Object.keys(writes).length > 0) yield* run.announce(record)
  else yield* emit(run.modes.checkpoint(record))
  if (next.length === 0) return 'end'
  const plan = run.planFrom(record)
  // A goto's Send gives its node an input of its own.
  if (target?.input !== undefined) plan.tasks = plan.tasks.map((t) => (t.node.name === target.node ? { ...t, input: target.input } : t))
  return plan
}

/**
 * No input: the run continues the start checkpoint's pending tasks (an interrupted one runs
 * again and interrupts again). From a checkpoint the run named, it first writes a `fork`
 * checkpoint (a copy of that one, its child), so the new branch starts there.
 */
async function* continueRun(run: RunState): AsyncGenerator<TaskOutput, StepEnd> {
  const start = run.last
  if (start === null) throw new GraphError('EmptyInputError', 'Received no input writes for "__start__"')
  let from = start
  if (run.request.forked) {
    from = run.checkpoint({ source: 'fork', values: run.state, next: start.next, writes: null })
    yield { kind: 'checkpoint', checkpoint: from }
    yield* run.announce(from)
  } else if (start.next.length > 0) yield* run.announce(start)
  else yield* emit(run.modes.values(run.state))
  if (start.next.length === 0) return 'end'
  // A pending input (an input checkpoint's, or one a thread's supersteps recorded) is applied now.
  if (start.next[0] === '__start__') return yield* started(run, apply(run, start.tasks.find((t) => t.name === '__start__')?.result ?? writtenInput(start)))
  return run.planFrom(from)
}

/** The input an `input` checkpoint recorded for `__start__` (in its metadata's `writes`). */
function writtenInput(record: CheckpointRecord): unknown {
  const writes = record.metadata.writes as { __start__?: unknown } | null | undefined
  return writes?.__start__ ?? null
}
