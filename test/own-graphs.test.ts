// A user's own scenario graphs (`--graphs` / HANGAR_GRAPHS): served next to the shipped graphs,
// each with its system assistant; one with a shipped graph's id replaces that graph.

import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, runClockUntil, serveApp, SHIPPED_GRAPHS } from './helpers.js'

t.test('your graphs join the shipped ones; yours wins on a shared graph_id', async (t) => {
  const dir = t.testdir({
    'support_bot.json': JSON.stringify({
      graph_id: 'support_bot',
      state: { messages: 'messages' },
      nodes: [{ name: 'answer', steps: [{ reply: { text: 'Thanks for writing about {{last_human}}; a human will follow up.' } }] }],
    }),
    'agent.json': JSON.stringify({
      graph_id: 'agent',
      state: { messages: 'messages' },
      nodes: [{ name: 'agent', steps: [{ reply: { text: 'My own agent says hi.' } }] }],
    }),
  })
  const { base } = await serveApp(t, { graphs: dir })
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const graphs = (await client.assistants.search({ limit: 100 })).map((a) => a.graph_id).sort()
  t.same(graphs, [...new Set([...SHIPPED_GRAPHS, 'support_bot'])].sort(), 'every shipped graph, and yours')
  const thread = await client.threads.create()
  const mine = await client.runs.wait(thread.thread_id, 'support_bot', { input: { messages: [{ type: 'human', content: 'my invoice' }] } }) as { messages: { content: string }[] }
  t.equal(mine.messages.at(-1)!.content, 'Thanks for writing about my invoice; a human will follow up.')
  const other = await client.threads.create()
  const replaced = await client.runs.wait(other.thread_id, 'agent', { input: { messages: [{ type: 'human', content: 'hello' }] } }) as { messages: { content: string }[] }
  t.equal(replaced.messages.at(-1)!.content, 'My own agent says hi.', 'your agent.json replaced the shipped echo agent')
})

t.test('the cookbook example of docs/graphs.md ("Your own graphs") loads and answers as it says', async (t) => {
  const docs = readFileSync(new URL('../docs/graphs.md', import.meta.url), 'utf8')
  const section = docs.slice(docs.indexOf('### Your own graphs'), docs.indexOf('## The format'))
  const example = /```json\n([\s\S]*?)```/.exec(section)![1]
  const dir = t.testdir({ 'support_bot.json': example })
  const { base, clock } = await serveApp(t, { graphs: dir })
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const ask = async (text: string) => {
    const thread = await client.threads.create()
    const waiting = client.runs.wait(thread.thread_id, 'support_bot', { input: { messages: [{ type: 'human', content: text }] } })
    let settled = false
    void waiting.finally(() => (settled = true))
    // The answer streams a word every 40 ms of hangar's clock: move it until the run is done.
    await runClockUntil(clock, () => settled, 'the run ends', { stepMs: 40 })
    const values = await waiting as { messages: { content: string }[] }
    return values.messages.at(-1)!.content
  }
  t.equal(await ask('my invoice is wrong'), 'I have passed your question about my invoice is wrong to billing.')
  t.equal(await ask('opening hours'), 'Thanks! Here is what I know about opening hours.')
})

t.test('a graph file edited between two hangars of one process is read again by the second (parses are kept per file text)', async (t) => {
  const graph = (text: string) => JSON.stringify({
    graph_id: 'support_bot',
    state: { messages: 'messages' },
    nodes: [{ name: 'answer', steps: [{ reply: { text } }] }],
  })
  const dir = t.testdir({ 'support_bot.json': graph('First version.') })
  const answer = async () => {
    const { base, app } = await serveApp(t, { graphs: dir })
    const client = new Client({ apiUrl: base, apiKey: API_KEY })
    const thread = await client.threads.create()
    const values = await client.runs.wait(thread.thread_id, 'support_bot', { input: { messages: [{ type: 'human', content: 'hi' }] } }) as { messages: { content: string }[] }
    await app.close()
    return values.messages.at(-1)!.content
  }
  t.equal(await answer(), 'First version.')
  t.equal(await answer(), 'First version.', 'the same file again')
  writeFileSync(join(dir, 'support_bot.json'), graph('Second version.'))
  t.equal(await answer(), 'Second version.', 'the edited file')
})
