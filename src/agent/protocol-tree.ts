// `agent.getTree`: the graph of a run and the subgraphs and tasks it went through, read from the
// lifecycle events the run logged — one node per namespace, nested by namespace prefix.

import type { ThreadEventRow } from '../store/thread-events.js'

export interface TreeNode {
  namespace: string[]
  status: string
  graph_name: string
  children?: TreeNode[]
}

/** A lifecycle event's word as a status: a namespace that has `started` is `running` until it ends. */
const STATUS: Readonly<Record<string, string>> = { running: 'running', started: 'running', completed: 'completed', interrupted: 'interrupted', failed: 'failed' }

export function eventTree(rows: readonly ThreadEventRow[]): TreeNode {
  const nodes = new Map<string, TreeNode>()
  const order: string[] = []
  for (const row of rows) {
    if (row.method !== 'lifecycle') continue
    const data = JSON.parse(row.data) as { event: string; graph_name: string }
    const key = row.namespace
    const known = nodes.get(key)
    if (known) known.status = STATUS[data.event] ?? known.status
    else {
      nodes.set(key, { namespace: JSON.parse(key) as string[], status: STATUS[data.event] ?? data.event, graph_name: data.graph_name })
      order.push(key)
    }
  }
  const root = nodes.get('[]') ?? { namespace: [], status: 'running', graph_name: '' }
  for (const key of order) {
    const node = nodes.get(key)!
    if (node === root) continue
    const parent = nodes.get(JSON.stringify(node.namespace.slice(0, -1))) ?? root
    ;(parent.children ??= []).push(node)
  }
  return withChildren(root)
}

/** The real server lists `children` on the root always, and on a nested node only when it has some. */
function withChildren(root: TreeNode): TreeNode {
  return { ...root, children: root.children ?? [] }
}
