// The scenario language's constructs for parallel branches and subgraphs (issue 15) — `entry`, a
// `next` of several names, routes with a `to` list or a `send`, `{{input.<key>}}` templates, a node
// that runs a `subgraph` — each stop start-up with one line naming the file and the field when
// they are wrong, and load when they are right.

import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { createEngine } from '../src/agent/engine.js'
import { FixtureError } from '../src/fixtures.js'

const base = { graph_id: 'g', state: { messages: 'messages', topics: 'replace' } }
const other = (graph_id: string, nodes: object[]) => ({ graph_id, state: { messages: 'messages' }, nodes })

/** Start-up on a directory holding `graphs` (the first is g.json): the one line it stops with. */
function startUp(t: Test, graphs: object[]) {
  const dir = t.testdir(Object.fromEntries(graphs.map((g) => [`${(g as { graph_id: string }).graph_id}.json`, JSON.stringify(g)])))
  return { dir, start: () => createEngine(dir) }
}
function bad(t: Test, graphs: object[], file: string, message: string) {
  const { dir, start } = startUp(t, graphs)
  t.throws(start, new FixtureError(`fixture ${dir}/${file}: ${message}`), message)
}
const g = (more: object) => [{ ...base, ...more }]

t.test('entry: a node name or names, each a node, each once', async (t) => {
  bad(t, g({ entry: 'x', nodes: [{ name: 'a' }] }), 'g.json', "entry: 'x' is not a node (nodes: a)")
  bad(t, g({ entry: ['a', 'x'], nodes: [{ name: 'a' }] }), 'g.json', "entry[1]: 'x' is not a node (nodes: a)")
  bad(t, g({ entry: '__end__', nodes: [{ name: 'a' }] }), 'g.json', "entry: '__end__' is not a node (nodes: a)")
  bad(t, g({ entry: ['a', 'a'], nodes: [{ name: 'a' }] }), 'g.json', "entry[1]: 'a' is named twice")
  bad(t, g({ entry: [], nodes: [{ name: 'a' }] }), 'g.json', 'entry: List should have at least 1 item after validation, not 0')
  bad(t, g({ entry: 3, nodes: [{ name: 'a' }] }), 'g.json', 'entry: Input should be a valid string or a valid list')
  t.same(startUp(t, g({ entry: ['b', 'a'], nodes: [{ name: 'a', next: '__end__' }, { name: 'b' }] })).start().info('g')!.drawable.edges.slice(0, 2),
    [{ source: '__start__', target: 'b', conditional: false }, { source: '__start__', target: 'a', conditional: false }], 'a good entry loads')
})

t.test('next as several names: nodes (or __end__ alone), each once, not mixed with routes', async (t) => {
  bad(t, g({ nodes: [{ name: 'a', next: ['a', 'x'] }] }), 'g.json', "nodes[0].next[1]: 'x' is not a node (nodes: a; or __end__)")
  bad(t, g({ nodes: [{ name: 'a', next: ['a', '__end__'] }] }), 'g.json', 'nodes[0].next: __end__ cannot run beside other nodes')
  bad(t, g({ nodes: [{ name: 'a', next: ['a', 'a'] }] }), 'g.json', "nodes[0].next[1]: 'a' is named twice")
  bad(t, g({ nodes: [{ name: 'a', next: 5 }] }), 'g.json', 'nodes[0].next: Input should be a valid string or a valid list')
  const mixed = 'nodes[0].next: give next as node names or as routes ({"when": …, "to": …}), not both'
  bad(t, g({ nodes: [{ name: 'a', next: ['a', { to: 'a' }] }] }), 'g.json', mixed)
  bad(t, g({ nodes: [{ name: 'a', next: [{ to: 'a' }, 'a'] }] }), 'g.json', mixed)
})

t.test('a route\'s to list: nodes (or __end__ alone), each once, at least one', async (t) => {
  bad(t, g({ nodes: [{ name: 'a', next: [{ to: ['a', 'x'] }] }] }), 'g.json', "nodes[0].next[0].to[1]: 'x' is not a node (nodes: a; or __end__)")
  bad(t, g({ nodes: [{ name: 'a', next: [{ to: ['a', '__end__'] }] }] }), 'g.json', 'nodes[0].next[0].to: __end__ cannot run beside other nodes')
  bad(t, g({ nodes: [{ name: 'a', next: [{ to: ['a', 'a'] }] }] }), 'g.json', "nodes[0].next[0].to[1]: 'a' is named twice")
  bad(t, g({ nodes: [{ name: 'a', next: [{ to: [] }] }] }), 'g.json', 'nodes[0].next[0].to: List should have at least 1 item after validation, not 0')
  bad(t, g({ nodes: [{ name: 'a', next: [{ when: { configurable: 'x' } }] }] }), 'g.json', 'nodes[0].next[0]: a route gives exactly one of to, send')
})

t.test('send: a node (not __end__) and a list of inputs (objects, or a template standing for them), alone in its route', async (t) => {
  const send = (s: object) => g({ nodes: [{ name: 'a', next: [{ send: s }] }] })
  bad(t, send({ node: 'x', inputs: [] }), 'g.json', "nodes[0].next[0].send.node: 'x' is not a node (nodes: a)")
  bad(t, send({ node: '__end__', inputs: [] }), 'g.json', "nodes[0].next[0].send.node: '__end__' is not a node (nodes: a)")
  bad(t, send({ node: 'a' }), 'g.json', 'nodes[0].next[0].send.inputs: Field required')
  bad(t, send({ node: 'a', inputs: [], extra: 1 }), 'g.json', 'nodes[0].next[0].send.extra: Extra inputs are not permitted')
  const list = 'nodes[0].next[0].send.inputs: give a list of objects (one task each, with that input), or one template that stands for such a list (e.g. "{{state.topics}}")'
  for (const inputs of [5, 'cats', [1, 2], [{ topic: 'cats' }, 'dogs']]) bad(t, send({ node: 'a', inputs }), 'g.json', list)
  bad(t, send({ node: 'a', inputs: '{{state.nope}}' }), 'g.json',
    "nodes[0].next[0].send.inputs: unknown template '{{state.nope}}' (use {{last_human}}, {{last_tool}}, {{tool_results}}, {{state.<key>}}, {{context.<key>}} or {{input.<key>}})")
  bad(t, g({ nodes: [{ name: 'a', next: [{ to: 'a', send: { node: 'a', inputs: [] } }] }] }), 'g.json', 'nodes[0].next[0]: a route gives exactly one of to, send')
  for (const inputs of ['{{state.topics}}', [{ topic: 'cats' }, '{{state.topics}}']]) {
    t.ok(startUp(t, send({ node: 'a', inputs })).start().info('g'), `${JSON.stringify(inputs)} loads`)
  }
})

t.test('{{input.<key>}} reads what a Send gave the node; {{input}} alone names no key', async (t) => {
  bad(t, g({ nodes: [{ name: 'a', steps: [{ reply: { text: 'On {{input}}.' } }] }] }), 'g.json',
    "nodes[0].steps[0].reply.text: unknown template '{{input}}' (use {{last_human}}, {{last_tool}}, {{tool_results}}, {{state.<key>}}, {{context.<key>}} or {{input.<key>}})")
  bad(t, g({ nodes: [{ name: 'a', steps: [{ tools: { search: { content: '{{args}}' } } }] }] }), 'g.json',
    "nodes[0].steps[0].tools.search: unknown template '{{args}}' (use {{last_human}}, {{last_tool}}, {{tool_results}}, {{state.<key>}}, {{context.<key>}}, {{input.<key>}} or {{args.<key>}})")
  t.ok(startUp(t, g({ nodes: [{ name: 'a', steps: [{ reply: { text: 'Notes on {{input.topic}}.' } }, { update: { topics: '{{input.topic}}' } }] }] })).start().info('g'), '{{input.topic}} loads')
})

t.test('subgraph: a loaded graph other than its own, no cycle through subgraphs, no steps beside it', async (t) => {
  bad(t, g({ nodes: [{ name: 'a', subgraph: 'nope' }] }), 'g.json', "nodes[0].subgraph: 'nope' is not a graph (graphs: g)")
  bad(t, g({ nodes: [{ name: 'a', subgraph: 'g' }] }), 'g.json', 'nodes[0].subgraph: a graph cannot run itself as a subgraph')
  bad(t, [{ ...base, nodes: [{ name: 'a', subgraph: 'h', steps: [{ update: { topics: 1 } }] }] }, other('h', [{ name: 'b' }])], 'g.json',
    'nodes[0].subgraph: a node that runs a subgraph has no steps of its own (give the steps to the subgraph)')
  bad(t, [{ ...base, nodes: [{ name: 'a', subgraph: 'h' }] }, other('h', [{ name: 'b', subgraph: 'i' }]), other('i', [{ name: 'c' }, { name: 'd', subgraph: 'g' }])], 'i.json',
    "nodes[1].subgraph: 'g' runs itself through its subgraphs (g → h → i → g)")
  bad(t, g({ nodes: [{ name: 'a', subgraph: 3 }] }), 'g.json', 'nodes[0].subgraph: Input should be a valid string')
  t.ok(startUp(t, [{ ...base, nodes: [{ name: 'a', subgraph: 'h', next: '__end__' }] }, other('h', [{ name: 'b' }])]).start().info('g'), 'a good subgraph loads')
})

t.test('a node name may not contain ":" or "|", which separate the parts of a namespace', async (t) => {
  bad(t, g({ nodes: [{ name: 'a:b' }] }), 'g.json', "nodes[0].name: 'a:b' contains ':', which is reserved (node names may not contain ':' or '|')")
  bad(t, g({ nodes: [{ name: 'x' }, { name: 'a|b' }] }), 'g.json', "nodes[1].name: 'a|b' contains '|', which is reserved (node names may not contain ':' or '|')")
})

t.test('the examples of docs/graphs.md (a Send, a supervisor with subgraphs) load', async (t) => {
  const docs = readFileSync(new URL('../docs/graphs.md', import.meta.url), 'utf8')
  const example = (heading: string) => JSON.parse(/```json\n([\s\S]*?)```/.exec(docs.slice(docs.indexOf(heading)))![1])
  const send = example('### Parallel branches')
  t.same(startUp(t, [send]).start().info('fanout_send')!.drawable.edges.at(-1), { source: 'plan', target: 'research', conditional: true })
  const supervisor = example('### Subgraphs')
  const agents = ['researcher_agent', 'writer_agent'].map((id) => other(id, [{ name: 'work', steps: [{ reply: { text: 'ok' } }] }]))
  t.same(startUp(t, [supervisor, ...agents]).start().info('supervisor')!.subgraphs.map((s) => s.node), ['researcher', 'writer'])
})
