// The scripted-graph engine: the graphs of a fixtures directory, run on request (graph-run.ts) and
// updated by `POST /threads/{id}/state`. It owns graph semantics and the wire form of stream
// events; persistence and transport belong to the run manager (types.ts is the contract).

import { Clock } from '../clock.js'
import { checkpointId, makeCheckpoint } from './checkpoints.js'
import { GraphError } from './graph-error.js'
import { graphInfo } from './graph-info.js'
import { runGraph } from './graph-run.js'
import { channelsOf, loadGraphs, type Graph } from './graphs.js'
import { applyWrites, DEFAULT_CHANNELS, foldWrites, initialState, normalizeUpdate } from './state.js'
import type { CheckpointRecord, GraphEngine, GraphInfo, State } from './types.js'

export { GraphError } from './graph-error.js'

export interface EngineOptions {
  /** The clock state updates take their checkpoint time from (runs use their request's clock). */
  clock?: Clock
}

/**
 * Loads every graph of `graphsDir` (a FixtureError stops start-up when one is invalid) and answers
 * for them.
 */
export function createEngine(graphsDir: string, options: EngineOptions = {}): GraphEngine {
  const graphs = loadGraphs(graphsDir)
  const byId = new Map(graphs.map((g) => [g.graph_id, g]))
  const infos = new Map(graphs.map((g) => [g.graph_id, graphInfo(g)]))
  const clock = options.clock ?? Clock.system()
  return {
    graphs: (): GraphInfo[] => graphs.map((g) => structuredClone(infos.get(g.graph_id)!)),
    info: (graphId) => {
      const info = infos.get(graphId)
      return info && structuredClone(info)
    },
    run: (request) => runGraph(byId.get(request.graphId), request),
    updateState: (graphId, current, values, asNode) => {
      const id = checkpointId(current.step, clock.now(), current.checkpointId)
      return updateState(graphId === null ? undefined : byId.get(graphId), graphId, current, values, asNode, id)
    },
  }
}

/**
 * `POST /threads/{id}/state`: `values` (an update, a list of updates, or null) written as if
 * `asNode` had returned them, so `next` is that node's successor (`__start__`: the first node;
 * none given, or the last node: nothing). Throws a GraphError for an unknown node or an update the
 * reducers refuse.
 */
function updateState(
  graph: Graph | undefined,
  graphId: string | null,
  current: { values: State | null; checkpointId: string | null; step: number },
  values: unknown,
  asNode: string | null,
  checkpointId: string,
): CheckpointRecord {
  const channels = graph ? channelsOf(graph) : DEFAULT_CHANNELS
  const names = graph?.nodes.map((n) => n.name) ?? []
  let next: string[] = []
  if (asNode === '__start__') next = names.slice(0, 1)
  else if (asNode !== null && asNode !== '__end__' && graph) {
    const index = names.indexOf(asNode)
    if (index < 0) throw new GraphError('InvalidUpdateError', `Node ${asNode} does not exist`)
    next = names.slice(index + 1, index + 2)
  }
  let state = current.values ? structuredClone(current.values) : graph ? initialState(channels) : {}
  const writes: Record<string, unknown> = {}
  for (const update of Array.isArray(values) ? values : [values]) {
    const normalized = normalizeUpdate(channels, update)
    state = applyWrites(channels, state, normalized)
    foldWrites(channels, writes, normalized)
  }
  const writer = asNode ?? names.at(-1) ?? '__start__'
  return makeCheckpoint({
    id: checkpointId,
    parentId: current.checkpointId,
    source: 'update',
    step: current.step,
    values: state,
    next,
    writes: { [writer]: Object.keys(writes).length > 0 ? writes : null },
    metadata: graphId === null ? {} : { graph_id: graphId },
  })
}
