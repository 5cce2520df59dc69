// A graph's public description: the drawable graph (`GET /assistants/{id}/graph`) and its JSON
// Schemas (`GET /assistants/{id}/schemas`), in the forms the real server answers with.

import type { Graph } from './graphs.js'
import type { GraphInfo } from './types.js'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

export function graphInfo(graph: Graph): GraphInfo {
  return { graph_id: graph.graph_id, description: graph.description, drawable: drawable(graph), schemas: schemas(graph) }
}

function drawable(graph: Graph): GraphInfo['drawable'] {
  return {
    nodes: [
      { id: '__start__', type: 'schema', data: { $schema: DRAFT } },
      ...graph.nodes.map((node) => {
        // A node with a tools step draws as LangGraph's prebuilt ToolNode does, naming its tools.
        const tools = [...new Set(node.steps.flatMap((step) => Object.keys(step.tools ?? {}).filter((name) => name !== '*')))]
        return tools.length > 0 || node.steps.some((step) => step.tools)
          ? { id: node.name, type: 'runnable', data: { id: ['langgraph', 'ToolNode'], name: 'func' }, metadata: { __tools: tools } }
          : { id: node.name, type: 'runnable', data: { id: ['langgraph', 'RunnableCallable'], name: node.name }, metadata: {} }
      }),
      { id: '__end__', type: 'schema', data: { $schema: DRAFT } },
    ],
    // Plain edges first, then each router's conditional edges, as LangGraph draws them.
    edges: [
      ...graph.entry.map((target) => ({ source: '__start__', target, conditional: false })),
      ...edgesOf(graph, false),
      ...edgesOf(graph, true),
    ],
  }
}

/** The edges the nodes' routes draw: a node's one plain edge, or (`conditional`) an edge to each place its routes lead. */
function edgesOf(graph: Graph, conditional: boolean) {
  return graph.nodes.flatMap((node) => {
    const routed = node.routes.length > 1 || node.routes.some((r) => r.when !== undefined || r.send !== undefined)
    if (routed !== conditional) return []
    const targets = node.routes.flatMap((r) => (r.send ? [r.send.node] : r.to))
    return [...new Set(targets)].map((target) => ({ source: node.name, target, conditional }))
  })
}

function schemas(graph: Graph): Record<string, unknown> {
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
