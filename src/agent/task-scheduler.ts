// The tasks of one superstep run side by side on the run's clock, interleaved deterministically:
// a task does not wait on the clock itself, it yields `{kind: 'wait', ms}`; the scheduler keeps a
// time for each task (the superstep's start plus the waits it asked for), always resumes the task
// whose time comes first (ties: the one that has waited longest, in turn — at first the earlier
// task), and itself yields a wait only until that time. A wait of 0 lets the others due then go
// first; a `last` one lets them finish all they do at that time.
// Waits go up to whoever runs the run (graph-run.ts `runGraph`), which alone waits on the clock,
// so the tasks of a subgraph interleave with those beside the node that runs it.
// Two branches that stream a word every 10 ms therefore alternate a, b, a, b… on every run, on a
// manual clock as on the system one, however long the machine takes between words.

import type { EngineOutput } from './types.js'

/** A task asks to go on after `ms` of the run's clock (`last`: only once every other task due then has gone as far as it can). */
export interface Wait {
  kind: 'wait'
  ms: number
  last?: true
}

/** Turns of `last` waits come after every ordinary turn at the same time. */
const LAST = 2 ** 40

/** What a task yields: engine outputs, and waits. */
export type TaskOutput = EngineOutput | Wait

/** A task finished: its place in the list and what it returned. */
export interface Finished<R> {
  kind: 'finished'
  index: number
  value: R
}

interface Running<R> {
  steps: AsyncGenerator<TaskOutput, R>
  /** When the task goes on, on the run's clock. */
  at: number
  /** Its turn among tasks due at the same time (lower first). */
  turn: number
  done: boolean
}

/**
 * Runs `tasks` together: yields their outputs in clock order, the waits between them, and a
 * `finished` marker as each one returns. Closing the generator early (the caller stops at a
 * failure) closes every task still running.
 */
export async function* interleave<R>(tasks: AsyncGenerator<TaskOutput, R>[]): AsyncGenerator<TaskOutput | Finished<R>, void> {
  /** The time the tasks have reached, from their start. */
  let now = 0
  const running: Running<R>[] = tasks.map((steps, i) => ({ steps, at: 0, turn: i, done: false }))
  let turns = running.length
  const before = (a: Running<R>, b: Running<R>) => a.at < b.at || (a.at === b.at && a.turn < b.turn)
  try {
    for (;;) {
      const next = running.reduce<Running<R> | undefined>((first, task) => (task.done || (first && before(first, task)) ? first : task), undefined)
      if (next === undefined) return
      if (next.at > now) {
        yield { kind: 'wait', ms: next.at - now }
        now = next.at
      }
      // The task runs until it asks to wait or returns.
      for (;;) {
        const step = await next.steps.next()
        if (step.done) {
          next.done = true
          yield { kind: 'finished', index: running.indexOf(next), value: step.value }
          break
        }
        if (step.value.kind === 'wait') {
          next.at += step.value.ms
          next.turn = (step.value.last ? LAST : 0) + turns++
          break
        }
        yield step.value
      }
    }
  } finally {
    for (const task of running) if (!task.done) await task.steps.return(undefined as R)
  }
}
