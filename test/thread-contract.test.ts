// The rest of the run and thread contract the SDKs call (issue 14), driven by the official JS SDK
// against a real listening hangar: patchState, runs.cancelMany, threads.prune, search `extract`,
// supersteps that record an input, joinStream's stream_mode filter, `durability`, `context` and
// the config a thread keeps from its runs. Where the real JS server 1.5.1 answers, its answers are
// recorded in test/fixtures/thread-contract/ (see record.mjs there); where it has no such route,
// hangar follows the agent server's OpenAPI document and the SDK's requests.

import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { Config } from '../src/config.js'
import { runClockUntil, serveApp, someoneWaitsOn, until } from './helpers.js'

async function serve(t: Test, config: Partial<Config> = {}) {
  const { clock, base: apiUrl } = await serveApp(t, config)
  const client = new Client({ apiUrl, apiKey: 'test-key', callerOptions: { maxRetries: 0 } })
  /** A request the SDK cannot make (a field it does not send): plain fetch, the status and the body text. */
  const raw = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(apiUrl + path, {
      method, headers: { 'x-api-key': 'test-key', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, text: await res.text() }
  }
  return { clock, client, raw }
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of stream) out.push(item)
  return out
}

type Part = { event: string; data: any; id?: string }
const say = (content: string) => ({ messages: [{ role: 'user', content }] })
/** A run's `kwargs` (what it was asked to do): the server sends them; the SDK's Run type leaves them out. */
const kwargsOf = (run: object) => (run as { kwargs: any }).kwargs
/** What the SDK throws for an error answer: `HTTP <status>: <body>`. */
const refused = (status: number, body: unknown) => ({ message: `HTTP ${status}: ${JSON.stringify(body)}` })

// ---- PATCH /threads/{id}/state ---------------------------------------------------------------

t.test('patchState merges metadata into the latest checkpoint, by thread id or by config; older checkpoints keep theirs', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  await client.runs.wait(thread.thread_id, 'agent', { input: say('hi') })
  const before = await client.threads.getHistory(thread.thread_id)

  t.equal(await client.threads.patchState(thread.thread_id, { reviewed: true, step: 99 }), undefined, '204, no body')
  const state = await client.threads.getState(thread.thread_id)
  t.same(state.metadata, { ...before[0].metadata, reviewed: true, step: 99 }, 'merged: keys given replace, the others stay')
  t.same(state.values, before[0].values, 'the values are untouched')
  t.equal(state.checkpoint.checkpoint_id, before[0].checkpoint.checkpoint_id, 'no checkpoint is added')

  await client.threads.patchState({ configurable: { thread_id: thread.thread_id } }, { by: 'config' })
  const after = await client.threads.getHistory(thread.thread_id)
  t.equal(after.length, before.length)
  t.same(after[0].metadata, { ...before[0].metadata, reviewed: true, step: 99, by: 'config' })
  t.same(after.slice(1).map((s) => s.metadata), before.slice(1).map((s) => s.metadata), 'older checkpoints are as they were')
})

t.test('PATCH /threads/{id}/state with checkpoint_id patches that checkpoint; unknown threads and checkpoints are 404, bad metadata 422', async (t) => {
  const { client, raw } = await serve(t)
  const thread = await client.threads.create()
  await client.runs.wait(thread.thread_id, 'agent', { input: say('hi') })
  const history = await client.threads.getHistory(thread.thread_id)
  const input = history.at(-1)!.checkpoint.checkpoint_id!
  // The SDK's patchState sends only `metadata`; the body takes a checkpoint as POST …/state does.
  t.equal((await raw('PATCH', `/threads/${thread.thread_id}/state`, { metadata: { note: 'first' }, checkpoint_id: input })).status, 204)
  t.equal((await raw('PATCH', `/threads/${thread.thread_id}/state`, { metadata: { also: 1 }, checkpoint: { checkpoint_id: input } })).status, 204)
  const again = await client.threads.getHistory(thread.thread_id)
  t.same(again.at(-1)!.metadata, { ...history.at(-1)!.metadata, note: 'first', also: 1 })
  t.same(again[0].metadata, history[0].metadata, 'the latest is untouched')

  const ghost = '0d7b3a52-6a1e-4f4e-9a55-7d9c4c1f0b11'
  await t.rejects(client.threads.patchState(ghost, { a: 1 }), refused(404, { detail: `Thread with ID ${ghost} not found` }))
  t.same(await raw('PATCH', `/threads/${thread.thread_id}/state`, { metadata: {}, checkpoint_id: 'nope' }),
    { status: 404, text: JSON.stringify({ detail: 'Checkpoint nope not found' }) })
  const empty = await client.threads.create()
  await t.rejects(client.threads.patchState(empty.thread_id, { a: 1 }), refused(404, { detail: `Thread ${empty.thread_id} has no checkpoint` }))
  const bad = await raw('PATCH', `/threads/${thread.thread_id}/state`, { metadata: 'text' })
  t.equal(bad.status, 422)
  t.match(JSON.parse(bad.text).detail[0], { type: 'dict_type', loc: ['body', 'metadata'] })
  t.equal((await raw('PATCH', `/threads/${thread.thread_id}/state`, {})).status, 422, 'metadata is required')
})

// ---- POST /runs/cancel -------------------------------------------------------------------------

t.test('runs.cancelMany by thread and run ids interrupts them; by status it cancels every run with that status, on any thread', async (t) => {
  const { client, clock } = await serve(t)
  const [a, b] = [await client.threads.create(), await client.threads.create()]
  const waiting = someoneWaitsOn(clock)
  const runningA = await client.runs.create(a.thread_id, 'pipeline', { input: say('a') })
  await waiting
  const queuedA = await client.runs.create(a.thread_id, 'agent', { input: say('a2'), multitaskStrategy: 'enqueue' })
  const runningB = await client.runs.create(b.thread_id, 'pipeline', { input: say('b') })
  const status = async (thread: string, run: string) => (await client.runs.get(thread, run)).status

  await client.runs.cancelMany({ status: 'pending' })
  t.equal(await status(a.thread_id, runningA.run_id), 'running', 'running runs are not pending')
  t.equal(await status(b.thread_id, runningB.run_id), 'running')

  await client.runs.cancelMany({ threadId: a.thread_id, runIds: [runningA.run_id] })
  await client.runs.join(a.thread_id, runningA.run_id)
  await client.runs.join(a.thread_id, queuedA.run_id)
  t.equal(await status(a.thread_id, runningA.run_id), 'interrupted', 'a run named by id is cancelled')
  t.equal(await status(a.thread_id, queuedA.run_id), 'interrupted', 'the pending run was cancelled: it never ran')
  t.same(await collect(client.runs.joinStream(a.thread_id, queuedA.run_id, { lastEventId: '-1' })), [], 'it sent nothing')
  t.equal((await client.threads.get(a.thread_id)).status, 'idle')
  t.equal(await status(b.thread_id, runningB.run_id), 'running', 'another thread\'s run goes on')

  await client.runs.cancelMany({ status: 'all', action: 'rollback' })
  await until(async () => (await client.runs.list(b.thread_id)).length === 0, 'the rolled back run is gone')
  await t.rejects(client.runs.get(b.thread_id, runningB.run_id), refused(404, { detail: 'Run not found' }), 'rollback removes the run')
  t.same(await client.threads.getHistory(b.thread_id), [], 'and its checkpoints')
  t.equal(clock.listenerCount('change'), 0, 'no run is left waiting on the clock')
})

t.test('runs.cancelMany refuses bad combinations with the real bodies; nothing to cancel is a 404', async (t) => {
  const { client, raw } = await serve(t)
  const thread = await client.threads.create()
  const run = await client.runs.create(thread.thread_id, 'agent', { input: say('x') })
  await client.runs.join(thread.thread_id, run.run_id)

  await t.rejects(client.runs.cancelMany({ status: 'all', threadId: thread.thread_id, runIds: [run.run_id] }),
    refused(422, { detail: "Cannot specify 'thread_id' or 'run_ids' when using 'status'" }))
  await t.rejects(client.runs.cancelMany({ threadId: thread.thread_id }),
    refused(422, { detail: "Must provide either a status or both 'thread_id' and 'run_ids'" }))
  await t.rejects(client.runs.cancelMany({}), refused(422, { detail: "Must provide either a status or both 'thread_id' and 'run_ids'" }))
  await t.rejects(client.runs.cancelMany({ status: 'running' }), refused(404, { detail: 'No runs found to cancel.' }), 'no run is running')
  const ghost = '0d7b3a52-6a1e-4f4e-9a55-7d9c4c1f0b12'
  await t.rejects(client.runs.cancelMany({ threadId: ghost, runIds: [run.run_id] }), refused(404, { detail: 'No runs found to cancel.' }))
  await t.rejects(client.runs.cancelMany({ threadId: thread.thread_id, runIds: [ghost] }), refused(404, { detail: 'No runs found to cancel.' }))
  t.equal((await raw('POST', '/runs/cancel', { thread_id: thread.thread_id, run_ids: [run.run_id] })).status, 204, 'a run that already ended is found')
  t.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success', 'and left as it was')

  for (const [what, body, query] of [
    ['an unknown status', { status: 'done' }, ''],
    ['run ids that are not UUIDs', { thread_id: thread.thread_id, run_ids: ['x'] }, ''],
    ['an unknown action', { status: 'all' }, '?action=stop'],
  ] as const) {
    const res = await raw('POST', `/runs/cancel${query}`, body)
    t.equal(res.status, 422, what)
    t.ok(Array.isArray(JSON.parse(res.text).detail), `${what}: a validation error list`)
  }
})

// ---- POST /threads/prune -----------------------------------------------------------------------

t.test('threads.prune: delete removes the threads and their runs; keep_latest keeps the state and one checkpoint; unknown ids are not counted', async (t) => {
  const { client, raw } = await serve(t)
  const [gone, kept, other] = [await client.threads.create(), await client.threads.create(), await client.threads.create()]
  for (const thread of [gone, kept, other]) {
    await client.runs.wait(thread.thread_id, 'agent', { input: say('one') })
    await client.runs.wait(thread.thread_id, 'agent', { input: say('two') })
  }
  const ghost = '0d7b3a52-6a1e-4f4e-9a55-7d9c4c1f0b13'
  t.same(await client.threads.prune([gone.thread_id, ghost]), { pruned_count: 1 }, 'the strategy defaults to delete; an unknown id is skipped')
  await t.rejects(client.threads.get(gone.thread_id), refused(404, { detail: `Thread with ID ${gone.thread_id} not found` }))

  const state = await client.threads.getState(kept.thread_id)
  const otherHistory = await client.threads.getHistory(other.thread_id, { limit: 100 })
  t.same(await client.threads.prune([kept.thread_id, kept.thread_id], { strategy: 'keep_latest' }), { pruned_count: 1 })
  const history = await client.threads.getHistory(kept.thread_id, { limit: 100 })
  t.equal(history.length, 1, 'one checkpoint is left')
  t.same(history[0].checkpoint, state.checkpoint, 'the latest')
  t.same((await client.threads.getState(kept.thread_id)).values, state.values, 'the state is as it was')
  t.equal((await client.runs.list(kept.thread_id)).length, 2, 'the runs stay')
  t.same(await client.threads.getHistory(other.thread_id, { limit: 100 }), otherHistory, 'a thread not named is untouched')
  const next = await client.runs.wait(kept.thread_id, 'agent', { input: say('three') }) as any
  t.same(next.messages.map((m: any) => m.content), ['one', 'one', 'two', 'two', 'three', 'three'], 'a pruned thread runs on from its state')

  t.same(await client.threads.prune([]), { pruned_count: 0 })
  const bad = await raw('POST', '/threads/prune', { thread_ids: [kept.thread_id], strategy: 'all' })
  t.equal(bad.status, 422)
  t.match(JSON.parse(bad.text).detail[0], { type: 'literal_error', loc: ['body', 'strategy'] })
  t.equal((await raw('POST', '/threads/prune', { thread_ids: ['not-a-uuid'] })).status, 422)
  t.equal((await raw('POST', '/threads/prune', {})).status, 422, 'thread_ids is required')
})

// ---- threads.search extract --------------------------------------------------------------------

t.test('threads.search extract adds `extracted` to each thread, by path; a path it cannot read is a 422', async (t) => {
  const { client, raw } = await serve(t)
  const thread = await client.threads.create({ metadata: { owner: { name: 'ann' } } })
  await client.runs.wait(thread.thread_id, 'agent', { input: say('first question') })
  await client.runs.wait(thread.thread_id, 'agent', { input: say('last question') })
  const empty = await client.threads.create({ metadata: { owner: 'bob' } })

  const found = await client.threads.search({
    sortBy: 'created_at', sortOrder: 'asc',
    extract: {
      last: 'values.messages[-1].content', first: 'values.messages[0].content', owner: 'metadata.owner.name',
      graph: 'metadata.graph_id', status: 'interrupts', missing: 'values.messages[9].content',
    },
  })
  t.same(found.map((th) => th.thread_id), [thread.thread_id, empty.thread_id])
  t.same(found[0].extracted, { last: 'last question', first: 'first question', owner: 'ann', graph: 'agent', status: {}, missing: null })
  t.same(found[1].extracted, { last: null, first: null, owner: null, graph: null, status: {}, missing: null }, 'a path that leads nowhere gives null')
  t.equal((found[0].values as any).messages.length, 4, 'the threads are whole')

  const selected = await client.threads.search({ select: ['thread_id'], extract: { last: 'values.messages[-1].type' }, ids: [thread.thread_id] })
  t.same(selected, [{ thread_id: thread.thread_id, extracted: { last: 'ai' } }], 'with select: the selected fields and `extracted`')
  t.notOk('extracted' in (await client.threads.search({ ids: [thread.thread_id] }))[0], 'no extract, no `extracted`')

  const bad = await raw('POST', '/threads/search', { extract: { a: 'state.messages', b: 'values..x' } })
  t.equal(bad.status, 422)
  t.same(JSON.parse(bad.text).detail.map((e: any) => [e.type, e.loc]), [['value_error', ['body', 'extract', 'a']], ['value_error', ['body', 'extract', 'b']]])
  const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'values']))
  const tooMany = await raw('POST', '/threads/search', { extract: many })
  t.equal(tooMany.status, 422)
  t.match(JSON.parse(tooMany.text).detail[0], { type: 'too_long', loc: ['body', 'extract'], msg: 'Dictionary should have at most 10 items after validation, not 11' })
  t.equal((await raw('POST', '/threads/search', { extract: { a: 1 } })).status, 422, 'a path is a string')
})

// ---- threads.create supersteps ---------------------------------------------------------------

interface Recorded { name: string; graph: string; supersteps: { updates: { values: unknown; as_node: string }[] }[]; status: number; history: any[] }
const recording = JSON.parse(readFileSync(new URL('./fixtures/thread-contract/supersteps.json', import.meta.url), 'utf8')) as { server: object; scripts: Recorded[] }

/** A history (newest first) as a client compares it across servers: checkpoints by their position, messages by type and text. */
function normalise(history: any[]) {
  const position = new Map(history.map((s, i) => [s.checkpoint.checkpoint_id, i]))
  return history.map((s) => {
    const { messages = [], ...values } = s.values
    const parent = s.parent_checkpoint?.checkpoint_id ?? null
    return {
      source: s.metadata.source,
      step: s.metadata.step,
      next: s.next,
      parent: parent === null ? null : position.get(parent) ?? 'elsewhere',
      messages: messages.map((m: any) => [m.type, m.content]),
      values,
      tasks: s.tasks.map((task: any) => ({ name: task.name, result: task.result })),
    }
  })
}

t.test(`threads.create with supersteps records the history the real server records (${JSON.stringify(recording.server)})`, async (t) => {
  const { client } = await serve(t)
  for (const script of recording.scripts) {
    const thread = await client.threads.create({
      graphId: script.graph,
      supersteps: script.supersteps.map((s) => ({ updates: s.updates.map((u) => ({ values: u.values, asNode: u.as_node })) })),
    })
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 })
    t.same(normalise(history), normalise(script.history), script.name)
    t.equal(thread.status, 'idle', `${script.name}: the thread is idle`)
  }
})

t.test('a thread whose supersteps record an input shows the pending input and the state before it; bad supersteps are 400', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create({ graphId: 'agent', supersteps: [{ updates: [{ values: say('queued'), asNode: '__input__' }] }] })
  const state = await client.threads.getState(thread.thread_id)
  t.same(state.next, ['__start__'])
  t.same(state.metadata?.source, 'input')
  t.same(state.values, {}, 'the input is not applied yet')
  t.same((state.metadata as any).writes, { __start__: say('queued') }, 'the input is kept for __start__ (where a run\'s input step keeps it)')
  // A run without input consumes the pending input, as on the real server.
  const after = await client.runs.wait(thread.thread_id, 'agent', { input: null }) as { messages: { content: string }[] }
  t.same(after.messages.map((m) => m.content), ['queued', 'queued'])

  for (const [what, supersteps, detail] of [
    ['an __input__ without values', [{ updates: [{ values: null, asNode: '__input__' }] }], 'An __input__ update needs values: the input'],
    ['an __input__ beside another update', [{ updates: [{ values: say('a'), asNode: '__input__' }, { values: say('b'), asNode: 'agent' }] }], 'An __input__ update must be the only update of its superstep'],
    ['a superstep without updates', [{ updates: [] }], 'A superstep needs at least one update'],
  ] as const) {
    const id = crypto.randomUUID()
    await t.rejects(client.threads.create({ threadId: id, graphId: 'agent', supersteps: supersteps as never }), refused(400, { detail }), what)
    await t.rejects(client.threads.get(id), refused(404, { detail: `Thread with ID ${id} not found` }), `${what}: no thread is left behind`)
  }
})

t.test('a state update without as_node on a thread that never ran is the start\'s: next is the first node, and a run without input goes on', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create({ graphId: 'agent' })
  await client.threads.updateState(thread.thread_id, { values: say('given') })
  const state = await client.threads.getState(thread.thread_id)
  t.same([state.next, state.metadata?.source, state.metadata?.step], [['agent'], 'update', 0], 'as on the real server 1.5.1')
  const after = await client.runs.wait(thread.thread_id, 'agent', { input: null }) as { messages: { content: string }[] }
  t.same(after.messages.map((m) => m.content), ['given', 'given'])
})

// ---- runs.joinStream stream_mode ---------------------------------------------------------------

t.test('runs.joinStream with streamMode sends only those modes\' events (and the run\'s own metadata), live and replayed', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const waiting = someoneWaitsOn(clock)
  const run = await client.runs.create(thread.thread_id, 'pipeline', { input: say('topic'), streamMode: ['values', 'updates', 'custom'] })
  await waiting
  const live = collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ['updates'] })) as Promise<Part[]>
  const everything = collect(client.runs.joinStream(thread.thread_id, run.run_id)) as Promise<Part[]>
  await runClockUntil(clock, async () => (await client.runs.get(thread.thread_id, run.run_id)).status === 'success', 'the pipeline run succeeds')
  const all = await everything
  t.same(new Set(all.map((p) => p.event)), new Set(['metadata', 'values', 'updates', 'custom']), 'without streamMode: every event')
  const updates = await live
  t.same(updates.map((p) => p.event), ['metadata', 'updates', 'updates', 'updates'])
  t.same(updates, all.filter((p) => p.event === 'metadata' || p.event === 'updates'), 'the same events, ids and data as the whole stream')

  const replayed = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ['custom', 'values'], lastEventId: '-1' })) as Part[]
  t.same(replayed, all.filter((p) => ['metadata', 'custom', 'values'].includes(p.event)), 'several modes, replayed from the start')
  const none = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ['messages-tuple'], lastEventId: '-1' })) as Part[]
  t.same(none.map((p) => p.event), ['metadata'], 'a mode the run did not stream sends nothing of it')
})

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
