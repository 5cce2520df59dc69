// The scripted-graph engine: the graphs of a fixtures directory, run on request (graph-run.ts) and
// updated by `POST /threads/{id}/state`. It owns graph semantics and the wire form of stream
// events; persistence and transport belong to the run manager (types.ts is the contract).

import { existsSync, statSync } from 'node:fs'
import { Clock } from '../clock.js'
import { FixtureError } from '../fixtures.js'
import { checkpointId, makeCheckpoint } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { graphInfo } from './graph-info.js'
import { runGraph } from './graph-run.js'
import { checkSubgraphs } from './graph-checks.js'
import { channelsOf, loadGraphs, type Graph } from './graphs.js'
import { routeFrom } from './conditions.js'
import { applyWrites, DEFAULT_CHANNELS, foldWrites, initialState, normalizeUpdate } from './state.js'
import { replayInfo } from './replay-info.js'
import type { ReplayFile } from './replay-file.js'
import { replayRun } from './replay-run.js'
import type { CheckpointRecord, GraphEngine, GraphInfo, RunRequest, State } from './types.js'

export { GraphError } from './graph-error.js'

export interface EngineOptions {
  /** The clock state updates take their checkpoint time from (runs use their request's clock). */
  clock?: Clock
  /** A directory of the user's own graphs, served next to those of `graphsDir` (one with the same id replaces it). */
  ownGraphs?: string
  /** Recorded graphs (`--replay`): served next to the others; one with a scripted graph's id replaces it. */
  replays?: ReplayFile[]
  /** How fast recorded time passes in a replay (1 as recorded, 0 instant). */
  replaySpeed?: number
  /** The scripted graph that answers inputs a recording has not seen (none: such a run fails). */
  replayFallback?: string
}

/** The graphs of `graphsDir`, then the user's own: one of theirs with a shipped graph's id takes its place. */
function graphsOf(graphsDir: string, ownGraphs: string | undefined): Graph[] {
  const shipped = loadGraphs(graphsDir)
  if (!ownGraphs) return shipped
  if (!existsSync(ownGraphs) || !statSync(ownGraphs).isDirectory()) throw new FixtureError(`${ownGraphs} is not a directory`, 'graphs')
  let own: Graph[]
  try {
    own = loadGraphs(ownGraphs)
  } catch (error) {
    if (error instanceof FixtureError) throw new FixtureError(error.message, 'graphs')
    throw error
  }
  const replaced = new Map(own.map((g) => [g.graph_id, g]))
  return [...shipped.map((g) => replaced.get(g.graph_id) ?? g), ...own.filter((g) => !shipped.some((s) => s.graph_id === g.graph_id))]
}

/**
 * Loads every graph of `graphsDir` (a FixtureError stops start-up when one is invalid) and answers
 * for them.
 */
export function createEngine(graphsDir: string, options: EngineOptions = {}): GraphEngine {
  const replays = new Map((options.replays ?? []).map((r) => [r.graph_id, r]))
  const graphs = graphsOf(graphsDir, options.ownGraphs).filter((g) => !replays.has(g.graph_id))
  checkSubgraphs(graphs)
  const byId = new Map(graphs.map((g) => [g.graph_id, g]))
  const order = [...graphs.map((g) => g.graph_id), ...replays.keys()]
  const known = new Set(order)
  // Each graph's description (its drawings, schemas, subgraphs) is made when first asked for: an app
  // that never reads a graph's does not pay for it.
  const infos = new Map<string, GraphInfo>()
  const infoOf = (graphId: string): GraphInfo | undefined => {
    if (!known.has(graphId)) return undefined
    let info = infos.get(graphId)
    if (info === undefined) {
      const replay = replays.get(graphId)
      info = replay ? replayInfo(replay) : graphInfo(byId.get(graphId)!, byId)
      infos.set(graphId, info)
    }
    return info
  }
  const clock = options.clock ?? Clock.system()
  const { replayFallback } = options
  if (replayFallback !== undefined && !byId.has(replayFallback)) {
    throw new FixtureError(`no scripted graph is called '${replayFallback}' (there are ${[...byId.keys()].join(', ')})`, 'replayFallback')
  }
  const fallback = replayFallback === undefined ? undefined : (request: RunRequest) => runGraph(byId.get(replayFallback), { ...request, graphId: replayFallback }, byId)
  return {
    graphs: (): GraphInfo[] => order.map((id) => structuredClone(infoOf(id)!)),
    graphIds: () => [...order],
    has: (graphId) => known.has(graphId),
    info: (graphId) => {
      const info = infoOf(graphId)
      return info && structuredClone(info)
    },
    run: (request) => {
      const replay = replays.get(request.graphId)
      return replay ? replayRun(replay, request, { speed: options.replaySpeed ?? 1, fallback }) : runGraph(byId.get(request.graphId), request, byId)
    },
    updateState: (graphId, current, values, asNode) => {
      const id = checkpointId(current.step, clock.now(), current.checkpointId)
      return superstep(graphId === null ? undefined : byId.get(graphId), graphId, current, [{ values, asNode }], id)
    },
    applySuperstep: (graphId, current, updates) => {
      const id = checkpointId(current.step, clock.now(), current.checkpointId)
      return superstep(graphId === null ? undefined : byId.get(graphId), graphId, current, updates, id)
    },
  }
}

/**
 * One superstep of state updates (`POST /threads/{id}/state` is a superstep of one update; a
 * thread's `supersteps` are several): each update's `values` (an update, a list of updates, or
 * null) written as if its node `asNode` had returned them, all in one checkpoint whose `next` is
 * the nodes' successors (`__start__`: the first node; none given, or the last node: nothing).
 * `__input__` records an input instead, as a run's first step does: an `input` checkpoint with the
 * state unchanged and the input pending for `__start__`; it must be its superstep's only update.
 * Throws a GraphError for an unknown node or an update the reducers refuse.
 */
function superstep(
  graph: Graph | undefined,
  graphId: string | null,
  current: { values: State | null; checkpointId: string | null; step: number },
  updates: { values: unknown; asNode: string | null }[],
  checkpointId: string,
): CheckpointRecord {
  if (updates.length === 0) throw new GraphError('InvalidUpdateError', 'A superstep needs at least one update')
  const metadata = graphId === null ? {} : { graph_id: graphId }
  const base = { id: checkpointId, parentId: current.checkpointId, step: current.step, metadata }
  const input = updates.find((u) => u.asNode === '__input__')
  if (input) {
    if (updates.length > 1) throw new GraphError('InvalidUpdateError', 'An __input__ update must be the only update of its superstep')
    if (input.values == null) throw new GraphError('InvalidUpdateError', 'An __input__ update needs values: the input')
    // As on the real server: the state as it was (no channel defaults), the `__start__` task without a result.
    return makeCheckpoint({ ...base, source: 'input', values: structuredClone(current.values ?? {}), next: ['__start__'], writes: { __start__: input.values } })
  }
  const channels = graph ? channelsOf(graph) : DEFAULT_CHANNELS
  const names = graph?.nodes.map((n) => n.name) ?? []
  const fresh = current.values === null
  let state = current.values ? structuredClone(current.values) : graph ? initialState(channels) : {}
  const next = new Set<string>()
  const written: Record<string, Record<string, unknown>> = {}
  const writers: string[] = []
  for (const update of updates) {
    const { values } = update
    // On a thread that never ran, an update without a node is the start's, as on the real server (its `next` is the first node).
    const asNode = update.asNode ?? (fresh && graph ? '__start__' : null)
    if (asNode !== null && asNode !== '__start__' && asNode !== '__end__' && graph && !names.includes(asNode)) {
      throw new GraphError('InvalidUpdateError', `Node ${asNode} does not exist`)
    }
    if (asNode !== null && asNode !== '__end__') writers.push(asNode)
    const writer = asNode ?? names.at(-1) ?? '__start__'
    written[writer] ??= {}
    for (const update of Array.isArray(values) ? values : [values]) {
      const normalized = normalizeUpdate(channels, update)
      state = applyWrites(channels, state, normalized)
      foldWrites(channels, written[writer], normalized)
    }
  }
  // Each writer's successor, by its routes, from the state after the superstep.
  const situation = { state, configurable: {}, visits: 0 }
  for (const writer of writers) {
    if (writer === '__start__') graph?.entry.forEach((n) => next.add(n))
    else if (graph) {
      // A Send's tasks need their inputs, which a state update does not keep: only named nodes follow.
      const route = routeFrom(graph.nodes.find((n) => n.name === writer)!.routes, situation)
      route?.to.filter((n) => n !== '__end__').forEach((n) => next.add(n))
    }
  }
  const writes = Object.fromEntries(Object.entries(written).map(([node, w]) => [node, Object.keys(w).length > 0 ? w : null]))
  const order = (n: string) => names.indexOf(n)
  return makeCheckpoint({ ...base, source: 'update', values: state, next: [...next].sort((a, b) => order(a) - order(b)), writes })
}
