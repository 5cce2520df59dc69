// Routes and loops in scripted graphs, as a client sees them through the official SDK: a node's
// `next` chooses where the run goes by a condition, a route may lead back (a loop), and a run that
// takes more steps than its `recursion_limit` fails with LangGraph's GraphRecursionError. The
// graph drawing shows the conditional edges. Bad routes stop start-up with one line.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, serveApp } from './helpers.js'
import { loadGraphs } from '../src/agent/graphs.js'
import { FixtureError } from '../src/fixtures.js'

const ROUTER = {
  graph_id: 'router',
  state: { messages: 'messages', topic: 'replace' },
  nodes: [
    { name: 'classify', steps: [], next: [
      { when: { human_matches: '\\bweather\\b|\\brain\\b' }, to: 'weather' },
      { when: { configurable: 'shout' }, to: 'shout' },
      { to: 'chat' },
    ] },
    { name: 'weather', steps: [{ update: { topic: 'weather' } }, { reply: { text: 'Sunny.' } }], next: '__end__' },
    { name: 'shout', steps: [{ reply: { text: 'HELLO' } }], next: '__end__' },
    { name: 'chat', steps: [{ reply: { text: 'Hi!' } }] },
  ],
}

const LOOP = {
  graph_id: 'loop',
  state: { ticks: 'append', done: 'replace' },
  nodes: [
    { name: 'tick', steps: [{ update: { ticks: ['tick'] } }], next: [{ when: { visits_at_least: 3 }, to: 'finish' }, { to: 'tick' }] },
    { name: 'finish', steps: [{ update: { done: true } }] },
  ],
}

const FOREVER = {
  graph_id: 'forever',
  state: { ticks: 'append' },
  nodes: [{ name: 'spin', steps: [{ update: { ticks: [1] } }], next: 'spin' }],
}

async function serveGraphs(t: Test, graphs: object[]) {
  const dir = t.testdir({ graphs: Object.fromEntries(graphs.map((g) => [`${(g as { graph_id: string }).graph_id}.json`, JSON.stringify(g)])) })
  const { base, api } = await serveApp(t, { fixtures: dir })
  return { api, client: new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } }) }
}

const say = (content: string) => ({ messages: [{ role: 'user', content }] })
type Chat = { messages: { type: string; content: string }[]; topic?: string }

t.test('a route chooses the next node by the last human text, then by a configurable; the default route catches the rest', async (t) => {
  const { client } = await serveGraphs(t, [ROUTER])
  const cases: [string, Record<string, unknown>, string][] = [
    ['will it rain tomorrow?', {}, 'Sunny.'],
    ['hello', { shout: true }, 'HELLO'],
    ['hello', {}, 'Hi!'],
  ]
  for (const [text, configurable, answer] of cases) {
    const thread = await client.threads.create()
    const values = await client.runs.wait(thread.thread_id, 'router', { input: say(text), config: { configurable } }) as Chat
    t.equal(values.messages.at(-1)!.content, answer, `${JSON.stringify(text)} ${JSON.stringify(configurable)} → ${answer}`)
    const history = await client.threads.getHistory(thread.thread_id, { limit: 10 })
    const afterClassify = history.find((s) => s.metadata?.step === 1)!
    t.same(afterClassify.next, [answer === 'Sunny.' ? 'weather' : answer === 'HELLO' ? 'shout' : 'chat'], 'the checkpoint after the router names the node it chose')
    t.equal(history.length, 4, 'input, input applied, the router, the answer')
  }
})

t.test('a route back to the node makes a loop; it ends when a counter condition holds', async (t) => {
  const { client } = await serveGraphs(t, [LOOP])
  const thread = await client.threads.create()
  const chunks: { event: string; data: Record<string, unknown> }[] = []
  for await (const chunk of client.runs.stream(thread.thread_id, 'loop', { input: {}, streamMode: 'updates' })) chunks.push(chunk as never)
  t.same(chunks.filter((c) => c.event === 'updates').map((c) => Object.keys(c.data)[0]), ['tick', 'tick', 'tick', 'finish'])
  const state = await client.threads.getState<{ ticks: string[]; done: boolean }>(thread.thread_id)
  t.same(state.values, { ticks: ['tick', 'tick', 'tick'], done: true })
  t.same((await client.threads.getHistory(thread.thread_id, { limit: 20 })).map((s) => s.next).slice(0, 5), [[], ['finish'], ['tick'], ['tick'], ['tick']])
})

t.test('a run past its recursion_limit fails with GraphRecursionError; the steps it took are kept', async (t) => {
  const { client, api } = await serveGraphs(t, [FOREVER])
  const thread = await client.threads.create()
  const message = 'Recursion limit of 4 reached without hitting a stop condition. You can increase the limit by setting the "recursion_limit" config key.'
  const answer = await api.post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'forever', input: {}, config: { recursion_limit: 4 } })
  t.same(answer.body, { __error__: { error: 'GraphRecursionError', message } })
  const state = await client.threads.getState<{ ticks: number[] }>(thread.thread_id)
  t.same(state.values.ticks, [1, 1, 1, 1], 'four steps ran')
  t.same(state.next, ['spin'], 'the fifth is still pending')
  t.equal((await client.threads.get(thread.thread_id)).status, 'error')
  // The default limit is LangGraph's, 25.
  const other = await client.threads.create()
  const fallback = await api.post(`/threads/${other.thread_id}/runs/wait`, { assistant_id: 'forever', input: {} })
  t.match(fallback.body.__error__.message, /^Recursion limit of 25 reached/)
})

t.test('the graph drawing shows a router\'s conditional edges and a loop\'s edge back', async (t) => {
  const { client } = await serveGraphs(t, [ROUTER, LOOP])
  const router = await client.assistants.getGraph('router')
  t.same(router.edges, [
    { source: '__start__', target: 'classify', conditional: false },
    { source: 'chat', target: '__end__', conditional: false },
    { source: 'shout', target: '__end__', conditional: false },
    { source: 'weather', target: '__end__', conditional: false },
    { source: 'classify', target: 'weather', conditional: true },
    { source: 'classify', target: 'shout', conditional: true },
    { source: 'classify', target: 'chat', conditional: true },
  ], 'plain edges first, sorted by source (as the real server sorts them: test/fixtures/subgraphs/graph.json), then the conditional ones')
  const loop = await client.assistants.getGraph('loop')
  t.same(loop.edges.filter((e) => e.source === 'tick'), [
    { source: 'tick', target: 'finish', conditional: true },
    { source: 'tick', target: 'tick', conditional: true },
  ])
})

t.test('a state update as a router node goes where its routes lead from the updated state', async (t) => {
  const { client } = await serveGraphs(t, [ROUTER])
  const thread = await client.threads.create({ graphId: 'router' })
  await client.threads.updateState(thread.thread_id, { values: say('any rain?'), asNode: 'classify' })
  t.same((await client.threads.getState(thread.thread_id)).next, ['weather'])
  const values = await client.runs.wait(thread.thread_id, 'router', { input: null }) as Chat
  t.equal(values.topic, 'weather')
})

t.test('bad routes, step conditions and tool steps stop loading with one line naming the file and the field', async (t) => {
  const bad = (graph: object, message: string) => {
    const dir = t.testdir({ 'g.json': JSON.stringify({ graph_id: 'g', state: { messages: 'messages', n: 'replace' }, ...graph }) })
    t.throws(() => loadGraphs(dir), new FixtureError(`fixture ${dir}/g.json: ${message}`), message)
  }
  bad({ nodes: [{ name: 'a', next: 'b' }] }, "nodes[0].next: 'b' is not a node (nodes: a; or __end__)")
  bad({ nodes: [{ name: 'a', next: [{ to: 'nowhere' }] }] }, "nodes[0].next[0].to: 'nowhere' is not a node (nodes: a; or __end__)")
  bad({ nodes: [{ name: 'a', next: [{ when: {}, to: 'a' }] }] }, 'nodes[0].next[0].when: name a condition: configurable, human_contains, human_matches, state, state_truthy, tool_calls, tool_result_contains, visits_at_least, last_message, calls_tool, all, not')
  bad({ nodes: [{ name: 'a', next: [{ when: { all: [{ not: { all: [] } }] }, to: 'a' }] }] }, 'nodes[0].next[0].when.all[0].not.all: Extra inputs are not permitted')
  bad({ nodes: [{ name: 'a', next: [{ when: { human_matches: '(' }, to: 'a' }] }] }, 'nodes[0].next[0].when.human_matches: not a regular expression: Invalid regular expression: /(/: Unterminated group')
  bad({ nodes: [{ name: 'a', next: [{ when: { state: { nope: 1 } }, to: 'a' }] }] }, "nodes[0].next[0].when.state.nope: 'nope' is not a state key (declared: messages, n)")
  bad({ nodes: [{ name: 'a', next: [] }] }, 'nodes[0].next: give at least one route (or leave next out: the next node in the list)')
  bad({ nodes: [{ name: 'a', next: [{ to: 'a', extra: 1 }] }] }, 'nodes[0].next[0].extra: Extra inputs are not permitted')
  bad({ nodes: [{ name: 'a', steps: [{ when: { state: { 'nope.deep': 1 } }, update: { n: 1 } }] }] }, "nodes[0].steps[0].when.state.nope.deep: 'nope' is not a state key (declared: messages, n)")
  bad({ nodes: [{ name: 'a', steps: [{ tools: { search: { content: '{{args}}' } } }] }] }, "nodes[0].steps[0].tools.search: unknown template '{{args}}' (use {{last_human}}, {{last_tool}}, {{tool_results}}, {{state.<key>}}, {{context.<key>}}, {{input.<key>}} or {{args.<key>}})")
  bad({ nodes: [{ name: 'a', steps: [{ tools: { search: { contents: 'x' } } }] }] }, 'nodes[0].steps[0].tools.search.contents: Extra inputs are not permitted')
  bad({ nodes: [{ name: 'a', steps: [{ reply: { tool_calls: [{ args: {} }] } }] }] }, 'nodes[0].steps[0].reply.tool_calls[0].name: Field required')
  bad({ state: { n: 'replace' }, nodes: [{ name: 'a', steps: [{ tools: {} }] }] }, "nodes[0].steps[0].tools: a tools step needs the state key 'messages' with the reducer 'messages'")
  bad({ state: { n: 'replace' }, nodes: [{ name: 'a', next: [{ when: { tool_calls: true }, to: 'a' }] }] },
    "nodes[0].next[0].when: tool_calls, calls_tool, tool_result_contains and last_message need the state key 'messages' with the reducer 'messages'")
})
