// Generative UI as LangGraph's push_ui_message writes it: a UI message `{type: "ui", id, name,
// props, metadata}` appended to the state key with the `ui` reducer and sent as a `custom` event;
// a known id replaces it (or merges its props), `remove-ui` drops it. The shipped `ui_agent`.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, serveApp } from './helpers.js'

t.test('ui_agent pushes, updates and removes UI messages: custom events as they happen, the ui key at the end', async (t) => {
  const { base } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = await client.threads.create()
  const custom: any[] = []
  let runId = ''
  for await (const part of client.runs.stream(thread.thread_id, 'ui_agent', { input: { messages: [{ type: 'human', content: 'Oslo' }] }, streamMode: ['custom'] })) {
    if (part.event === 'metadata') runId = (part.data as { run_id: string }).run_id
    if (part.event === 'custom') custom.push(part.data)
  }
  const state = await client.threads.getState<{ messages: { id: string; type: string }[]; ui: any[] }>(thread.thread_id)
  const reply = state.values.messages.at(-1)!
  const meta = { run_id: runId, tags: [], name: 'agent' }
  t.same(custom, [
    { type: 'ui', id: 'loading-Oslo', name: 'loading', props: { label: 'Looking up Oslo' }, metadata: meta },
    { type: 'ui', id: 'weather-Oslo', name: 'weather_card', props: { city: 'Oslo', temperature: 21, sky: 'sunny' }, metadata: { ...meta, id: reply.id } },
    { type: 'ui', id: 'weather-Oslo', name: 'weather_card', props: { forecast: ['sunny', 'cloudy', 'rain'] }, metadata: { merge: true, ...meta, id: reply.id } },
    { type: 'remove-ui', id: 'loading-Oslo' },
  ], 'each push and removal is a custom event, in order')
  t.same(state.values.ui, [
    { type: 'ui', id: 'weather-Oslo', name: 'weather_card', props: { city: 'Oslo', temperature: 21, sky: 'sunny', forecast: ['sunny', 'cloudy', 'rain'] }, metadata: { merge: true, ...meta, id: reply.id } },
  ], 'the ui key: the card with merged props, attached to the reply; the placeholder gone')
})

t.test('a ui step needs a state key with the ui reducer', async (t) => {
  const dir = t.testdir({ 'g.json': JSON.stringify({ graph_id: 'g', state: { messages: 'messages' }, nodes: [{ name: 'a', steps: [{ ui: { name: 'card' } }] }] }) })
  const { loadGraphs } = await import('../src/agent/graphs.js')
  t.throws(() => loadGraphs(dir), { message: `fixture ${dir}/g.json: nodes[0].steps[0].ui: a ui step needs a state key with the reducer 'ui' (e.g. "ui": "ui")` })
})
