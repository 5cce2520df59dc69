// The drawable graph of `GET /assistants/{id}/graph`, drawn as LangGraph JS 1.7 draws a compiled
// StateGraph (recorded on the real server: test/fixtures/subgraphs/graph.json,
// test/fixtures/tool-calls/graph.json). With `xray`, a node that runs a subgraph is replaced by the
// subgraph's own drawing, its nodes named `<node>:<inner node>`.

import type { Graph, GraphNode } from './graphs.js'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

export interface DrawingNode {
  id: string
  type: 'schema' | 'runnable'
  data: Record<string, unknown>
  metadata?: Record<string, unknown>
}
export interface DrawingEdge {
  source: string
  target: string
  conditional: boolean
}
export interface Drawing {
  nodes: DrawingNode[]
  edges: DrawingEdge[]
}

const schemaNode = (id: string): DrawingNode => ({ id, type: 'schema', data: { $schema: DRAFT } })

/** LangGraph quotes a node named `subgraph` (a Mermaid keyword) in its drawing. */
const display = (name: string) => (name === 'subgraph' ? `"${name}"` : name)

function nodeOf(node: GraphNode): DrawingNode {
  const id = display(node.name)
  if (node.subgraph !== undefined) return { id, type: 'runnable', data: { id: ['langgraph', 'pregel', 'CompiledStateGraph'], name: 'LangGraph' }, metadata: {} }
  // A node with a tools step draws as LangGraph's prebuilt ToolNode does, naming its tools.
  const tools = [...new Set(node.steps.flatMap((step) => Object.keys(step.tools ?? {}).filter((name) => name !== '*')))]
  return tools.length > 0 || node.steps.some((step) => step.tools)
    ? { id, type: 'runnable', data: { id: ['langgraph', 'ToolNode'], name: 'func' }, metadata: { __tools: tools } }
    : { id, type: 'runnable', data: { id: ['langgraph', 'RunnableCallable'], name: node.name }, metadata: {} }
}

/**
 * The edges as a LangGraph builder would hold them: plain edges (from `__start__` to the entry
 * nodes, then each node's unconditional `next`, in node order), then each routed node's
 * conditional edges to every place its routes lead.
 */
function edgesOf(graph: Graph): { plain: [string, string][]; conditional: [string, string][] } {
  const plain: [string, string][] = graph.entry.map((target) => ['__start__', target])
  const conditional: [string, string][] = []
  for (const node of graph.nodes) {
    const routed = node.routes.length > 1 || node.routes.some((r) => r.when !== undefined || r.send !== undefined)
    const targets = [...new Set(node.routes.flatMap((r) => (r.send ? [r.send.node] : r.to)))]
    for (const target of targets) (routed ? conditional : plain).push([node.name, target])
  }
  // LangGraph draws the plain edges sorted by their source (a stable sort: one source's edges stay
  // in the order they were added), the conditional ones after them in the order they were added.
  plain.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return { plain, conditional }
}

/** The one node no edge leads to (besides those of `exclude`), as LangGraph's `Graph.firstNode`; undefined when there is none or several. */
function firstNode(drawing: Drawing, exclude?: string): DrawingNode | undefined {
  const targets = new Set(drawing.edges.filter((e) => e.source !== exclude).map((e) => e.target))
  const found = drawing.nodes.filter((n) => n.id !== exclude && !targets.has(n.id))
  return found.length === 1 ? found[0] : undefined
}

/** The one node no edge leaves (besides those into `exclude`), as LangGraph's `Graph.lastNode`. */
function lastNode(drawing: Drawing, exclude?: string): DrawingNode | undefined {
  const sources = new Set(drawing.edges.filter((e) => e.target !== exclude).map((e) => e.source))
  const found = drawing.nodes.filter((n) => n.id !== exclude && !sources.has(n.id))
  return found.length === 1 ? found[0] : undefined
}

function remove(drawing: Drawing, id: string): void {
  drawing.nodes = drawing.nodes.filter((n) => n.id !== id)
  drawing.edges = drawing.edges.filter((e) => e.source !== id && e.target !== id)
}

/**
 * A subgraph's drawing without its `__start__` and `__end__`, each removed only when one node is
 * left in its place (as LangGraph's `trimFirstNode` / `trimLastNode`): a subgraph with several
 * entry nodes keeps its `__start__`.
 */
function trimmed(drawing: Drawing): Drawing {
  const first = firstNode(drawing)
  if (first && firstNode(drawing, first.id)) remove(drawing, first.id)
  const last = lastNode(drawing)
  if (last && lastNode(drawing, last.id)) remove(drawing, last.id)
  return drawing
}

/**
 * The drawing of `graph`; `xray` levels of subgraphs expanded (0: none, Infinity: all). A
 * subgraph whose drawing is one node once trimmed stays one node, as on the real server.
 */
export function drawGraph(graph: Graph, graphs: ReadonlyMap<string, Graph>, xray: number): Drawing {
  const nodes: DrawingNode[] = [schemaNode('__start__')]
  const edges: DrawingEdge[] = []
  // Where an edge leaving / entering each node of `graph` is drawn from / to (a subgraph drawn in
  // place: from its last node, to its first).
  const from = new Map<string, string>([['__start__', '__start__']])
  const into = new Map<string, string>()
  for (const node of graph.nodes) {
    const inner = xray > 0 && node.subgraph !== undefined ? trimmed(drawGraph(graphs.get(node.subgraph)!, graphs, xray - 1)) : undefined
    const first = inner && firstNode(inner)
    // (Without one first node the real server fails the request; hangar draws the node whole.)
    if (inner && inner.nodes.length > 1 && first) {
      const prefixed = (id: string) => `${display(node.name)}:${id}`
      nodes.push(...inner.nodes.map((n) => ({ ...n, id: prefixed(n.id) })))
      edges.push(...inner.edges.map((e) => ({ ...e, source: prefixed(e.source), target: prefixed(e.target) })))
      into.set(node.name, prefixed(first.id))
      // Without one last node, LangGraph draws no edge out of the subgraph.
      const last = lastNode(inner)
      if (last) from.set(node.name, prefixed(last.id))
    } else {
      nodes.push(nodeOf(node))
      from.set(node.name, display(node.name))
      into.set(node.name, display(node.name))
    }
  }
  into.set('__end__', '__end__')
  const { plain, conditional } = edgesOf(graph)
  const add = (source: string, target: string, isConditional: boolean) => {
    // `__end__` is drawn once an edge leads to it.
    if (target === '__end__' && !nodes.some((n) => n.id === '__end__')) nodes.push(schemaNode('__end__'))
    if (from.has(source)) edges.push({ source: from.get(source)!, target: into.get(target)!, conditional: isConditional })
  }
  plain.forEach(([source, target]) => add(source, target, false))
  conditional.forEach(([source, target]) => add(source, target, true))
  return { nodes, edges }
}

/** How deep the graph's subgraphs nest (0: it runs none). */
export function subgraphDepth(graph: Graph, graphs: ReadonlyMap<string, Graph>): number {
  const inner = graph.nodes.filter((n) => n.subgraph !== undefined).map((n) => subgraphDepth(graphs.get(n.subgraph!)!, graphs))
  return inner.length === 0 ? 0 : 1 + Math.max(...inner)
}
