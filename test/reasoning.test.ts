// A reply with reasoning (`reply.reasoning` in a graph file): the model's reasoning streams before
// its text as a `reasoning` content block — in `messages-tuple` as chunks whose content is a list
// of blocks, in the session protocol as a reasoning block the official SDK assembles into
// `message.reasoning` — and the stored AI message's content is `[reasoning, text]`. The real
// server's form of reasoning was not recorded (no provider runs offline): this follows LangChain's
// standard content blocks, as the SDK's protocol client reads them (docs/graphs.md says so).

import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, runClockUntil, serveApp } from './helpers.js'

const graph = {
  graph_id: 'thinker',
  state: { messages: 'messages' },
  nodes: [{ name: 'model', steps: [{ reply: { reasoning: 'The user said {{last_human}}, so I agree.', text: 'Yes: {{last_human}}.', tool_calls: [{ name: 'note', args: { about: '{{last_human}}' } }] } }] }],
}

async function serve(t: Parameters<typeof serveApp>[0]) {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-reasoning-'))
  writeFileSync(join(dir, 'thinker.json'), JSON.stringify(graph))
  const served = await serveApp(t, { graphs: dir })
  return { ...served, client: new Client({ apiUrl: served.base, apiKey: API_KEY }) }
}

t.test('messages-tuple: reasoning chunks first, then the text as block 1, then the tool call; the state keeps [reasoning, text]', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const chunks: any[] = []
  for await (const part of client.runs.stream(thread.thread_id, 'thinker', { input: { messages: [{ type: 'human', content: 'cats' }] }, streamMode: 'messages-tuple' })) {
    if (part.event === 'messages') chunks.push((part.data as any)[0])
  }
  const reasoning = chunks.filter((c) => Array.isArray(c.content) && c.content[0]?.type === 'reasoning')
  t.same(reasoning.map((c) => c.content[0].reasoning).join(''), 'The user said cats, so I agree.', 'the reasoning, word by word')
  t.ok(reasoning.every((c) => c.content[0].index === 0), 'as block 0')
  const text = chunks.filter((c) => Array.isArray(c.content) && c.content[0]?.type === 'text')
  t.same(text.map((c) => c.content[0].text).join(''), 'Yes: cats.')
  t.ok(text.every((c) => c.content[0].index === 1), 'the text as block 1')
  t.ok(chunks.indexOf(reasoning.at(-1)) < chunks.indexOf(text[0]), 'the reasoning streams before the text')
  t.same(chunks.flatMap((c) => c.tool_call_chunks ?? []).filter((c: any) => c.name).map((c: any) => [c.name, c.index]), [['note', 2]], 'the call is block 2')
  const state = await client.threads.getState<{ messages: any[] }>(thread.thread_id)
  const reply = state.values.messages.at(-1)
  t.same(reply.content, [{ type: 'reasoning', reasoning: 'The user said cats, so I agree.' }, { type: 'text', text: 'Yes: cats.' }])
  t.same(reply.tool_calls.map((c: any) => c.args), [{ about: 'cats' }])
})

t.test('legacy messages mode: the partial message merges the reasoning and the text into their blocks', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  let last: any
  for await (const part of client.runs.stream(thread.thread_id, 'thinker', { input: { messages: [{ type: 'human', content: 'dogs' }] }, streamMode: 'messages' })) {
    if (part.event === 'messages/partial') last = (part.data as any)[0]
  }
  t.same(last.content, [{ type: 'reasoning', reasoning: 'The user said dogs, so I agree.', index: 0 }, { type: 'text', text: 'Yes: dogs.', index: 1 }])
})

t.test('the session protocol: the SDK assembles the reasoning block and the text block of the message', async (t) => {
  const { client, clock } = await serve(t)
  const thread = client.threads.stream({ assistantId: 'thinker' })
  t.teardown(() => thread.close())
  const seen: { reasoning: string; text: string; blocks: unknown }[] = []
  const reading = (async () => {
    for await (const message of thread.messages) {
      seen.push({ reasoning: await message.reasoning, text: await message.text, blocks: message.blocks.map((b: any) => b.type) })
      break
    }
  })()
  await thread.run.start({ input: { messages: [{ type: 'human', content: 'owls' }] } })
  await runClockUntil(clock, () => seen.length > 0, 'the message arrives')
  await reading
  t.same(seen, [{ reasoning: 'The user said owls, so I agree.', text: 'Yes: owls.', blocks: ['reasoning', 'text', 'tool_call'] }])
})

t.test('a reasoning template that names no state key stops start-up with the file and the field', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-reasoning-bad-'))
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...graph, nodes: [{ name: 'model', steps: [{ reply: { reasoning: '{{state.nope}}' } }] }] }))
  const { createEngine } = await import('../src/agent/engine.js')
  t.throws(() => createEngine(dir), { message: /bad\.json: nodes\[0\]\.steps\[0\]\.reply\.reasoning: unknown template '\{\{state\.nope\}\}'/ })
})
