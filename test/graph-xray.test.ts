// Subgraphs and parallel branches as the assistants endpoints describe them, through the official
// SDK: the drawing (`/graph`, `?xray`) and `/subgraphs[/{namespace}]` of hangar's graphs, compared
// with what the real JS server answered for the same graphs (test/fixtures/subgraphs/graph.json;
// server-graphs.mjs there shows the real graphs).

import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, serveApp } from './helpers.js'

interface Exchange { request: { path: string }; response: { status: number; body: string } }
const recorded: { graphs: Record<string, { exchanges: Exchange[] }> } = JSON.parse(
  readFileSync(new URL('./fixtures/subgraphs/graph.json', import.meta.url), 'utf8'),
)
/** The body the real server answered for `graph` at the path ending (after the assistant id) with `tail`. */
function answer(graph: string, tail: string): any {
  const exchange = recorded.graphs[graph].exchanges.find((e) => e.request.path.replace(/^\/assistants\/[^/]+/, '') === tail)
  if (!exchange) throw new Error(`no recorded ${tail} for ${graph}`)
  return JSON.parse(exchange.response.body)
}

// hangar's forms of the recorded graphs besides the shipped supervisor (server-graphs.mjs).
const messages = { messages: 'messages' }
const REVIEW_FLOW = {
  graph_id: 'review_flow_agent',
  state: { ...messages, answer: 'replace' },
  nodes: [
    { name: 'draft', steps: [{ reply: { text: 'Draft about {{last_human}}.' } }] },
    { name: 'review', steps: [{ interrupt: { value: { question: 'Publish the draft about {{last_human}}?' }, resume_key: 'answer' } }] },
  ],
}
const NESTED_INTERRUPT = {
  graph_id: 'nested_interrupt',
  state: messages,
  nodes: [{ name: 'review_flow', subgraph: 'review_flow_agent' }, { name: 'publish', steps: [{ update: { messages: [{ type: 'ai', content: 'Published.' }] } }] }],
}
const FANOUT = {
  graph_id: 'fanout',
  state: { ...messages, results: 'append' },
  entry: ['a', 'b'],
  nodes: [
    { name: 'a', steps: [{ reply: { text: 'Branch a looked at {{last_human}}.' } }], next: 'join' },
    { name: 'b', steps: [{ reply: { text: 'Branch b looked at {{last_human}}.' } }], next: 'join' },
    { name: 'join', steps: [{ update: { messages: [{ type: 'ai', content: 'Joined: {{state.results}}' }] } }] },
  ],
}
const FANOUT_SEND = {
  graph_id: 'fanout_send',
  state: { ...messages, results: 'append', topics: 'replace' },
  nodes: [
    { name: 'plan', steps: [{ update: { topics: [{ topic: 'cats' }, { topic: 'dogs' }] } }], next: [{ send: { node: 'research', inputs: '{{state.topics}}' } }] },
    { name: 'research', steps: [{ update: { results: ['researched {{input.topic}}'] } }] },
    { name: 'join', steps: [] },
  ],
}

async function serve(t: Test, graphs: object[]) {
  const dir = t.testdir(Object.fromEntries(graphs.map((g) => [`${(g as { graph_id: string }).graph_id}.json`, JSON.stringify(g)])))
  const { base, api } = await serveApp(t, { graphs: dir })
  return { api, client: new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } }) }
}

t.test('each recorded graph draws as the real server drew it, without and with xray (ids, data, edge order)', async (t) => {
  const { client } = await serve(t, [REVIEW_FLOW, NESTED_INTERRUPT, FANOUT, FANOUT_SEND])
  for (const graph of ['supervisor', 'nested_interrupt', 'fanout', 'fanout_send']) {
    t.same(await client.assistants.getGraph(graph), answer(graph, '/graph'), `${graph}: /graph`)
    t.same(await client.assistants.getGraph(graph, { xray: true }), answer(graph, '/graph?xray=true'), `${graph}: /graph?xray=true`)
  }
  t.same(await client.assistants.getGraph('supervisor', { xray: 1 }), answer('supervisor', '/graph?xray=1'), 'supervisor: xray=1')
})

t.test('xray expands a subgraph into <node>:<inner node>, rewires the edges through it, and leaves a one-node subgraph whole', async (t) => {
  const { client } = await serve(t, [])
  const drawing = await client.assistants.getGraph('supervisor', { xray: true })
  t.same(drawing.nodes.map((n) => n.id), ['__start__', 'researcher:search', 'researcher:summarize', 'writer', '__end__'])
  t.same(drawing.edges.map((e) => `${e.source} → ${e.target}`), [
    'researcher:search → researcher:summarize', '__start__ → researcher:search', 'researcher:summarize → writer', 'writer → __end__',
  ], 'the subgraph\'s own edges first, then the parent\'s, entering at search and leaving from summarize')
  t.same(drawing.nodes.find((n) => n.id === 'writer')!.data, { id: ['langgraph', 'pregel', 'CompiledStateGraph'], name: 'LangGraph' })
})

// Two levels (not recorded): top → middle (subgraph: first → inner (subgraph: x → y)) → done.
const INNER = { graph_id: 'inner_agent', state: { n: 'append' }, nodes: [{ name: 'x', steps: [{ update: { n: [1] } }] }, { name: 'y', steps: [] }] }
const MIDDLE = { graph_id: 'middle_agent', state: { n: 'append' }, nodes: [{ name: 'first', steps: [] }, { name: 'inner', subgraph: 'inner_agent' }] }
const TOP = { graph_id: 'top', state: { n: 'append' }, nodes: [{ name: 'middle', subgraph: 'middle_agent' }, { name: 'done', steps: [] }] }

t.test('xray=<depth> expands that many levels of subgraphs; true expands them all', async (t) => {
  const { client, api } = await serve(t, [INNER, MIDDLE, TOP])
  const ids = async (xray?: boolean | number) => (await client.assistants.getGraph('top', xray === undefined ? undefined : { xray })).nodes.map((n) => n.id)
  t.same(await ids(), ['__start__', 'middle', 'done', '__end__'])
  t.same(await ids(false), ['__start__', 'middle', 'done', '__end__'])
  t.same(await ids(1), ['__start__', 'middle:first', 'middle:inner', 'done', '__end__'])
  t.same(await ids(2), ['__start__', 'middle:first', 'middle:inner:x', 'middle:inner:y', 'done', '__end__'])
  t.same(await ids(5), await ids(2), 'deeper than the graph goes: every level')
  t.same(await ids(true), await ids(2))
  t.same((await api.get('/assistants/top/graph?xray=yes')).body, await client.assistants.getGraph('top', { xray: true }), 'yes, as the JS server reads it')
  t.same((await client.assistants.getGraph('top', { xray: 2 })).edges.map((e) => `${e.source} → ${e.target}`), [
    'middle:inner:x → middle:inner:y', 'middle:first → middle:inner:x', '__start__ → middle:first', 'done → __end__', 'middle:inner:y → done',
  ], 'the innermost edges first (drawn when the middle graph drew its node), then the middle\'s, then the top\'s')
})

t.test('a subgraph with several entry nodes keeps its __start__ and __end__ when expanded (LangGraph trims each only when one node takes its place)', async (t) => {
  const PAIR = { graph_id: 'pair_agent', state: { n: 'append' }, entry: ['p', 'q'], nodes: [{ name: 'p', steps: [], next: '__end__' }, { name: 'q', steps: [] }] }
  const HOLDER = { graph_id: 'holder', state: { n: 'append' }, nodes: [{ name: 'both', subgraph: 'pair_agent' }] }
  const { client } = await serve(t, [PAIR, HOLDER])
  const drawing = await client.assistants.getGraph('holder', { xray: true })
  t.same(drawing.nodes.map((n) => n.id), ['__start__', 'both:__start__', 'both:p', 'both:q', 'both:__end__', '__end__'])
  t.same(drawing.edges.map((e) => `${e.source} → ${e.target}`), [
    'both:__start__ → both:p', 'both:__start__ → both:q', 'both:p → both:__end__', 'both:q → both:__end__', '__start__ → both:__start__', 'both:__end__ → __end__',
  ])
})

t.test('/subgraphs names each subgraph node, as the real server does, with the schemas of the graph it runs', async (t) => {
  const { client } = await serve(t, [REVIEW_FLOW, NESTED_INTERRUPT, FANOUT, FANOUT_SEND])
  const shape = (body: Record<string, Record<string, unknown>>) => Object.fromEntries(Object.entries(body).map(([ns, schemas]) => [ns, Object.keys(schemas)]))
  const cases: [string, { namespace?: string; recurse?: boolean }, string][] = [
    ['supervisor', {}, '/subgraphs'],
    ['supervisor', { recurse: true }, '/subgraphs?recurse=true'],
    ['supervisor', { namespace: 'researcher' }, '/subgraphs/researcher'],
    ['supervisor', { namespace: 'writer' }, '/subgraphs/writer'],
    ['supervisor', { namespace: 'nope' }, '/subgraphs/nope'],
    ['nested_interrupt', {}, '/subgraphs'],
    ['nested_interrupt', { namespace: 'review_flow' }, '/subgraphs/review_flow'],
    ['fanout', {}, '/subgraphs'],
    ['fanout_send', { recurse: true }, '/subgraphs?recurse=true'],
  ]
  for (const [graph, options, tail] of cases) {
    t.same(shape(await client.assistants.getSubgraphs(graph, options) as never), shape(answer(graph, tail)), `${graph} ${tail}`)
  }
  // hangar's schemas are its own (the real server's describe LangChain's message classes, ~88 KB each).
  const researcher = (await client.assistants.getSubgraphs('supervisor', { namespace: 'researcher' })).researcher as unknown
  const own = await client.assistants.getSchemas('researcher_agent')
  t.same(researcher, { state: own.state_schema, input: own.input_schema, output: own.output_schema, config: own.config_schema })
  const review = (await client.assistants.getSubgraphs('nested_interrupt')).review_flow as unknown as { state: { properties: object } }
  t.same(Object.keys(review.state.properties), ['messages', 'answer'], 'the subgraph\'s state keys, not the parent\'s')
})

t.test('recurse lists nested subgraphs as parent|child; a nested namespace is found only with recurse', async (t) => {
  const { client } = await serve(t, [INNER, MIDDLE, TOP])
  const names = async (options: { namespace?: string; recurse?: boolean }) => Object.keys(await client.assistants.getSubgraphs('top', options))
  t.same(await names({}), ['middle'])
  t.same(await names({ recurse: true }), ['middle', 'middle|inner'])
  t.same(await names({ namespace: 'middle|inner' }), [])
  t.same(await names({ namespace: 'middle|inner', recurse: true }), ['middle|inner'])
  t.same(await names({ namespace: 'middle', recurse: true }), ['middle'])
  t.same(await names({ namespace: 'middle|nope', recurse: true }), [])
})

t.test('an unknown assistant is the 404 of the other assistant routes; a bad xray or recurse is a 422', async (t) => {
  const { api } = await serve(t, [])
  const missing = await api.get('/assistants/nope')
  t.equal(missing.status, 404)
  for (const path of ['/assistants/nope/graph', '/assistants/nope/graph?xray=true', '/assistants/nope/subgraphs', '/assistants/nope/subgraphs/researcher']) {
    const res = await api.get(path)
    t.same([res.status, res.body], [404, missing.body], path)
  }
  for (const path of ['/assistants/supervisor/graph?xray=banana', '/assistants/supervisor/graph?xray=-1', '/assistants/supervisor/subgraphs?recurse=maybe']) {
    const res = await api.get(path)
    t.equal(res.status, 422, path)
    t.match(res.body.detail[0], { loc: ['query', path.includes('xray') ? 'xray' : 'recurse'] }, path)
  }
})
