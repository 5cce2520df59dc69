// A recording compiled into replay files (src/agent/replay-file.ts): each run a client made through
// the recorder — by a run stream, `/runs`, `/runs/wait`, or the session protocol's `run.start` and
// `input.respond` — becomes a turn of its graph, keyed on what it was given and on the checkpoint it
// started from, holding the events its streams carried, the session-protocol events the thread's
// log gave it, and the checkpoints it wrote (from the thread's history, read when recording stopped).
// Pure but for writing the files: the same recording always compiles to the same replay.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPLAY_DIR, REPLAY_FORMAT, turnInput, type RecordedCheckpoint, type ReplayFile, type Turn } from '../agent/replay-file.js'
import type { Command } from '../agent/types.js'
import type { CapturedEvent, CapturedExchange } from './capture.js'

/** What the upstream answered when recording stopped (finalize.ts). */
export interface UpstreamSnapshot {
  /** By the assistant id (or graph name) the clients used. */
  assistants: Record<string, { assistant_id: string; graph_id: string | null; graph: unknown; schemas: unknown }>
  /** Each thread's history, newest first, as `POST /threads/{id}/history` answers it. */
  threads: Record<string, unknown[]>
  problems?: string[]
}

/** A run a client created through the recorder. */
export interface RunCreation {
  exchange: CapturedExchange
  startedAt: number
  thread: string | null
  /** The assistant id (or graph name) it named; null for `input.respond` (the thread's). */
  assistant: string | null
  runId: string | null
  input: unknown
  command: Command | null
  /** The checkpoint a fork named. */
  fork: string | null
  streamMode: string[]
  subgraphs: boolean
  /** Its stream's events (null: it was not streamed). */
  events: CapturedEvent[] | null
  /** Started by the session protocol (`run.start`, `input.respond`). */
  protocol: boolean
  /** `/runs/wait`'s answer. */
  output?: unknown
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const pathOf = (exchange: CapturedExchange) => exchange.request.path.split('?')[0]
const ok = (exchange: CapturedExchange) => exchange.response.status < 300 && exchange.partial === undefined
const modes = (value: unknown) => (value === undefined || value === null ? ['values'] : [value].flat().map(String))

/** The runs the clients created, in the order they were asked for. */
export function runCreations(exchanges: CapturedExchange[]): RunCreation[] {
  const found: RunCreation[] = []
  for (const exchange of exchanges) {
    if (exchange.request.method !== 'POST' || !ok(exchange)) continue
    const path = pathOf(exchange)
    const body = isObject(exchange.request.body) ? exchange.request.body : {}
    const startedAt = Date.parse(exchange.started_at)
    const run = /^(?:\/threads\/([^/]+))?\/runs(\/stream|\/wait)?$/.exec(path)
    if (run) {
      const events = exchange.response.events ?? null
      const metadata = events?.find((e) => e.event === 'metadata')?.data
      const checkpoint = isObject(body.checkpoint) ? body.checkpoint.checkpoint_id : undefined
      const responseBody = exchange.response.body
      found.push({
        exchange,
        startedAt,
        thread: run[1] ?? null,
        assistant: typeof body.assistant_id === 'string' ? body.assistant_id : null,
        runId: isObject(metadata) && typeof metadata.run_id === 'string' ? metadata.run_id : run[2] === undefined && isObject(responseBody) && typeof responseBody.run_id === 'string' ? responseBody.run_id : null,
        input: body.input ?? null,
        command: isObject(body.command) ? body.command as Command : null,
        fork: typeof body.checkpoint_id === 'string' ? body.checkpoint_id : typeof checkpoint === 'string' ? checkpoint : null,
        streamMode: modes(body.stream_mode),
        subgraphs: body.stream_subgraphs === true,
        events,
        protocol: false,
        ...(run[2] === '/wait' ? { output: responseBody } : {}),
      })
      continue
    }
    const commands = /^\/threads\/([^/]+)\/commands$/.exec(path)
    const made = commands ? protocolRun(exchange, commands[1], body, exchange.response.body, startedAt) : null
    if (made) found.push(made)
  }
  // Commands sent on a WebSocket of the session protocol, each with the answer that has its id.
  for (const exchange of exchanges) {
    const socket = exchange.request.method === 'GET' ? /^\/threads\/([^/]+)\/stream\/events$/.exec(pathOf(exchange)) : null
    if (!socket || !exchange.response.frames) continue
    const frames = exchange.response.frames
    for (const sent of frames.filter((f) => f.from === 'client' && isObject(f.data))) {
      const command = sent.data as Record<string, unknown>
      const answer = frames.find((f) => f.from === 'server' && isObject(f.data) && f.data.id === command.id && f.data.type !== 'event')?.data
      const made = protocolRun(exchange, socket[1], command, answer, Date.parse(exchange.started_at) + sent.at_ms)
      if (made) found.push(made)
    }
  }
  return found.sort((a, b) => a.startedAt - b.startedAt)
}

/** A run the session protocol started (`run.start`, `input.respond`), from the command and its answer; null for any other command. */
function protocolRun(exchange: CapturedExchange, thread: string, body: Record<string, unknown>, answer: unknown, startedAt: number): RunCreation | null {
  if (!isObject(answer) || answer.type !== 'success') return null
  const params = isObject(body.params) ? body.params : {}
  const common = { exchange, startedAt, thread, fork: null, streamMode: [], subgraphs: false, events: null, protocol: true }
  if (body.method === 'run.start') {
    const result = isObject(answer.result) ? answer.result : {}
    return { ...common, assistant: typeof params.assistant_id === 'string' ? params.assistant_id : null, runId: typeof result.run_id === 'string' ? result.run_id : null, input: params.input ?? null, command: null }
  }
  if (body.method !== 'input.respond') return null
  const answers = Array.isArray(params.responses) ? params.responses.filter(isObject) : [params]
  const resume = Object.fromEntries(answers.map((a) => [String(a.interrupt_id), a.response]))
  const command: Command = { resume, ...(params.update !== undefined ? { update: params.update } : {}), ...(params.goto !== undefined ? { goto: params.goto } : {}) }
  return { ...common, assistant: null, runId: null, input: null, command }
}

/** A checkpoint of a history (ThreadState) as a replay file keeps it. */
function recordedCheckpoint(state: Record<string, unknown>, startedAt: number): RecordedCheckpoint {
  const ref = (value: unknown) => (isObject(value) && typeof value.checkpoint_id === 'string' ? value.checkpoint_id : null)
  const created = typeof state.created_at === 'string' ? Date.parse(state.created_at) : NaN
  return {
    checkpoint_id: ref(state.checkpoint) ?? String(state.checkpoint_id),
    parent_checkpoint_id: ref(state.parent_checkpoint),
    values: isObject(state.values) ? state.values : {},
    next: Array.isArray(state.next) ? state.next.map(String) : [],
    tasks: Array.isArray(state.tasks) ? state.tasks.filter(isObject) : [],
    metadata: isObject(state.metadata) ? state.metadata : {},
    at_ms: Number.isFinite(created) ? Math.max(0, created - startedAt) : 0,
  }
}

const runIdOf = (state: unknown) => (isObject(state) && isObject(state.metadata) && typeof state.metadata.run_id === 'string' ? state.metadata.run_id : null)
const waiting = (state: unknown) => isObject(state) && Array.isArray(state.tasks) && state.tasks.some((t) => isObject(t) && Array.isArray(t.interrupts) && t.interrupts.length > 0)

/** The session protocol's events of a thread, from every stream of it recorded, split by run (at each root `running`). */
function protocolByRun(exchanges: CapturedExchange[], thread: string): Turn['protocol'][] {
  const bySeq = new Map<number, { method: string; params: Record<string, unknown> }>()
  for (const exchange of exchanges) {
    if (pathOf(exchange) !== `/threads/${thread}/stream/events`) continue
    // Events come in an event stream, or (a WebSocket) as the server's frames.
    const sent = [...(exchange.response.events ?? []), ...(exchange.response.frames ?? []).filter((f) => f.from === 'server')]
    for (const event of sent) {
      const data = event.data
      if (isObject(data) && data.type === 'event' && typeof data.seq === 'number' && typeof data.method === 'string' && isObject(data.params)) bySeq.set(data.seq, { method: data.method, params: data.params })
    }
  }
  const runs: Turn['protocol'][] = []
  let started = 0
  for (const [, { method, params }] of [...bySeq].sort(([a], [b]) => a - b)) {
    const namespace = Array.isArray(params.namespace) ? params.namespace.map(String) : []
    const at = typeof params.timestamp === 'number' ? params.timestamp : 0
    if (method === 'lifecycle' && namespace.length === 0) {
      // The root lifecycle is the run manager's to send; its `running` opens the next run.
      if (isObject(params.data) && params.data.event === 'running') {
        runs.push([])
        started = at
      }
      continue
    }
    runs.at(-1)?.push({ method, namespace, ...(typeof params.node === 'string' ? { node: params.node } : {}), data: params.data, at_ms: Math.max(0, at - started) })
  }
  return runs
}

/** Streams of a run opened after it was created (`GET /threads/{id}/runs/{run_id}/stream`). */
const joinStreams = (exchanges: CapturedExchange[], thread: string, runId: string) =>
  exchanges.filter((e) => e.request.method === 'GET' && ok(e) && pathOf(e) === `/threads/${thread}/runs/${runId}/stream`)

/** Every graph's replay file: the runs made on it, as turns. */
export function compileTurns(exchanges: CapturedExchange[], snapshot: UpstreamSnapshot, manifest: { upstream: string; recorded_at: string }): ReplayFile[] {
  const creations = runCreations(exchanges)
  const turns = new Map<string, Turn[]>()
  const assistantOf = new Map<string, string>()
  const byThread = new Map<string | null, RunCreation[]>()
  for (const c of creations) byThread.set(c.thread, [...(byThread.get(c.thread) ?? []), c])
  for (const [thread, made] of byThread) {
    const history = thread === null ? [] : [...(snapshot.threads[thread] ?? [])].reverse()
    const runIds = [...new Set(history.map(runIdOf).filter((r): r is string => r !== null))]
    const claimed = new Set(made.map((c) => c.runId))
    const unclaimed = runIds.filter((r) => !claimed.has(r))
    const protocol = thread === null ? [] : protocolByRun(exchanges, thread)
    let head: string | null = null
    for (const [i, creation] of made.entries()) {
      const runId = creation.runId ?? (thread === null ? null : unclaimed.shift() ?? null)
      const assistant = creation.assistant ?? (thread === null ? null : assistantOf.get(thread) ?? null)
      if (thread !== null && assistant !== null) assistantOf.set(thread, assistant)
      const known = assistant === null ? undefined : snapshot.assistants[assistant]
      const graphId = known?.graph_id ?? null
      const states = history.filter((s) => runId !== null && runIdOf(s) === runId)
      const checkpoints = states.map((s) => recordedCheckpoint(s as Record<string, unknown>, creation.startedAt))
      const from = checkpoints[0]?.parent_checkpoint_id ?? creation.fork ?? head
      if (checkpoints.length > 0) head = checkpoints.at(-1)!.checkpoint_id
      if (graphId === null) continue
      const resumes = creation.protocol && creation.command === null && creation.input !== null && waiting(history.find((s) => isObject(s) && isObject(s.checkpoint) && s.checkpoint.checkpoint_id === from))
      const input = resumes ? { resume: creation.input } : turnInput(creation.input, creation.command)
      const streams: Turn['streams'] = []
      const streamOf = (events: CapturedEvent[]) => ({ stream_mode: creation.streamMode, subgraphs: creation.subgraphs, events: events.map((e) => ({ event: e.event, data: e.data, at_ms: e.at_ms })) })
      if (creation.events) streams.push(streamOf(creation.events))
      if (thread !== null && runId !== null) for (const join of joinStreams(exchanges, thread, runId)) streams.push(streamOf(join.response.events ?? []))
      const failed = streams.some((s) => s.events.some((e) => e.event === 'error')) || (isObject(creation.output) && '__error__' in creation.output)
      const turn: Turn = {
        input,
        sent: { input: creation.input, command: creation.command },
        from,
        fork: creation.fork !== null,
        thread_id: thread,
        run_id: runId,
        assistant_id: known?.assistant_id ?? null,
        status: failed ? 'error' : waiting(states.at(-1)) ? 'interrupted' : 'success',
        streams,
        protocol: protocol[i] ?? [],
        checkpoints,
        ...(creation.output !== undefined && thread === null ? { output: creation.output } : {}),
      }
      turns.set(graphId, [...(turns.get(graphId) ?? []), turn])
    }
  }
  return [...turns].sort(([a], [b]) => a.localeCompare(b)).map(([graphId, list]) => {
    const known = Object.values(snapshot.assistants).find((a) => a.graph_id === graphId)
    const graph = isObject(known?.graph) && Array.isArray(known.graph.nodes) && Array.isArray(known.graph.edges) ? known.graph as ReplayFile['graph'] : null
    return {
      format: REPLAY_FORMAT,
      graph_id: graphId,
      description: `Recorded from ${manifest.upstream} (${manifest.recorded_at}): ${list.length} run${list.length === 1 ? '' : 's'}`,
      recorded_from: manifest.upstream,
      recorded_at: manifest.recorded_at,
      graph,
      schemas: isObject(known?.schemas) ? known.schemas : null,
      turns: list,
      file: join(REPLAY_DIR, `${graphId}.json`),
    }
  })
}

/** Writes the replay files of a recording directory (the previous ones go). */
export function compileRecording(out: string, exchanges: CapturedExchange[], snapshot: UpstreamSnapshot, manifest: { upstream: string; recorded_at: string }): ReplayFile[] {
  const replays = compileTurns(exchanges, snapshot, manifest)
  rmSync(join(out, REPLAY_DIR), { recursive: true, force: true })
  mkdirSync(join(out, REPLAY_DIR), { recursive: true })
  for (const { file, ...replay } of replays) writeFileSync(join(out, file), `${JSON.stringify(replay, null, 2)}\n`)
  return replays
}
