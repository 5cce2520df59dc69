// One run of a scripted graph: an async generator of EngineOutput (see types.ts). It decides where
// the run starts (run-start.ts: a new input, a resume, a command, a re-run of an interrupted
// task), then runs supersteps as LangGraph does (superstep.ts) until the graph ends or stops. What
// the run knows as it goes is run-state.ts. Each step's checkpoint is yielded before the events
// that report the step, so a client that reads the thread after an event finds the step stored.

import { GraphError } from './graph-error.js'
import type { Graph } from './graphs.js'
import { stopsAt } from './commands.js'
import { emit } from './node-steps.js'
import { RunState, type StepEnd } from './run-state.js'
import { startOf } from './run-start.js'
import type { SubgraphScope } from './subgraph-run.js'
import { breakpoint, failRun, superstep } from './superstep.js'
import type { TaskOutput } from './task-scheduler.js'
import type { EngineOutput, RunRequest } from './types.js'

/** LangGraph's error when a run takes more steps than its `recursion_limit` (JS wording, with the server's key name). */
const recursionError = (limit: number) => new GraphError(
  'GraphRecursionError',
  `Recursion limit of ${limit} reached without hitting a stop condition. You can increase the limit by setting the "recursion_limit" config key.`,
)

/**
 * The run, stopped at once (without a `done`) when its signal aborts. The waits its tasks ask for
 * (task-scheduler.ts) are waited here, on the run's clock, and nowhere else.
 */
export async function* runGraph(graph: Graph | undefined, request: RunRequest, graphs: ReadonlyMap<string, Graph>): AsyncGenerator<EngineOutput, void> {
  const { signal, clock } = request
  if (signal.aborted) return
  const inner = graph
    ? playGraph(graphs)(graph, request, null)
    : failRun(new GraphError('ValueError', `Graph '${request.graphId}' not found`), request.start?.values ?? {})
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

/** Runs a graph (the root, or a subgraph in `scope`) among `graphs`. */
function playGraph(graphs: ReadonlyMap<string, Graph>) {
  const play = (graph: Graph, request: RunRequest, scope: SubgraphScope | null): AsyncGenerator<TaskOutput, void> =>
    runSupersteps(new RunState(graph, request, graphs, scope, play))
  return play
}

/** Where the run starts, then its supersteps until the graph ends or stops. */
async function* runSupersteps(run: RunState): AsyncGenerator<TaskOutput, void> {
  const { input, command, interruptBefore } = run.request
  const isCommand = command != null && (command.resume !== undefined || command.update !== undefined || command.goto !== undefined)
  yield* emit(run.modes.graphStart(isCommand ? command : input))
  let plan: StepEnd
  try {
    plan = yield* startOf(run, isCommand)
  } catch (error) {
    if (!(error instanceof GraphError)) throw error
    return yield* failRun(error, run.state)
  }
  for (let first = true; plan !== 'end'; first = false) {
    if (plan === 'stopped') return
    // A thread stopped at a breakpoint before this step goes on past it.
    const passed = first && run.pausedAt?.breakpoint === true
    const stop = passed ? undefined : plan.tasks.find((t) => stopsAt(interruptBefore, t.node.name))
    if (stop) return yield* breakpoint(run, stop.node.name)
    if (run.steps >= run.recursionLimit) return yield* failRun(recursionError(run.recursionLimit), run.state)
    plan = yield* superstep(run, plan)
  }
  yield* emit(run.modes.graphEnd(run.state))
  yield { kind: 'done', status: 'success', values: run.state, pausedAt: null, error: null }
}
