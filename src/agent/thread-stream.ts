// A thread's join stream (`GET /threads/{thread_id}/stream`): the runs of one thread, one after
// another in the order they were created, each read from its own event log (the very events
// `/threads/{tid}/runs/{rid}/stream` sends) and followed live; then the thread's next run, for as
// long as the reader stays.
//
// Event ids are `<run seq>-<position>`. A run's logged events keep their positions (0, 1, …: the
// ids its own stream sends). Once the run has ended, position n (the number of events it logged)
// is its `values` (mode `state_update`) and n + 1 its `run_done`. Run seqs grow with every run
// hangar creates, so an id says where the reader was whatever modes it asked for, and resuming
// after it misses nothing and repeats nothing.

import type { SseEvent } from '../sse/writer.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { Thread, ThreadRepository } from '../store/threads.js'
import type { RunExecutor } from './run-executor.js'

export type ThreadStreamMode = 'lifecycle' | 'run_modes' | 'state_update'

/** Where a reader starts: with the thread's runs in progress and those to come, from its first run, or after an event it had. */
export type ThreadStreamStart = { from: 'now' } | { from: 'beginning' } | { from: 'after'; seq: number; position: number }

/** Reads `Last-Event-ID` (validated by the route as absent, empty, `-` or `<seq>-<position>`). */
export function threadStreamStart(lastEventId: string | undefined): ThreadStreamStart {
  if (lastEventId === undefined || lastEventId === '') return { from: 'now' }
  if (lastEventId === '-') return { from: 'beginning' }
  const [seq, position] = lastEventId.split('-').map(Number)
  return { from: 'after', seq, position }
}

/** The modes asked for under either parameter name; `run_modes` when none. */
export function threadStreamModes(...lists: (readonly ThreadStreamMode[] | undefined)[]): ReadonlySet<ThreadStreamMode> {
  const modes = new Set(lists.flatMap((list) => list ?? []))
  return modes.size > 0 ? modes : new Set(['run_modes'])
}

export interface ThreadStreamSources {
  runs: RunRepository
  threads: ThreadRepository
  executor: RunExecutor
}

export interface ThreadStreamOptions {
  start: ThreadStreamStart
  modes: ReadonlySet<ThreadStreamMode>
  /** The reader left: stop at once. */
  signal: AbortSignal
  /** Stop waiting for further runs (hangar shuts down): the run being read is read to its end first. */
  closing: AbortSignal
}

/** A run to read, after the position the reader already has (-1: from its start). */
interface Resume {
  run: Run
  after: number
}

/** The thread's events, as the modes select them, until `signal` aborts (or `closing` does, between runs). */
export async function* threadEvents(sources: ThreadStreamSources, thread: Thread, options: ThreadStreamOptions): AsyncGenerator<SseEvent> {
  const { runs, threads } = sources
  const { signal, closing } = options
  let { next, afterSeq } = firstRun(runs, thread, options.start)
  while (!signal.aborted) {
    if (!next) {
      const run = runs.nextOnThread(thread.seq, afterSeq)
      if (run) next = { run, after: -1 }
      else if (closing.aborted || !threads.bySeq(thread.seq)) return
      else {
        await runCreated(sources.executor, thread, signal, closing)
        continue
      }
    }
    yield* runEvents(sources, thread, next, options)
    afterSeq = next.run.seq
    next = undefined
  }
}

/** Where reading starts: a run to resume (or none yet), and the seq after which the next run is looked for. */
function firstRun(runs: RunRepository, thread: Thread, start: ThreadStreamStart): { next: Resume | undefined; afterSeq: number } {
  if (start.from === 'beginning') return { next: undefined, afterSeq: 0 }
  if (start.from === 'after') {
    const run = runs.bySeq(start.seq)
    // An id of a run that is gone (rolled back, deleted) still says where the reader was.
    return run?.thread_seq === thread.seq ? { next: { run, after: start.position }, afterSeq: run.seq } : { next: undefined, afterSeq: start.seq }
  }
  // Without Last-Event-ID: a run in progress from its start (as its own join stream does), else the next one.
  const active = runs.active(thread.seq)[0]
  if (active) return { next: { run: active, after: -1 }, afterSeq: active.seq }
  return { next: undefined, afterSeq: runs.list(thread.seq, { limit: 1, offset: 0 })[0]?.seq ?? 0 }
}

/** One run's events after `after`, live until it ends; then its state and its end. */
async function* runEvents(sources: ThreadStreamSources, thread: Thread, { run, after }: Resume, options: ThreadStreamOptions): AsyncGenerator<SseEvent> {
  const { runs, threads, executor } = sources
  const { modes, signal } = options
  const ends = modes.has('run_modes') || modes.has('lifecycle')
  for await (const event of executor.events(run, after, signal)) {
    if (modes.has('run_modes') || (modes.has('lifecycle') && event.event === 'metadata')) yield { ...event, id: `${run.seq}-${event.id}` }
  }
  if (signal.aborted) return
  const ended = runs.bySeq(run.seq)
  // A rolled-back run is gone with its events, as if it had never run.
  if (!ended) return
  const count = runs.eventCount(ended)
  if (after < count && modes.has('state_update')) {
    const state = threads.history(thread).find((checkpoint) => checkpoint.run_id === run.run_id)
    if (state) yield { id: `${run.seq}-${count}`, event: 'values', data: state.values }
  }
  if (after < count + 1 && ends) yield { id: `${run.seq}-${count + 1}`, event: 'run_done', data: { run_id: run.run_id, status: ended.status } }
}

/** Waits for the thread's next run, or until the reader leaves or hangar shuts down. */
async function runCreated(executor: RunExecutor, thread: Thread, signal: AbortSignal, closing: AbortSignal): Promise<void> {
  const stop = new AbortController()
  const onStop = () => stop.abort()
  signal.addEventListener('abort', onStop)
  closing.addEventListener('abort', onStop)
  try {
    await executor.runCreated(thread, stop.signal)
  } finally {
    signal.removeEventListener('abort', onStop)
    closing.removeEventListener('abort', onStop)
  }
}
