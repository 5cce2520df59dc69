// Tool calls as the shipped `tools_agent` graph makes them, compared with what the real JS agent
// server streamed for the same agent written in LangGraph JS (test/fixtures/tool-calls/, versions
// and how to record again in its README): the chunks of `messages-tuple` (text, each call's name
// and id, its arguments in pieces, the last chunk's usage and finish reason), ToolMessages, the
// `tools` stream mode, the session protocol's `messages` content blocks and `tools` channel, the
// checkpoints of the ReAct loop and the graph drawing. Ids are labelled by first appearance; what
// hangar sends differently on purpose (Python-form message fields) is left out of the projections.

import { readFileSync } from 'node:fs'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, serveApp } from './helpers.js'
import { ALL_CHANNELS, command, readEvents, rootEnded, type WireEvent } from './protocol-helpers.js'

interface Exchange { request: { method: string; path: string; body: string }; response: { status: number; body: string } }
interface Recorded { stream_mode: string[]; exchanges: Exchange[] }
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/tool-calls/${name}.json`, import.meta.url), 'utf8'))

/** The `{event, data}` of an SSE body. */
function sse(body: string): { event: string; data: any }[] {
  return body.split('\n\n').filter((block) => block.includes('data: ')).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message'
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')
    return { event, data: JSON.parse(data) }
  })
}

/** Labels for ids (tool call ids, message ids) in order of first appearance. */
function labeller() {
  const seen = new Map<string, string>()
  return (id: unknown) => {
    if (typeof id !== 'string') return id
    if (!seen.has(id)) seen.set(id, `#${seen.size + 1}`)
    return seen.get(id)
  }
}

/** A `messages-tuple` event: what a chat UI reads of a chunk or a ToolMessage. */
function tupleView(label: (id: unknown) => unknown) {
  return ([message, metadata]: [any, any]) => message.type === 'tool'
    ? { node: metadata.langgraph_node, tool: { content: message.content, name: message.name, call: label(message.tool_call_id), status: message.status, artifact: message.artifact ?? null } }
    : {
        node: metadata.langgraph_node,
        content: message.content,
        chunks: (message.tool_call_chunks ?? []).map((c: any) => ({ ...c, ...('id' in c ? { id: label(c.id) } : {}) })),
        calls: (message.tool_calls ?? []).map((c: any) => ({ name: c.name, args: c.args, ...('id' in c ? { id: label(c.id) } : {}) })),
        invalid: (message.invalid_tool_calls ?? []).map((c: any) => ({ name: c.name, args: c.args, error: c.error })),
        usage: message.usage_metadata ?? null,
        finish: message.response_metadata?.finish_reason ?? null,
      }
}

/** A `tools` mode event. */
function toolsView(label: (id: unknown) => unknown) {
  return (data: any) => ({
    event: data.event,
    call: label(data.toolCallId),
    name: data.name,
    ...(data.input === undefined ? {} : { input: data.input }),
    ...(data.output === undefined ? {} : { output: { content: data.output.content, status: data.output.status, name: data.output.name, call: label(data.output.tool_call_id) } }),
    ...(data.error === undefined ? {} : { error: data.error }),
  })
}

const recordedStream = (scenario: string, mode: string) => {
  const stream = (fixture(scenario).streams as Recorded[]).find((s) => s.stream_mode.length === 1 && s.stream_mode[0] === mode)!
  return sse(stream.exchanges.find((e) => e.request.path.endsWith('/runs/stream'))!.response.body)
}

async function hangarStream(base: string, text: string, mode: string) {
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = await client.threads.create()
  const res = await fetch(`${base}/threads/${thread.thread_id}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify({ assistant_id: 'tools_agent', input: { messages: [{ type: 'human', content: text }] }, stream_mode: [mode] }),
  })
  return { events: sse(await res.text()), thread: thread.thread_id, client }
}

for (const [scenario, text] of [['paris', 'Paris'], ['broken', 'Paris broken'], ['invalid', 'invalid']] as const) {
  t.test(`${scenario}: messages-tuple streams text, each tool call and its arguments, the last chunk's usage, then the ToolMessages, as the real server does`, async (t) => {
    const { base } = await serveApp(t)
    const real = recordedStream(scenario, 'messages-tuple').filter((e) => e.event === 'messages').map((e) => tupleView(labeller())(e.data))
    const ours = (await hangarStream(base, text, 'messages-tuple')).events.filter((e) => e.event === 'messages')
    // Labels run across the whole stream on each side.
    const realLabel = labeller()
    const ourLabel = labeller()
    t.same(ours.map((e) => tupleView(ourLabel)(e.data)), recordedStream(scenario, 'messages-tuple').filter((e) => e.event === 'messages').map((e) => tupleView(realLabel)(e.data)))
    t.ok(real.length > 5)
  })

  t.test(`${scenario}: legacy messages mode: each partial is the message so far (calls merged, their args parsed as far as they go), then the messages whole`, async (t) => {
    const { base } = await serveApp(t)
    const view = (events: { event: string; data: any }[]) => {
      const label = labeller()
      return events.filter((e) => e.event.startsWith('messages/') && e.event !== 'messages/metadata').map((e) => ({
        event: e.event,
        messages: (e.data as any[]).map((m) => ({
          type: m.type === 'AIMessageChunk' ? 'ai' : m.type,
          content: m.content,
          chunks: (m.tool_call_chunks ?? []).map((c: any) => ({ ...c, id: label(c.id) })),
          calls: (m.tool_calls ?? []).map((c: any) => ({ name: c.name, args: c.args, id: label(c.id) })),
          finish: m.response_metadata?.finish_reason ?? null,
        })),
      }))
    }
    t.same(view((await hangarStream(base, text, 'messages')).events), view(recordedStream(scenario, 'messages')))
  })

  if (scenario !== 'invalid') t.test(`${scenario}: the events mode has an on_tool_* event per call, as the real server's`, async (t) => {
    const { base } = await serveApp(t)
    const view = (events: { event: string; data: any }[]) => events.filter((e) => e.event === 'events' && String(e.data.event).startsWith('on_tool_')).map((e) => ({
      event: e.data.event,
      name: e.data.name,
      input: e.data.data.input,
      node: e.data.metadata.langgraph_node,
      ...(e.data.data.output ? { output: [e.data.data.output.content, e.data.data.output.status] } : {}),
      // The real server's error text goes on with the stack trace; its first line is the message.
      ...(e.data.data.error ? { error: String(e.data.data.error).split('\n')[0] } : {}),
    }))
    t.same(view((await hangarStream(base, text, 'events')).events), view(recordedStream(scenario, 'events')))
  })

  if (scenario !== 'invalid') t.test(`${scenario}: the tools stream mode reports each call's start, end or error, as the real server does`, async (t) => {
    const { base } = await serveApp(t)
    const ours = (await hangarStream(base, text, 'tools')).events.filter((e) => e.event === 'tools')
    t.same(ours.map((e) => toolsView(labeller())(e.data)), recordedStream(scenario, 'tools').filter((e) => e.event === 'tools').map((e) => toolsView(labeller())(e.data)))
  })
}

t.test('paris: the ReAct loop leaves the real server\'s checkpoints and messages; the drawing has its conditional edges', async (t) => {
  const { base } = await serveApp(t)
  const { thread, client } = await hangarStream(base, 'Paris', 'values')
  const history = await client.threads.getHistory(thread, { limit: 20 })
  t.same(history.map((s) => [s.metadata?.step, s.metadata?.source, s.next]), [
    [3, 'loop', []], [2, 'loop', ['agent']], [1, 'loop', ['tools']], [0, 'loop', ['agent']], [-1, 'input', ['__start__']],
  ], 'the real server\'s five checkpoints (steps -1 to 3)')
  const state = await client.threads.getState<{ messages: any[] }>(thread)
  const realState = JSON.parse(fixture('paris').streams[0].exchanges.at(-1).response.body)
  const view = (m: any) => ({ type: m.type, content: m.content, calls: (m.tool_calls ?? []).map((c: any) => [c.name, c.args]), status: m.status ?? null, usage: m.usage_metadata ? [m.usage_metadata.input_tokens, m.usage_metadata.output_tokens, m.usage_metadata.total_tokens] : null, finish: m.response_metadata?.finish_reason ?? null })
  t.same(state.values.messages.map(view), realState.values.messages.map(view))

  const drawing = fixture('graph').exchanges.find((e: Exchange) => /\/graph$/.test(e.request.path)).response.body
  t.same(await client.assistants.getGraph('tools_agent'), JSON.parse(drawing), 'the drawing: the tools node as a ToolNode with its tools, conditional edges last')
})

t.test('the session protocol: the tool calls as content blocks on the messages channel, the tools channel, as the real server sends them', async (t) => {
  const { base } = await serveApp(t)
  const run = fixture('protocol').runs[0]
  const real = sse(run.exchanges.find((e: Exchange) => e.request.path.endsWith('/stream/events')).response.body).map((e) => e.data as WireEvent)
  const threadId = '0c3b9f14-7f3e-4b8a-9d51-6a2e1f0c9b77'
  const reading = readEvents(base, threadId, { channels: ALL_CHANNELS }, rootEnded(1))
  await command(base, threadId, { id: 1, method: 'run.start', params: { assistant_id: 'tools_agent', input: run.input } })
  const ours = (await reading).events
  const view = (events: WireEvent[]) => {
    const label = labeller()
    return events.filter((e) => e.method === 'messages' || e.method === 'tools').map((e) => {
      const { run_id: _run, id: _id, ...data } = e.params.data as any
      if (data.content?.id) data.content = { ...data.content, id: label(data.content.id) }
      if (data.tool_call_id) data.tool_call_id = label(data.tool_call_id)
      if (data.output) data.output = { content: data.output.content, status: data.output.status, name: data.output.name }
      return [e.method, e.params.namespace.map((n: string) => n.split(':')[0]), data]
    })
  }
  t.same(view(ours), view(real))
})

t.test('invalid: arguments that are not JSON make an invalid tool call; the loop ends there, as on the real server', async (t) => {
  const { base } = await serveApp(t)
  const { thread, client } = await hangarStream(base, 'invalid', 'values')
  const recorded = fixture('invalid').streams[0].exchanges.find((e: Exchange) => e.request.path.endsWith('/state')).response.body
  const view = (m: any) => ({ content: m.content, calls: m.tool_calls, invalid: m.invalid_tool_calls.map((c: any) => ({ ...c, id: 'id' })) })
  const state = await client.threads.getState<{ messages: any[] }>(thread)
  t.same(view(state.values.messages.at(-1)), view(JSON.parse(recorded).values.messages.at(-1)))
  t.equal((await client.threads.getHistory(thread)).length, 3, 'input, input applied, agent: the route found no tool calls')
})

t.test('the session protocol: an invalid tool call finishes as an invalid_tool_call block, as on the real server', async (t) => {
  const { base } = await serveApp(t)
  const run = fixture('protocol').runs.find((r: any) => r.input.messages[0].content === 'invalid')
  const real = sse(run.exchanges.find((e: Exchange) => e.request.path.endsWith('/stream/events')).response.body).map((e) => e.data as WireEvent)
  const threadId = '1d4c0a25-8a4f-4c9b-ae62-7b3f2a1d0c88'
  const reading = readEvents(base, threadId, { channels: ALL_CHANNELS }, rootEnded(1))
  await command(base, threadId, { id: 1, method: 'run.start', params: { assistant_id: 'tools_agent', input: run.input } })
  const finishes = (events: WireEvent[]) => events.filter((e) => e.method === 'messages' && (e.params.data as any).event === 'content-block-finish')
    .map((e) => ({ ...(e.params.data as any).content, id: 'id' }))
  t.same(finishes((await reading).events), finishes(real))
})
