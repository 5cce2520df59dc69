// One run of a recorded graph: the turn recorded for this input at this point of the thread, played
// back on hangar's clock — its stream events (for the modes the run asks for), its session-protocol
// events and its checkpoints, each at the time it came (scaled by the replay speed), with fresh ids
// (replay-ids.ts). An input the recording has not seen here ends the run with an error naming the
// closest one it has and how to record this one — or, when a fallback graph is set, runs that.

import { editDistance } from '../did-you-mean.js'
import { describeInput, sameInput, turnInput, type RecordedCheckpoint, type ReplayFile, type Turn, type TurnInput } from './replay-file.js'
import { aligned, replayedId, ReplayIds } from './replay-ids.js'
import type { CheckpointRecord, EngineOutput, Interrupt, PausedAt, RunRequest, State, ThreadTask } from './types.js'

export interface ReplayOptions {
  /** How fast recorded time passes: 1 as recorded, 4 four times faster, 0 no waiting at all. */
  speed: number
  /** What runs an input the recording has not seen (`--replay-fallback`), instead of failing. */
  fallback?: (request: RunRequest) => AsyncIterable<EngineOutput>
}

/** Events the run manager sends itself around a run's own. */
const MANAGED: ReadonlySet<string> = new Set(['metadata', 'feedback', 'end'])

/** The stream mode an event belongs to (`messages` is `messages-tuple`'s, `messages/partial` the `messages` mode's). */
function modeOf(event: string): string {
  const name = event.split('|')[0]
  if (name === 'messages') return 'messages-tuple'
  return name.startsWith('messages/') ? 'messages' : name
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The recorded checkpoint the run starts from: null for a new thread (or none), the one a replayed
 * run wrote (its metadata names that run; the id was derived from the recorded one and it), or
 * undefined for a checkpoint no replayed run wrote (a state update, another graph's run).
 */
function recordedStart(replay: ReplayFile, request: RunRequest): RecordedCheckpoint | null | undefined {
  const start = request.start
  if (!start) return null
  const writer = start.metadata.run_id
  if (typeof writer !== 'string') return undefined
  for (const turn of replay.turns) {
    const found = turn.checkpoints.find((c) => replayedId(c.checkpoint_id, writer) === start.checkpoint_id)
    if (found) return found
  }
  return undefined
}

/** The ids the run finds already given: the thread, run, assistant, the client's own, and those of the checkpoint it starts from. */
function givenIds(turn: Turn, request: RunRequest, from: RecordedCheckpoint | null): ReadonlyMap<string, string> {
  const pairs: [string | null, string][] = [
    [turn.thread_id, request.ids.thread_id],
    [turn.run_id, request.ids.run_id],
    [turn.assistant_id, request.ids.assistant_id],
  ]
  // The ids the client chose (its messages'), in what it sent then and now.
  pairs.push(...aligned(turn.sent, { input: request.input, command: request.command }))
  const start = request.start
  if (from && start) {
    pairs.push([from.checkpoint_id, start.checkpoint_id])
    const shape = (c: { values: unknown; tasks: unknown; metadata: unknown }) => [c.values, c.tasks, c.metadata]
    pairs.push(...aligned(shape(from), shape(start)))
  }
  return new Map(pairs.filter((p): p is [string, string] => p[0] !== null).map(([a, b]) => [a.toLowerCase(), b]))
}

export async function* replayRun(replay: ReplayFile, request: RunRequest, options: ReplayOptions): AsyncGenerator<EngineOutput, void> {
  const input = turnInput(request.input, request.command)
  const start = recordedStart(replay, request)
  const from = start === undefined ? undefined : start?.checkpoint_id ?? null
  const matching = from === undefined ? [] : replay.turns.filter((t) => t.from === from && sameInput(t.input, input))
  if (matching.length === 0) {
    if (options.fallback) return yield* options.fallback(request)
    return yield* fail(request, { error: 'ReplayMissError', message: missMessage(replay, request, input, from) })
  }
  const chosen = chooseTurn(matching, request)
  if (chosen === 'missing') {
    const recorded = matching.flatMap((t) => t.streams).map((s) => `[${s.stream_mode.join(', ')}]${s.subgraphs ? ' with subgraphs' : ''}`)
    return yield* fail(request, {
      error: 'ReplayMissError',
      message: `The recording of ${replay.graph_id} has ${describeInput(input)} streamed with stream_mode ${[...new Set(recorded)].join(' or ')}; this run asks for [${request.streamModes.join(', ')}]${request.subgraphs ? ' with subgraphs' : ''}. Record it again streaming those modes (${replay.recorded_from}).`,
    })
  }
  if (chosen === 'no protocol') {
    return yield* fail(request, {
      error: 'ReplayMissError',
      message: `The recording of ${replay.graph_id} has ${describeInput(input)} only as run streams; this run came through the session protocol (run.start, input.respond: useStream's current hook), whose events were not recorded for it. Record it through the session protocol (${replay.recorded_from}).`,
    })
  }
  const { turn, stream } = chosen
  const ids = new ReplayIds(request.ids.run_id, givenIds(turn, request, start ?? null))
  // Events of a mode the recorded stream asked for and this run does not are left out; the rest
  // (errors, and what the server sends unasked, such as `checkpoints` beside subgraphs) stay.
  const unwanted = new Set((stream?.stream_mode ?? []).filter((m) => !request.streamModes.includes(m)))
  const timeline: { at: number; order: number; output: EngineOutput }[] = []
  const add = (at: number, order: number, output: EngineOutput) => timeline.push({ at, order, output })
  const checkpoints = turn.checkpoints.map((c) => checkpointOf(c, ids))
  turn.checkpoints.forEach((c, i) => add(c.at_ms, 0, { kind: 'checkpoint', checkpoint: checkpoints[i] }))
  if (request.protocol) for (const e of turn.protocol) add(e.at_ms, 1, { kind: 'protocol', event: ids.map({ method: e.method, namespace: e.namespace, ...(e.node === undefined ? {} : { node: e.node }), data: e.data }) })
  let error: { error: string; message: string } | null = null
  for (const e of stream?.events ?? []) {
    if (MANAGED.has(e.event)) continue
    if (e.event === 'error') {
      error = errorOf(ids.map(e.data))
      add(e.at_ms, 2, { kind: 'emit', event: 'error', data: ids.map(e.data) })
    } else if (!unwanted.has(modeOf(e.event))) add(e.at_ms, 2, { kind: 'emit', event: ids.map(e.event), data: ids.map(e.data) })
  }
  timeline.sort((a, b) => a.at - b.at || a.order - b.order)

  const { clock, signal } = request
  const started = clock.now()
  for (const { at, output } of timeline) {
    if (options.speed > 0) await clock.until(started + at / options.speed, signal)
    if (signal.aborted) return
    yield output
  }
  const last = checkpoints.at(-1)
  if (turn.status === 'error' || error) {
    const reported = error ?? { error: 'Error', message: `The recorded run of ${describeInput(input)} failed` }
    if (!error) yield { kind: 'emit', event: 'error', data: reported }
    yield { kind: 'done', status: 'error', values: last?.values ?? request.start?.values ?? {}, pausedAt: null, error: reported }
    return
  }
  const pausedAt = last ? pausedAtOf(last) : null
  if (last && pausedAt) yield { kind: 'amend', checkpoint: last, pausedAt }
  const values = last?.values ?? (turn.output === undefined ? lastValues(stream?.events ?? [], ids) : ids.map(turn.output))
  yield { kind: 'done', status: 'success', values: isObject(values) ? values : {}, pausedAt, error: null }
}

type RecordedStream = Turn['streams'][number]

/**
 * Of the turns recorded for this input here (the same run made more than once: on new threads, by
 * a regenerate, streamed in other modes, waited for), the one that serves this run, and its
 * stream: a fork's turn for a fork; one streamed with every mode the run asks for (and subgraphs
 * as it asks); else one never streamed (a run waited for: the run's events were never seen);
 * for a run of the session protocol, which reads the protocol's events, one that has them.
 * `missing` when every turn was streamed, none with those modes; `no protocol` when a protocol
 * run finds no turn whose protocol events were recorded.
 */
function chooseTurn(matching: Turn[], request: RunRequest): { turn: Turn; stream: RecordedStream | null } | 'missing' | 'no protocol' {
  const forks = matching.filter((t) => t.fork === request.forked)
  const pool = forks.length > 0 ? forks : matching
  const modes = (s: RecordedStream) => new Set(s.stream_mode.length === 0 ? ['values'] : s.stream_mode)
  const overlap = (s: RecordedStream) => request.streamModes.filter((m) => modes(s).has(m)).length
  if (request.protocolRun) {
    const turn = pool.find((t) => t.protocol.length > 0)
    if (!turn) return 'no protocol'
    return { turn, stream: turn.streams.length === 0 ? null : turn.streams.reduce((a, b) => (overlap(b) > overlap(a) ? b : a)) }
  }
  for (const turn of pool) {
    const stream = turn.streams.find((s) => s.subgraphs === request.subgraphs && overlap(s) === request.streamModes.length)
    if (stream) return { turn, stream }
  }
  const unstreamed = pool.find((t) => t.streams.length === 0)
  return unstreamed ? { turn: unstreamed, stream: null } : 'missing'
}

function checkpointOf(c: RecordedCheckpoint, ids: ReplayIds): CheckpointRecord {
  const tasks = ids.map(c.tasks) as unknown as ThreadTask[]
  return {
    checkpoint_id: ids.id(c.checkpoint_id),
    parent_checkpoint_id: c.parent_checkpoint_id === null ? null : ids.id(c.parent_checkpoint_id),
    values: ids.map(c.values),
    next: c.next,
    metadata: ids.map(c.metadata),
    tasks,
    interrupts: Object.fromEntries(tasks.filter((t) => Array.isArray(t.interrupts) && t.interrupts.length > 0).map((t) => [t.id, t.interrupts])),
    checkpoint_ns: '',
  }
}

/** Where a checkpoint leaves the thread waiting: at its tasks' interrupts (none: it does not). */
function pausedAtOf(checkpoint: CheckpointRecord): PausedAt | null {
  const waiting = checkpoint.tasks.filter((t) => Array.isArray(t.interrupts) && t.interrupts.length > 0)
  if (waiting.length === 0) return null
  return { node: waiting[0].name, interrupts: waiting.flatMap((t) => t.interrupts as Interrupt[]) }
}

const errorOf = (data: unknown) => ({
  error: isObject(data) && typeof data.error === 'string' ? data.error : 'Error',
  message: isObject(data) && typeof data.message === 'string' ? data.message : JSON.stringify(data),
})

/** A run without checkpoints (no thread): its last `values` event is its output. */
function lastValues(events: Turn['streams'][number]['events'], ids: ReplayIds): unknown {
  const last = events.filter((e) => e.event === 'values').at(-1)
  return last ? ids.map(last.data) : {}
}

async function* fail(request: RunRequest, error: { error: string; message: string }): AsyncGenerator<EngineOutput, void> {
  yield { kind: 'emit', event: 'error', data: error }
  yield { kind: 'done', status: 'error', values: (request.start?.values ?? {}) as State, pausedAt: null, error }
}

/** What a miss says: what was asked, where, the closest input recorded there (or anywhere), how to record it. */
function missMessage(replay: ReplayFile, request: RunRequest, input: TurnInput, from: string | null | undefined): string {
  const where = from === null ? 'on a new thread'
    : from === undefined ? `from checkpoint ${request.start?.checkpoint_id}, which no recorded run wrote (a state update or another graph's run did)`
      : `after checkpoint ${request.start?.checkpoint_id}`
  const here = replay.turns.filter((t) => t.from === from)
  const candidates = here.length > 0 ? here : replay.turns
  const asked = describeInput(input)
  const closest = candidates.map((t) => describeInput(t.input)).reduce<{ text: string; distance: number } | null>((best, text) => {
    const distance = editDistance(asked, text)
    return best === null || distance < best.distance ? { text, distance } : best
  }, null)
  const hint = closest === null ? 'It has no runs at all.' : `The closest input recorded ${here.length > 0 ? 'there' : '(elsewhere)'} is ${closest.text}.`
  return `The recording of ${replay.graph_id} has no run for ${asked} ${where}. ${hint} To record it, run hangar record --upstream ${replay.recorded_from} --out <recording> and send it through; or start hangar with --replay-fallback <graph_id> to answer unrecorded inputs with a scripted graph.`
}
