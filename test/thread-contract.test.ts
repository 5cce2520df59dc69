// The rest of the run and thread contract the SDKs call (issue 14), driven by the official JS SDK
// against a real listening hangar: `durability`, `context` and the config a thread keeps from its
// runs, as the real JS server 1.5.1 shows them (docs/agent-server-wire.md §6.2).

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { Config } from '../src/config.js'
import { runClockUntil, serveApp, someoneWaitsOn } from './helpers.js'

async function serve(t: Test, config: Partial<Config> = {}) {
  const { clock, base: apiUrl } = await serveApp(t, config)
  const client = new Client({ apiUrl, apiKey: 'test-key', callerOptions: { maxRetries: 0 } })
  return { clock, client }
}

const say = (content: string) => ({ messages: [{ role: 'user', content }] })
/** A run's `kwargs` (what it was asked to do): the server sends them; the SDK's Run type leaves them out. */
const kwargsOf = (run: object) => (run as { kwargs: any }).kwargs

// ---- run bodies: durability, checkpoint_during, context ----------------------------------------

t.test('durability and the deprecated checkpoint_during are accepted and kept in kwargs; bad values are 422', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const kwargs = async (payload: object) => {
    const run = await client.runs.create(thread.thread_id, 'agent', { input: say('x'), ...payload })
    await client.runs.join(thread.thread_id, run.run_id)
    return kwargsOf(await client.runs.get(thread.thread_id, run.run_id))
  }
  for (const durability of ['sync', 'async', 'exit'] as const) t.equal((await kwargs({ durability })).durability, durability)
  t.equal((await kwargs({ checkpointDuring: true })).durability, 'async', 'checkpoint_during true is async')
  t.equal((await kwargs({ checkpointDuring: false })).durability, 'exit', 'false is exit')
  t.equal((await kwargs({ checkpointDuring: false, durability: 'sync' })).durability, 'sync', 'durability wins')
  t.notOk('durability' in (await kwargs({})), 'neither given: not shown (as the real JS server shows kwargs)')

  await t.rejects(client.runs.create(thread.thread_id, 'agent', { input: say('x'), durability: 'never' as never }), { status: 422, message: /literal_error.*durability/ })
  await t.rejects(client.runs.wait(thread.thread_id, 'agent', { input: say('x'), checkpointDuring: 'maybe' as never }), { status: 422, message: /bool_parsing.*checkpoint_during/ })
})

t.test('context reaches the graph as its runtime context ({{context.<key>}} in templates) and is kept in kwargs over the assistant\'s', async (t) => {
  const graph = {
    graph_id: 'greeter',
    description: 'Greets by the name in the run\'s context.',
    state: { messages: 'messages', flags: 'replace' },
    nodes: [{ name: 'greet', steps: [{ update: { flags: '{{context.flags}}' } }, { reply: { text: 'Hello {{context.name}} ({{context.lang}})' } }] }],
  }
  const { client } = await serve(t, { fixtures: t.testdir({ graphs: { 'greeter.json': JSON.stringify(graph) } }) })
  const assistant = await client.assistants.create({ graphId: 'greeter', context: { lang: 'fr', name: 'nobody' } })
  const thread = await client.threads.create()
  const values = await client.runs.wait(thread.thread_id, assistant.assistant_id, { input: say('hi'), context: { name: 'Ada', flags: [1, 2] } }) as any
  t.equal(values.messages.at(-1).content, 'Hello Ada (fr)', 'the run\'s context over the assistant\'s')
  t.same(values.flags, [1, 2], 'a lone template keeps the value\'s type')
  const [run] = await client.runs.list(thread.thread_id)
  t.same(kwargsOf(run).context, { lang: 'fr', name: 'Ada', flags: [1, 2] })

  const plain = await client.runs.wait(thread.thread_id, 'greeter', { input: say('again') }) as any
  t.equal(plain.messages.at(-1).content, 'Hello  ()', 'no context: the templates are empty')
  t.same(kwargsOf((await client.runs.list(thread.thread_id))[0]).context, {})
  await t.rejects(client.runs.wait(thread.thread_id, 'greeter', { input: say('x'), context: 'text' as never }), { status: 422, message: /dict_type.*context/ })
})

// ---- thread.config ---------------------------------------------------------------------------

t.test('a thread keeps its runs\' configurable and tags in config; later runs inherit the configurable; an enqueued run changes nothing', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  t.same(thread.config, {}, 'a new thread has none')
  await client.runs.wait(thread.thread_id, 'agent', { input: say('a'), config: { configurable: { user_id: 'u1', model: 'm' }, tags: ['t1', 't2'], recursion_limit: 7 } })
  const first = (await client.threads.get(thread.thread_id)).config as any
  t.same(first.tags, ['t1', 't2'])
  t.equal(first.recursion_limit, 7)
  t.match(first.configurable, { user_id: 'u1', model: 'm' })
  t.notOk(['run_id', 'thread_id', 'graph_id', 'assistant_id'].some((k) => k in first.configurable), 'the run\'s ids are not kept')

  const history = await client.threads.getHistory(thread.thread_id)
  await client.runs.wait(thread.thread_id, 'agent', { input: say('b'), config: { configurable: { model: 'n' } }, checkpointId: history[0].checkpoint.checkpoint_id! })
  const second = (await client.threads.get(thread.thread_id)).config as any
  t.match(second, { tags: ['t1', 't2'], configurable: { user_id: 'u1', model: 'n' } }, 'merged key by key; the tags stay')
  t.notOk('checkpoint_id' in second.configurable, 'a run\'s checkpoint_id is not kept (the real JS server keeps it, and every later run forks there again)')
  const [latest] = await client.runs.list(thread.thread_id)
  t.match(kwargsOf(latest).config.configurable, { user_id: 'u1', model: 'n' }, 'a run inherits the configurable the thread kept')

  const waiting = someoneWaitsOn(clock)
  const busy = await client.runs.create(thread.thread_id, 'pipeline', { input: say('c') })
  await waiting
  const queued = await client.runs.create(thread.thread_id, 'agent', { input: say('d'), multitaskStrategy: 'enqueue', config: { tags: ['queued'] } })
  t.same(((await client.threads.get(thread.thread_id)).config as any).tags, ['t1', 't2'], 'a run queued on a busy thread does not change its config')
  await runClockUntil(clock, async () => (await client.runs.get(thread.thread_id, queued.run_id)).status === 'success', 'both runs end')
  t.equal((await client.runs.get(thread.thread_id, busy.run_id)).status, 'success')

  const made = crypto.randomUUID()
  await client.runs.wait(made, 'agent', { input: say('e'), ifNotExists: 'create', config: { configurable: { k: 3 }, tags: ['z'] } })
  t.match((await client.threads.get(made)).config, { tags: ['z'], configurable: { k: 3 } }, 'a thread a run creates starts with the run\'s config')
})
