// The real JS agent server hangar records from (test/upstream-server.ts, the project in
// test/fixtures/upstream), driven by the official SDK: what the recording tests of issue 16 rely on.
// One server for the graphs, one that requires an API key; each takes seconds to start.

import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { startUpstream } from './upstream-server.js'

const PROJECT = fileURLToPath(new URL('fixtures/upstream', import.meta.url))

type Part = { event: string; data: any }

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const out: Part[] = []
  for await (const part of stream) out.push(part)
  return out
}

const STREAM = { streamMode: ['values', 'updates', 'messages-tuple'] as ('values' | 'updates' | 'messages-tuple')[], streamSubgraphs: true }

/**
 * The processes of group `pgid` that have not exited. An exited process whose parent ended first
 * stays a zombie ('Z') until init reaps it, which some containers' init never does: it runs nothing.
 */
function runningInGroup(pgid: number): string[] {
  return execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat=,comm='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && stat !== undefined && !stat.startsWith('Z'))
    .map((fields) => fields.join(' '))
}

// The two servers start side by side: each start is seconds of mostly single-threaded work.
const startedAt = performance.now()
const [upstream, secured] = await Promise.all([startUpstream(t), startUpstream(t, { apiKey: 'upstream-secret' })])
t.comment(`the two agent servers started in ${Math.round(performance.now() - startedAt)} ms`)
const client = new Client({ apiUrl: upstream.url, callerOptions: { maxRetries: 0 } })

t.test('recorded_agent answers with text and a get_weather call, runs the tool, then stops at its interrupt', async (t) => {
  const thread = await client.threads.create()
  const parts = await collect(client.runs.stream(thread.thread_id, 'recorded_agent', {
    input: { messages: [{ role: 'human', content: 'Paris' }] },
    ...STREAM,
  }) as AsyncIterable<Part>)

  const chunks = parts.filter((p) => p.event === 'messages').map((p) => p.data[0])
  const ai = chunks.filter((m) => m.type === 'ai' || m.type === 'AIMessageChunk')
  t.equal(ai.map((m) => m.content).join(''), 'Let me check the weather in Paris.', 'the text, word by word')
  t.ok(ai.length > 2, 'in several chunks')
  const call = ai.flatMap((m) => m.tool_call_chunks ?? [])
  t.same(call.map((c: any) => [c.name, c.id, c.args]), [['get_weather', 'call_1_get_weather', '{"city":"Paris"}']], 'one tool call chunk')
  const tool = chunks.filter((m) => m.type === 'tool')
  t.same(tool.map((m) => [m.content, m.tool_call_id, m.name]), [['It is sunny and 21 degrees in Paris.', 'call_1_get_weather', 'get_weather']], 'the ToolMessage answers the call')

  const interrupts = parts.filter((p) => p.event === 'updates' && '__interrupt__' in p.data)
  t.same(interrupts.map((p) => p.data.__interrupt__.map((i: any) => i.value)), [[{ question: 'Send the forecast for Paris?' }]])
  t.same(parts.filter((p) => p.event.includes('|')), [], 'no subgraph ran yet')

  const state = await client.threads.getState<{ messages: { type: string }[]; decision?: string }>(thread.thread_id)
  t.same(state.next, ['confirm'], 'the thread waits at confirm')
  t.same(state.values.messages.map((m) => m.type), ['human', 'ai', 'tool'])
  t.notOk('decision' in state.values, 'no decision yet')
  t.equal((await client.threads.get(thread.thread_id)).status, 'interrupted')
})

t.test('resuming recorded_agent runs the send subgraph: its events under its namespace, then the final answer', async (t) => {
  const thread = await client.threads.create()
  await collect(client.runs.stream(thread.thread_id, 'recorded_agent', { input: { messages: [{ role: 'human', content: 'Oslo' }] }, ...STREAM }) as AsyncIterable<Part>)
  const parts = await collect(client.runs.stream(thread.thread_id, 'recorded_agent', { command: { resume: 'yes' }, ...STREAM }) as AsyncIterable<Part>)

  const namespaces = new Set(parts.map((p) => p.event.split('|')[1]).filter((ns) => ns !== undefined))
  t.equal(namespaces.size, 1, 'one subgraph namespace')
  const [namespace] = namespaces
  t.match(namespace, /^send:[0-9a-f-]{36}$/, 'named <node>:<task id>')
  const inner = parts.filter((p) => p.event.endsWith(`|${namespace}`)).map((p) => p.event.split('|')[0])
  t.ok(['values', 'updates', 'messages'].every((mode) => inner.includes(mode)), `every stream mode inside the subgraph (${[...new Set(inner)]})`)
  const words = parts.filter((p) => p.event === `messages|${namespace}`).map((p) => p.data[0].content)
  t.equal(words.join(''), 'Forecast sent: yes.', 'the subgraph model streams the answer')
  t.same(parts.find((p) => p.event === 'updates')?.data, { confirm: { decision: 'yes' } }, 'confirm takes the resume value first')

  const final = parts.findLast((p) => p.event === 'values')!.data
  t.equal(final.decision, 'yes')
  t.same(final.messages.map((m: any) => [m.type, m.content]), [
    ['human', 'Oslo'],
    ['ai', 'Let me check the weather in Oslo.'],
    ['tool', 'It is sunny and 21 degrees in Oslo.'],
    ['ai', 'Forecast sent: yes.'],
  ])
  const state = await client.threads.getState(thread.thread_id)
  t.same(state.next, [], 'the run is over')
  t.same(state.values, final)
})

t.test('slow_reply streams twenty words, one chunk each', async (t) => {
  const thread = await client.threads.create()
  const parts = await collect(client.runs.stream(thread.thread_id, 'slow_reply', {
    input: { messages: [{ role: 'human', content: 'count' }] },
    streamMode: ['messages-tuple'],
  }) as AsyncIterable<Part>)
  const words = parts.filter((p) => p.event === 'messages').map((p) => p.data[0].content).filter((text: string) => text !== '')
  t.equal(words.length, 20)
  t.equal(words.join(''), 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty')
})

t.test('the server runs on a copy of the project: nothing is written beside the fixture', async (t) => {
  t.not(upstream.dir, PROJECT)
  t.ok(existsSync(join(upstream.dir, 'langgraph.json')), 'the copy has the project')
  t.notOk(existsSync(join(PROJECT, '.langgraph_api')), 'no storage folder in the repository')
})

t.test('an upstream started with an API key refuses requests without it and serves those with it', async (t) => {
  const search = (headers: Record<string, string>) =>
    fetch(`${secured.url}/assistants/search`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' })

  const missing = await search({})
  t.equal(missing.status, 401, 'no key')
  t.equal(await missing.text(), 'Invalid or missing API key')
  t.equal((await search({ 'x-api-key': 'wrong' })).status, 401, 'a wrong key')
  t.equal((await search({ 'x-auth-scheme': 'langsmith' })).status, 401, "Studio's header does not open it (disable_studio_auth)")
  const allowed = await search({ 'x-api-key': 'upstream-secret' })
  t.equal(allowed.status, 200, 'the key')
  t.same((await allowed.json()).map((a: any) => a.graph_id).sort(), ['recorded_agent', 'slow_reply'])

  const keyed = new Client({ apiUrl: secured.url, apiKey: 'upstream-secret', callerOptions: { maxRetries: 0 } })
  const thread = await keyed.threads.create()
  const parts = await collect(keyed.runs.stream(thread.thread_id, 'recorded_agent', { input: { messages: [{ role: 'human', content: 'Rome' }] }, ...STREAM }) as AsyncIterable<Part>)
  t.same(parts.find((p) => p.event === 'updates' && '__interrupt__' in p.data)?.data.__interrupt__[0].value, { question: 'Send the forecast for Rome?' }, 'the SDK with the key runs the graph')
})

// Last: it stops the server the tests above share.
t.test('stop ends every process of the server and removes its copy of the project', async (t) => {
  t.equal((await fetch(`${upstream.url}/ok`)).status, 200)
  await upstream.stop()
  t.same(runningInGroup(upstream.pid), [], 'no process of the group runs')
  t.notOk(existsSync(upstream.dir), 'the copy is gone')
  await t.rejects(fetch(`${upstream.url}/ok`), 'nothing listens on its port')
})
