// A graph's public description, in the forms the real server answers with: the drawable graph
// (`GET /assistants/{id}/graph`, graph-drawing.ts), its JSON Schemas (`GET /assistants/{id}/schemas`)
// and its subgraphs (`GET /assistants/{id}/subgraphs[/{namespace}]`).

import { drawGraph, subgraphDepth } from './graph-drawing.js'
import type { Graph } from './graphs.js'
import type { GraphInfo, SubgraphInfo } from './types.js'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

/** What clients read about `graph`; `graphs` (by id) holds the graphs its subgraph nodes run. */
export function graphInfo(graph: Graph, graphs: ReadonlyMap<string, Graph>): GraphInfo {
  const depth = subgraphDepth(graph, graphs)
  return {
    graph_id: graph.graph_id,
    description: graph.description,
    drawable: drawGraph(graph, graphs, 0),
    xray: Array.from({ length: depth }, (_, i) => drawGraph(graph, graphs, i + 1)),
    schemas: schemas(graph),
    subgraphs: subgraphsOf(graph, graphs),
  }
}

/** The drawing with `xray` levels of subgraphs expanded: `true` every level, a number that many (0 or `false`: none). */
export function drawingAt(info: GraphInfo, xray: boolean | number): GraphInfo['drawable'] {
  const depth = xray === true ? Infinity : xray === false ? 0 : xray
  if (depth <= 0 || info.xray.length === 0) return info.drawable
  return info.xray[Math.min(depth, info.xray.length) - 1]
}

/**
 * `GET /assistants/{id}/subgraphs[/{namespace}]`: each subgraph node's graph schemas by namespace,
 * as LangGraph's `getSubgraphs(namespace, recurse)` lists them: the subgraph nodes in node order;
 * with `recurse`, each followed by its own subgraphs as `<node>|<inner node>`. A namespace selects
 * the one subgraph it names (a nested one only with `recurse`); one that names none gives `{}`.
 */
export function subgraphsAt(info: GraphInfo, namespace: string | undefined, recurse: boolean): Record<string, SubgraphInfo['schemas']> {
  const found: [string, SubgraphInfo][] = []
  const visit = (list: SubgraphInfo[], ns: string | undefined, prefix: string): boolean => {
    for (const entry of list) {
      if (ns !== undefined && ns !== entry.node && !ns.startsWith(`${entry.node}|`)) continue
      if (ns === entry.node) {
        found.push([prefix + entry.node, entry])
        return true
      }
      if (ns === undefined) found.push([prefix + entry.node, entry])
      if (recurse && visit(entry.subgraphs, ns?.slice(entry.node.length + 1), `${prefix}${entry.node}|`) && ns !== undefined) return true
    }
    return false
  }
  visit(info.subgraphs, namespace, '')
  return Object.fromEntries(found.map(([ns, entry]) => [ns, structuredClone(entry.schemas)]))
}

function subgraphsOf(graph: Graph, graphs: ReadonlyMap<string, Graph>): SubgraphInfo[] {
  return graph.nodes.filter((n) => n.subgraph !== undefined).map((node) => {
    const inner = graphs.get(node.subgraph!)!
    const own = schemas(inner)
    return {
      node: node.name,
      // The real server's runtime schema names (its ~88 KB message schemas are hangar's small ones).
      schemas: { state: own.state_schema, input: own.input_schema, output: own.output_schema, config: own.config_schema },
      subgraphs: subgraphsOf(inner, graphs),
    }
  })
}

function schemas(graph: Graph) {
  const properties = Object.fromEntries(
    Object.entries(graph.state).map(([key, reducer]) => [key, reducer === 'messages' ? { type: 'array', items: { type: 'object' } } : {}]),
  )
  const state = () => ({ $schema: DRAFT, type: 'object', properties: structuredClone(properties), additionalProperties: false })
  const configurable = [...new Set(graph.nodes.flatMap((n) => n.steps.flatMap((s) => s.fail?.when?.configurable ?? [])))]
  const config = () => ({
    $schema: DRAFT,
    type: 'object',
    properties: Object.fromEntries(configurable.map((key) => [key, {}])),
  })
  return {
    graph_id: graph.graph_id,
    input_schema: state(),
    output_schema: state(),
    state_schema: state(),
    config_schema: config(),
    context_schema: config(),
  }
}
