// The shipped deep agent (fixtures/graphs/deep_agent.json and its research subagent,
// deep_research_agent.json) as a deep-agent UI reads it through the official SDK: the tool calls
// the model streams (write_todos, task, write_file), the todo list and the files in the state after
// each step, the subagent's events and checkpoints under its namespace `tools:<task id>`, the
// SDK's own subagent tracking (what useStream's `subagents` shows), the drawing, and a second turn.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { StreamOrchestrator } from '@langchain/langgraph-sdk/ui'
import { API_KEY, runClockUntil, serveApp } from './helpers.js'

const TOPIC = 'the history of coffee'
const REVISION = 'make it shorter'

type Status = 'pending' | 'in_progress' | 'completed'
const plan = (research: Status, write: Status, summarize: Status): Todo[] => [
  { content: `Research ${TOPIC}`, status: research },
  { content: 'Write the report to /report.md', status: write },
  { content: 'Summarize the findings for the user', status: summarize },
]
const revise = (status: Status): Todo[] => [{ content: `Revise /report.md as asked: ${REVISION}`, status }]
const REPORT = `# Report: ${TOPIC}\n\nThree sources cover ${TOPIC}: an encyclopedia entry, a recent survey and a news article.\n`
const REVISED = `# Report (revised)\n\nRevised as asked: ${REVISION}.\n`
const FINDINGS = `Research findings on ${TOPIC}: 3 sources on ${TOPIC}: an encyclopedia entry, a recent survey and a news article.`

type Wire = { event: string; data: any }
type Todo = { content: string; status: Status }
/** What a deep-agent UI reads of the state. */
type DeepState = { messages: any[]; todos?: Todo[]; files?: Record<string, string> }

/** hangar with its shipped graphs, the SDK, and a run streamed to its end while the clock moves along. */
async function serve(t: Test) {
  const served = await serveApp(t)
  const client = new Client<DeepState>({ apiUrl: served.base, apiKey: API_KEY })
  const thread = (await client.threads.create()).thread_id
  const run = async (text: string, streamMode: string[], streamSubgraphs = false, graph = 'deep_agent') => {
    const events: Wire[] = []
    let done = false
    const reading = (async () => {
      const input = { messages: [{ type: 'human', content: text }] }
      for await (const part of client.runs.stream(thread, graph, { input, streamMode: streamMode as any, streamSubgraphs })) events.push(part as Wire)
      done = true
    })()
    await runClockUntil(served.clock, () => done, `the ${graph} run ends`, { stepMs: 10 })
    await reading
    t.notOk(events.some((e) => e.event === 'error'), 'the run does not fail')
    return events
  }
  return { ...served, client, thread, run }
}

/** The tool calls of `messages-tuple` chunks a node streamed (in any namespace), pieced together as a chat UI does: name and parsed arguments, in order. */
function streamedCalls(events: Wire[], node: string): { name: string; id: string; args: unknown }[] {
  const calls = new Map<string, { name: string; id: string; args: string }>()
  for (const { event, data } of events) {
    if (event.split('|')[0] !== 'messages' || data[1].langgraph_node !== node) continue
    for (const chunk of data[0].tool_call_chunks ?? []) {
      const key = `${data[0].id}:${chunk.index}`
      const call = calls.get(key) ?? { name: '', id: '', args: '' }
      calls.set(key, { name: call.name || chunk.name || '', id: call.id || chunk.id || '', args: call.args + (chunk.args ?? '') })
    }
  }
  return [...calls.values()].map((c) => ({ name: c.name, id: c.id, args: JSON.parse(c.args) }))
}

/** The ToolMessages `messages-tuple` carried (whole), as `[name, tool_call_id, content]`. */
const toolMessages = (events: Wire[]) => events.filter((e) => e.event === 'messages' && e.data[0].type === 'tool').map((e) => [e.data[0].name, e.data[0].tool_call_id, e.data[0].content])

t.test('the model streams its tool calls in messages-tuple: write_todos with the plan, task for the subagent, write_file with the report', async (t) => {
  const { run } = await serve(t)
  const events = await run(TOPIC, ['messages-tuple'])
  const calls = streamedCalls(events, 'model')
  t.same(calls.map((c) => [c.name, c.args]), [
    ['write_todos', { todos: plan('in_progress', 'pending', 'pending') }],
    ['task', { description: TOPIC, subagent_type: 'research-agent' }],
    ['write_todos', { todos: plan('completed', 'in_progress', 'pending') }],
    ['write_file', { file_path: '/report.md', content: REPORT }],
    ['write_todos', { todos: plan('completed', 'completed', 'completed') }],
  ])
  t.equal(calls[1].id, 'call_research_task', 'the task call has the id its ToolMessage answers')
  t.same(toolMessages(events), [
    ['write_todos', calls[0].id, `Updated todo list to ${JSON.stringify(plan('in_progress', 'pending', 'pending'))}`],
    ['web_search', (events.find((e) => e.data[0]?.tool_calls?.[0]?.name === 'web_search')?.data[0].tool_calls[0].id), `3 sources on ${TOPIC}: an encyclopedia entry, a recent survey and a news article.`],
    ['task', 'call_research_task', FINDINGS],
    ['write_todos', calls[2].id, `Updated todo list to ${JSON.stringify(plan('completed', 'in_progress', 'pending'))}`],
    ['write_file', calls[3].id, 'Updated file /report.md'],
    ['write_todos', calls[4].id, `Updated todo list to ${JSON.stringify(plan('completed', 'completed', 'completed'))}`],
  ], 'each call is answered by its ToolMessage; the subagent\'s own search arrives whole without stream_subgraphs')
  const text = events.filter((e) => e.event === 'messages' && e.data[1].langgraph_node === 'model').map((e) => e.data[0].content).join('')
  t.match(text, /Done\. A research subagent looked into the history of coffee and I wrote the report to \/report\.md\./, 'it ends with a summary about what was asked')
})

t.test('the todos move from pending to in_progress to completed step by step, and files holds the report once write_file ran', async (t) => {
  const { client, thread, run } = await serve(t)
  await run(TOPIC, ['values'])
  const history = (await client.threads.getHistory(thread, { limit: 100 })).reverse()
  const steps = history.map((c) => ({ next: c.next, todos: c.values.todos?.map((x) => x.status) ?? null, files: Object.keys(c.values.files ?? {}) }))
  t.same(steps, [
    { next: ['__start__'], todos: null, files: [] },
    { next: ['model'], todos: null, files: [] },
    { next: ['builtin_tools'], todos: null, files: [] },
    { next: ['model'], todos: ['in_progress', 'pending', 'pending'], files: [] },
    { next: ['tools'], todos: ['in_progress', 'pending', 'pending'], files: [] },
    { next: ['builtin_tools'], todos: ['in_progress', 'pending', 'pending'], files: [] },
    { next: ['model'], todos: ['in_progress', 'pending', 'pending'], files: [] },
    { next: ['builtin_tools'], todos: ['in_progress', 'pending', 'pending'], files: [] },
    { next: ['model'], todos: ['completed', 'in_progress', 'pending'], files: [] },
    { next: ['builtin_tools'], todos: ['completed', 'in_progress', 'pending'], files: [] },
    { next: ['model'], todos: ['completed', 'in_progress', 'pending'], files: ['/report.md'] },
    { next: ['builtin_tools'], todos: ['completed', 'in_progress', 'pending'], files: ['/report.md'] },
    { next: ['model'], todos: ['completed', 'completed', 'completed'], files: ['/report.md'] },
    { next: [], todos: ['completed', 'completed', 'completed'], files: ['/report.md'] },
  ], 'one checkpoint per step, the todos following each write_todos answer')
  const state = await client.threads.getState(thread)
  t.same(state.values.files, { '/report.md': REPORT })
  t.same(state.values.todos, plan('completed', 'completed', 'completed'))
  const messages = state.values.messages
  t.same(messages.filter((m) => m.type === 'tool').map((m) => m.name), ['write_todos', 'web_search', 'task', 'write_todos', 'write_file', 'write_todos'])
  t.match(messages.at(-1), { type: 'ai', tool_calls: [] }, 'the last message is the summary, calling nothing')
})

t.test('with streamSubgraphs the subagent streams under tools:<task id>, and its checkpoints are in that namespace', async (t) => {
  const { client, thread, run } = await serve(t)
  const events = await run(TOPIC, ['updates', 'messages-tuple'], true)
  const namespaces = [...new Set(events.map((e) => e.event.split('|')[1]).filter(Boolean))]
  t.equal(namespaces.length, 1, 'one subagent namespace')
  const [ns] = namespaces
  const root = await client.threads.getHistory(thread, { limit: 100 })
  const before = root.find((c) => c.next.join() === 'tools')!
  t.equal(ns, `tools:${before.tasks[0].id}`, 'the namespace is the node and its task id')
  t.same((before.tasks[0] as any).path, ['__pregel_push', 0, false], 'the subagent runs as a Send, as an agent\'s tools node runs its calls')
  t.same(events.filter((e) => e.event === `updates|${ns}`).map((e) => Object.keys(e.data)), [['model'], ['tools'], ['model']], "the subagent's own ReAct loop")
  const inner = events.filter((e) => e.event === `messages|${ns}`)
  t.ok(inner.every((e) => e.data[1].langgraph_checkpoint_ns.startsWith(`${ns}|`)), 'their metadata names the subagent checkpoint namespace')
  t.equal(inner.filter((e) => e.data[0].type === 'AIMessageChunk').map((e) => e.data[0].content).join(''), `Searching for sources on ${TOPIC}.${FINDINGS}`, "the subagent's tokens")
  t.same(streamedCalls(inner, 'model').map((c) => [c.name, c.args]), [['web_search', { query: TOPIC }]])
  t.notOk(events.some((e) => e.event === 'messages' && e.data[1].langgraph_node === 'tools'), 'the subagent\'s messages are not repeated at the root')

  const sub = await client.threads.getHistory(thread, { limit: 100, checkpoint: { checkpoint_ns: ns } as any })
  t.same(sub.map((c) => c.next), [[], ['model'], ['tools'], ['model'], ['__start__']])
  t.same(sub.map((c) => c.checkpoint.checkpoint_ns), Array(5).fill(ns))
  const last = sub[0].values.messages
  t.same(last.slice(-3).map((m) => [m.type, m.content]), [
    ['ai', `Searching for sources on ${TOPIC}.`],
    ['tool', `3 sources on ${TOPIC}: an encyclopedia entry, a recent survey and a news article.`],
    ['ai', FINDINGS],
  ])
  t.same(Object.keys(sub[0].values as object), ['messages'], 'the subagent keeps only its messages: todos and files are the parent\'s')
})

t.test("the SDK's subagent tracking (useStream's subagents) finds the research subagent by its task call and sees it complete", async (t) => {
  const { client, clock } = await serve(t)
  const orchestrator = new StreamOrchestrator<DeepState>({ assistantId: 'deep_agent', filterSubagentMessages: true, fetchStateHistory: false }, {
    getClient: () => client as unknown as Client,
    getAssistantId: () => 'deep_agent',
    getMessagesKey: () => 'messages',
  })
  t.teardown(() => orchestrator.dispose())
  let done = false
  void orchestrator.submitDirect({ messages: [{ type: 'human', content: TOPIC }] }, { streamSubgraphs: true, streamMode: ['messages-tuple'] }).finally(() => (done = true))
  await runClockUntil(clock, () => done && !orchestrator.isLoading, 'the run ends', { stepMs: 10 })
  const subagents = [...orchestrator.subagents.values()]
  t.same(subagents.map((s) => ({ id: s.id, type: s.toolCall.args.subagent_type, description: s.toolCall.args.description, status: s.status, result: s.result })), [
    { id: 'call_research_task', type: 'research-agent', description: TOPIC, status: 'complete', result: FINDINGS },
  ])
  t.match(subagents[0].namespace[0], /^tools:[0-9a-f-]{36}$/, 'bound to its namespace')
  t.same(subagents[0].messages.map((m) => [m.type, m.content]), [
    ['ai', `Searching for sources on ${TOPIC}.`],
    ['tool', `3 sources on ${TOPIC}: an encyclopedia entry, a recent survey and a news article.`],
    ['ai', FINDINGS],
  ], 'its own streamed messages, kept apart')
})

t.test('the drawing shows the subagent as one node, and with xray its model and tools inside', async (t) => {
  const { client } = await serve(t)
  const plain = await client.assistants.getGraph('deep_agent')
  t.same(plain.nodes.map((n) => n.id), ['__start__', 'model', 'tools', 'builtin_tools', '__end__'])
  t.match(plain.nodes.find((n) => n.id === 'tools'), { type: 'runnable', data: { id: ['langgraph', 'pregel', 'CompiledStateGraph'] } }, 'tools is a subgraph')
  t.same(plain.nodes.find((n) => n.id === 'builtin_tools')!.metadata, { __tools: ['write_todos', 'write_file'] })
  t.same(plain.edges.filter((e) => e.source === 'model').map((e) => [e.target, e.conditional]), [['tools', true], ['builtin_tools', true], ['__end__', true]])
  const xray = await client.assistants.getGraph('deep_agent', { xray: true })
  t.same(xray.nodes.map((n) => n.id), ['__start__', 'model', 'tools:__start__', 'tools:model', 'tools:tools', 'tools:__end__', 'builtin_tools', '__end__'])
  t.ok(xray.edges.some((e) => e.source === 'model' && e.target === 'tools:__start__' && e.conditional), 'the task call leads into the subagent')
  t.ok(xray.edges.some((e) => e.source === 'tools:__end__' && e.target === 'builtin_tools'), 'and out of it to the tools that answer the call')
  t.same(Object.keys(await client.assistants.getSubgraphs('deep_agent')), ['tools'])
})

t.test('a second human message on the same thread revises the report: a new plan, the file rewritten, no second subagent', async (t) => {
  const { client, thread, run } = await serve(t)
  await run(TOPIC, ['values'])
  const turns = (await client.threads.getHistory(thread, { limit: 100 })).length
  const events = await run(REVISION, ['messages-tuple', 'values'], true)
  t.same(streamedCalls(events, 'model').map((c) => [c.name, c.args]), [
    ['write_todos', { todos: revise('in_progress') }],
    ['write_file', { file_path: '/report.md', content: REVISED }],
    ['write_todos', { todos: revise('completed') }],
  ])
  t.notOk(events.some((e) => e.event.includes('|tools:')), 'no subagent this time')
  const history = await client.threads.getHistory(thread, { limit: 100 })
  const second = history.slice(0, history.length - turns).reverse()
  t.same(second.map((c) => c.values.todos?.map((x) => x.status)), [
    ['completed', 'completed', 'completed'], ['completed', 'completed', 'completed'], ['completed', 'completed', 'completed'],
    ['in_progress'], ['in_progress'], ['in_progress'], ['in_progress'], ['completed'], ['completed'],
  ], "the second turn's todos replace the first's, then complete")
  const { values } = await client.threads.getState(thread)
  t.same(values.files, { '/report.md': REVISED }, 'files is replaced as a whole')
  const humans = values.messages.filter((m: any) => m.type === 'human').map((m: any) => m.content)
  t.same(humans, [TOPIC, REVISION], 'the conversation continues on the thread')
  t.equal(values.messages.at(-1).content, `I revised /report.md as you asked: ${REVISION}.`)
})

t.test('the research subagent is an assistant of its own', async (t) => {
  const { client, thread, run } = await serve(t)
  await run('tea', ['values'], false, 'deep_research_agent')
  const { values } = await client.threads.getState(thread)
  t.same(values.messages.map((m: any) => [m.type, m.content]), [
    ['human', 'tea'],
    ['ai', 'Searching for sources on tea.'],
    ['tool', '3 sources on tea: an encyclopedia entry, a recent survey and a news article.'],
    ['ai', 'Research findings on tea: 3 sources on tea: an encyclopedia entry, a recent survey and a news article.'],
  ])
})
