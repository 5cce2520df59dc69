// Tools that write state, as a LangGraph tool returning `Command(update=…)` does (deepagents'
// `write_todos` and `write_file`): a tools step's result may carry an `update`, templated with the
// call's arguments (keys too); the `merge` reducer merges such dicts key by key; the `calls_tool`
// condition routes on the name of a tool the last AI message calls.

import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, serveApp } from './helpers.js'

const planner = {
  graph_id: 'planner',
  state: { messages: 'messages', todos: 'replace', files: 'merge' },
  nodes: [
    {
      name: 'model',
      steps: [
        { when: { last_message: 'human' }, reply: { text: 'Planning.', tool_calls: [
          { name: 'write_todos', args: { todos: [{ content: 'Research {{last_human}}', status: 'in_progress' }] } },
          { name: 'write_file', args: { path: '/{{last_human}}', content: 'About {{last_human}}' } },
        ] } },
        { when: { last_message: 'tool' }, reply: { text: 'Done: {{tool_results}}' } },
      ],
      next: [{ when: { calls_tool: 'write_file' }, to: 'tools' }, { to: '__end__' }],
    },
    {
      name: 'tools',
      steps: [{ tools: {
        write_todos: { content: 'Updated the todos', update: { todos: '{{args.todos}}' } },
        write_file: { content: 'Wrote {{args.path}}', update: { files: { '{{args.path}}': '{{args.content}}' } } },
      } }],
      next: 'model',
    },
  ],
}

function graphsDir(graph: object) {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-tool-updates-'))
  writeFileSync(join(dir, 'graph.json'), JSON.stringify(graph))
  return dir
}

t.test('a tool writes state beside its ToolMessage; files merge key by key; calls_tool routes', async (t) => {
  const { base } = await serveApp(t, { graphs: graphsDir(planner) })
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = await client.threads.create()
  const updates: any[] = []
  for await (const part of client.runs.stream(thread.thread_id, 'planner', { input: { messages: [{ type: 'human', content: 'cats' }] }, streamMode: 'updates' })) {
    if (part.event === 'updates') updates.push(part.data)
  }
  t.same(updates.map((u) => Object.keys(u)[0]), ['model', 'tools', 'model'], 'calls_tool led to tools, then the reply without calls ended')
  t.same(updates[1].tools.todos, [{ content: 'Research cats', status: 'in_progress' }], "the tools node's update carries what the tool wrote")
  t.same(updates[1].tools.messages.map((m: any) => m.content), ['Updated the todos', 'Wrote /cats'])
  let state = await client.threads.getState<any>(thread.thread_id)
  t.same(state.values.files, { '/cats': 'About cats' }, 'the key is templated from the call')
  t.equal(state.values.messages.at(-1).content, 'Done: Updated the todos | Wrote /cats')

  await client.runs.wait(thread.thread_id, 'planner', { input: { messages: [{ type: 'human', content: 'dogs' }] } })
  state = await client.threads.getState<any>(thread.thread_id)
  t.same(state.values.files, { '/cats': 'About cats', '/dogs': 'About dogs' }, 'the merge reducer keeps the earlier file')
  t.same(state.values.todos, [{ content: 'Research dogs', status: 'in_progress' }], 'replace replaces')
})

t.test('a failing tool writes nothing; an update naming an undeclared key or an unknown template stops start-up with the field', async (t) => {
  const failing = structuredClone(planner) as any
  failing.nodes[1].steps[0].tools.write_file = { error: 'DiskFull', content: 'no space', update: { files: { x: 'y' } } }
  const { base } = await serveApp(t, { graphs: graphsDir(failing) })
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = await client.threads.create()
  await client.runs.wait(thread.thread_id, 'planner', { input: { messages: [{ type: 'human', content: 'owls' }] } })
  const state = await client.threads.getState<any>(thread.thread_id)
  t.same(state.values.files, {}, 'the tool that raised wrote no file (a merge key starts as {})')
  t.same(state.values.todos, [{ content: 'Research owls', status: 'in_progress' }], 'the other tool still wrote')

  const { createEngine } = await import('../src/agent/engine.js')
  const undeclared = structuredClone(planner) as any
  undeclared.nodes[1].steps[0].tools.write_todos.update = { plan: 'x' }
  t.throws(() => createEngine(graphsDir(undeclared)), { message: /nodes\[1\]\.steps\[0\]\.tools\.write_todos\.update\.plan: 'plan' is not a state key/ })
  const unknown = structuredClone(planner) as any
  unknown.nodes[1].steps[0].tools.write_file.update = { files: { '{{nope}}': 'x' } }
  t.throws(() => createEngine(graphsDir(unknown)), { message: /nodes\[1\]\.steps\[0\]\.tools\.write_file: unknown template '\{\{nope\}\}'/ })
  const noMessages = { ...structuredClone(planner), state: { todos: 'replace' }, nodes: [{ name: 'a', next: [{ when: { calls_tool: 'x' }, to: 'a' }, { to: '__end__' }] }] }
  t.throws(() => createEngine(graphsDir(noMessages)), { message: /nodes\[0\]\.next\[0\]\.when: tool_calls, calls_tool, tool_result_contains and last_message need the state key 'messages'/ })
})
