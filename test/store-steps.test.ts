// Scripted graphs read and write the store (issue 17): a `store_put` step writes an item to the
// store of the agent server the run is on, a `store_search` step puts the items it finds into the
// state. The shipped `memory_agent` remembers what it is told and recalls it on another thread;
// the official SDK reads the same memories from the store; each agent server has its own.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { parseGraph } from '../src/agent/graphs.js'
import { API_KEY, serveApp } from './helpers.js'

const say = async (client: Client, thread: string, text: string) => {
  const values = await client.runs.wait(thread, 'memory_agent', { input: { messages: [{ role: 'human', content: text }] } }) as { messages: { content: string }[]; memories?: { key: string; score?: number }[] }
  return { reply: values.messages.at(-1)!.content, memories: values.memories }
}

t.test('memory_agent remembers on one thread and recalls on another; the SDK reads the memories from the store', async (t) => {
  const { base } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } })
  const first = (await client.threads.create()).thread_id
  t.equal((await say(client, first, 'what is my favourite colour?')).reply, 'I have no memories yet.', 'nothing stored yet')
  t.equal((await say(client, first, 'remember my favourite colour is green')).reply, 'I will remember that.')
  t.equal((await say(client, first, 'remember the cat is called Tom')).reply, 'I will remember that.')

  const stored = await client.store.searchItems(['memories'])
  t.same(stored.items.map((item) => item.value).sort((a, b) => String(a.text).localeCompare(String(b.text))), [
    { text: 'remember my favourite colour is green' },
    { text: 'remember the cat is called Tom' },
  ], 'the graph wrote each memory to the store, where the SDK reads it')

  const other = (await client.threads.create()).thread_id
  const recalled = await say(client, other, 'what is my favourite colour?')
  t.equal(recalled.reply, 'The closest memory I have: remember my favourite colour is green', 'another thread recalls it: the best match of the question\'s words')
  t.same(recalled.memories!.map((m) => m.key), ['remember my favourite colour is green', 'remember the cat is called Tom'], 'the search results are in the state, best first')
  t.ok(recalled.memories![0].score! > recalled.memories![1].score!, 'with their scores')
  const cat = await say(client, other, 'what is the cat called?')
  t.equal(cat.reply, 'The closest memory I have: remember the cat is called Tom')
})

t.test("each agent server has its own memories: a new hangar's store starts empty", async (t) => {
  const { base } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } })
  t.equal((await say(client, (await client.threads.create()).thread_id, 'what is my favourite colour?')).reply, 'I have no memories yet.')
})

t.test('a store step is checked at start-up: search results go to a declared state key; templates name what exists', async (t) => {
  const graph = (step: object) => JSON.stringify({ graph_id: 'g', state: { messages: 'messages' }, nodes: [{ name: 'n', steps: [step] }] })
  t.throws(() => parseGraph('g.json', graph({ store_search: { namespace_prefix: ['m'], into: 'found' } })), { message: /^fixture g\.json: nodes\[0\]\.steps\[0\]\.store_search\.into: 'found' is not a state key/ })
  t.throws(() => parseGraph('g.json', graph({ store_put: { namespace: ['m'], key: '{{state.nope}}', value: {} } })), { message: "fixture g.json: nodes[0].steps[0].store_put: unknown template '{{state.nope}}' (use {{last_human}}, {{last_tool}}, {{tool_results}}, {{state.<key>}}, {{context.<key>}} or {{input.<key>}})" })
  t.throws(() => parseGraph('g.json', graph({ store_put: { namespace: [], key: 'k', value: {} } })), { message: /^fixture g\.json: nodes\[0\]\.steps\[0\]\.store_put\.namespace: / })
})

t.test('a namespace the store refuses fails the run with the reason, never a 5xx', async (t) => {
  const dir = t.testdir({ 'bad.json': JSON.stringify({ graph_id: 'bad_memory', state: { messages: 'messages' }, nodes: [{ name: 'n', steps: [{ store_put: { namespace: ['a.b'], key: 'k', value: { x: 1 } } }] }] }) })
  const { base } = await serveApp(t, { graphs: dir })
  const client = new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } })
  const parts: { event: string; data: any }[] = []
  for await (const part of client.runs.stream((await client.threads.create()).thread_id, 'bad_memory', { input: { messages: [{ role: 'human', content: 'hi' }] } })) parts.push({ event: part.event, data: part.data })
  t.same(parts.at(-1), { event: 'error', data: { error: 'InvalidUpdateError', message: 'Namespace labels cannot be empty or contain periods. Received: a.b' } })
})
