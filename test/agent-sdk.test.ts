// The agent server driven by the official JS SDK (@langchain/langgraph-sdk), unmodified, against a
// real listening hangar — what a frontend does.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { Config } from '../src/config.js'
import { runClockUntil, serveApp, someoneWaitsOn } from './helpers.js'

async function serve(t: Test, config: Partial<Config> = {}) {
  const { app, clock, base: apiUrl } = await serveApp(t, config)
  const client = new Client({ apiUrl, apiKey: 'test-key', callerOptions: { maxRetries: 0 } })
  return { app, clock, client, apiUrl }
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of stream) out.push(item)
  return out
}

type Part = { event: string; data: any; id?: string }

t.test('runs.stream yields metadata first, then updates, values and token chunks of the echoed message', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  let created: { run_id: string; thread_id?: string } | undefined
  const parts = await collect(client.runs.stream(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'hello there friend' }] },
    streamMode: ['updates', 'values', 'messages-tuple'],
    onRunCreated: (meta) => (created = meta),
  })) as Part[]

  t.equal(parts[0].event, 'metadata')
  t.same(Object.keys(parts[0].data), ['run_id', 'attempt'])
  t.equal(parts[0].data.attempt, 1)
  t.same(created, { run_id: parts[0].data.run_id, thread_id: thread.thread_id }, 'the run id comes from Content-Location')
  t.same(parts.map((p) => p.id), parts.map((_, i) => String(i)), 'ids count from 0')

  const names = parts.map((p) => p.event)
  t.same([...new Set(names)], ['metadata', 'values', 'messages', 'updates'])
  t.equal(names.at(-1), 'values', 'the final state comes last')
  const chunks = parts.filter((p) => p.event === 'messages')
  t.equal(chunks.map((p) => p.data[0].content).join(''), 'hello there friend', 'the chunks concatenate to the reply')
  t.ok(chunks.every((p) => p.data[0].id === chunks[0].data[0].id), 'every chunk carries the message id')
  t.equal(chunks[0].data[1].langgraph_node, 'agent')
  const update = parts.find((p) => p.event === 'updates')!.data
  t.same(Object.keys(update), ['agent'])
  const final = parts.at(-1)!.data
  t.same(final.messages.map((m: any) => [m.type, m.content]), [['human', 'hello there friend'], ['ai', 'hello there friend']])

  const state = await client.threads.getState(thread.thread_id)
  t.same(state.values, final, 'the thread state after the run is the final values')
  t.same(state.next, [])
  const stored = await client.threads.get(thread.thread_id)
  t.equal(stored.status, 'idle')
})

t.test('joinStream with a last event id replays exactly the events after it', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const all = await collect(client.runs.stream(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'one two three four' }] },
    streamMode: ['values', 'messages-tuple'],
    streamResumable: true,
  })) as Part[]
  const runId = all[0].data.run_id
  const replayed = await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: '2' })) as Part[]
  t.same(replayed, all.slice(3), 'ids 3.. with the same events and data')
  const everything = await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: '-1' })) as Part[]
  t.same(everything, all, '-1 replays from the start')
  const nothing = await collect(client.runs.joinStream(thread.thread_id, runId)) as Part[]
  t.same(nothing, [], 'without an id, a finished run has nothing more')
})

t.test('a background run can be joined live from its start, and waited on', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const waiting = someoneWaitsOn(clock)
  const run = await client.runs.create(thread.thread_id, 'pipeline', { input: { messages: [{ role: 'user', content: 'topic' }] }, streamMode: ['custom', 'values'] })
  t.equal(run.status, 'pending')
  await waiting
  const joined = collect(client.runs.joinStream(thread.thread_id, run.run_id)) as Promise<Part[]>
  const result = client.runs.join(thread.thread_id, run.run_id)
  await runClockUntil(clock, async () => (await client.runs.get(thread.thread_id, run.run_id)).status === 'success', 'the background run succeeds')
  const parts = await joined
  t.equal(parts[0].event, 'metadata', 'joined from the start: nothing was missed')
  t.same(parts.filter((p) => p.event === 'custom').length, 3, 'one progress event per node')
  const values = (await result) as any
  t.same(values, parts.at(-1)!.data, 'join answers the final values')
  t.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success')
})

t.test('runs.wait answers the final values; a failing graph throws the error the SDK reads from __error__', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const values = await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'ping' }] } }) as any
  t.equal(values.messages.at(-1).content, 'ping')
  await t.rejects(
    client.runs.wait(thread.thread_id, 'flaky', { input: { messages: [{ role: 'user', content: 'please fail now' }] } }),
    { message: 'FlakyError: The flaky graph failed on request: please fail now' },
  )
  t.equal((await client.threads.get(thread.thread_id)).status, 'error')
  const stateless = await client.runs.wait(null, 'agent', { input: { messages: [{ role: 'user', content: 'no thread' }] } }) as any
  t.equal(stateless.messages.at(-1).content, 'no thread', 'a stateless run waits too')
})

t.test('a failing run streams an error event last, and no feedback', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const parts = await collect(client.runs.stream(thread.thread_id, 'flaky', {
    input: { messages: [{ role: 'user', content: 'hi' }] },
    config: { configurable: { fail: true } },
    feedbackKeys: ['thumbs'],
  })) as Part[]
  t.equal(parts.at(-1)!.event, 'error')
  t.same(parts.at(-1)!.data, { error: 'FlakyError', message: 'The flaky graph failed on request: hi' })
  t.notOk(parts.some((p) => p.event === 'feedback'))
  const runs = await client.runs.list(thread.thread_id)
  t.equal(runs[0].status, 'error')
})

t.test('an interrupt pauses the thread; a run with command.resume finishes it', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const first = await collect(client.runs.stream(thread.thread_id, 'approval', {
    input: { messages: [{ role: 'user', content: 'deploy to prod' }] },
    streamMode: ['updates', 'values'],
  })) as Part[]
  const interrupt = first.find((p) => p.event === 'updates' && '__interrupt__' in p.data)!.data.__interrupt__
  t.same(interrupt[0].value, { question: 'Approve this request?', request: 'deploy to prod' })
  t.match(interrupt[0].id, /^[0-9a-f]{32}$/)
  const paused = await client.threads.get(thread.thread_id)
  t.equal(paused.status, 'interrupted')
  t.same(Object.values(paused.interrupts).flat().map((i: any) => i.value.question), ['Approve this request?'])
  t.same((await client.threads.getState(thread.thread_id)).next, ['ask'])
  const [run] = await client.runs.list(thread.thread_id)
  t.same(await client.runs.join(thread.thread_id, run.run_id), { __interrupt__: interrupt }, 'joined after it ended, the run answers its interrupt, as on the real server')

  const resumed = await collect(client.runs.stream(thread.thread_id, 'approval', { command: { resume: 'yes' }, streamMode: ['values'] })) as Part[]
  const final = resumed.at(-1)!.data
  t.equal(final.answer, 'yes')
  t.equal(final.messages.at(-1).content, 'You answered: yes')
  const done = await client.threads.get(thread.thread_id)
  t.equal(done.status, 'idle')
  t.same(done.interrupts, {})
})

t.test('runs.cancel stops a running run: it ends interrupted, its stream just ends (a rollback ends it with an error)', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const waiting = someoneWaitsOn(clock)
  const streaming = collect(client.runs.stream(thread.thread_id, 'pipeline', { input: { messages: [{ role: 'user', content: 'x' }] }, streamMode: ['custom'] })) as Promise<Part[]>
  await waiting
  const [run] = await client.runs.list(thread.thread_id)
  t.equal(run.status, 'running')
  await client.runs.cancel(thread.thread_id, run.run_id, true)
  const parts = await streaming
  t.same(parts.map((p) => p.event), ['metadata'], 'the stream ends after what the run sent, with no error (as on the real server 1.5.1)')
  t.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted')
  t.equal((await client.threads.get(thread.thread_id)).status, 'idle')
  t.equal(clock.listenerCount('change'), 0, 'no delay is left waiting')

  const other = await client.threads.create()
  const waitingAgain = someoneWaitsOn(clock)
  const rolledBack = collect(client.runs.stream(other.thread_id, 'pipeline', { input: { messages: [{ role: 'user', content: 'y' }] }, streamMode: ['custom'] })) as Promise<Part[]>
  await waitingAgain
  const [second] = await client.runs.list(other.thread_id)
  await client.runs.cancel(other.thread_id, second.run_id, true, 'rollback')
  t.same((await rolledBack).at(-1)?.event === 'error' && (await rolledBack).at(-1)!.data, { error: 'Error', message: 'rollback' }, 'a rolled-back run\'s stream ends with the rollback error')
})

t.test('multitask: reject answers 422 while busy; enqueue runs after; interrupt cancels the running one', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const waiting = someoneWaitsOn(clock)
  const first = await client.runs.create(thread.thread_id, 'pipeline', { input: { messages: [{ role: 'user', content: 'a' }] } })
  await waiting
  await t.rejects(client.runs.create(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'b' }] } }),
    /HTTP 422.*Thread is already running a task/)
  const queued = await client.runs.create(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'c' }] }, multitaskStrategy: 'enqueue' })
  t.equal(queued.status, 'pending')
  const interrupting = await client.runs.create(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'd' }] }, multitaskStrategy: 'interrupt' })
  await client.runs.join(thread.thread_id, interrupting.run_id)
  const statuses = Object.fromEntries((await client.runs.list(thread.thread_id)).map((r) => [r.run_id, r.status]))
  t.same(statuses, { [first.run_id]: 'interrupted', [queued.run_id]: 'interrupted', [interrupting.run_id]: 'success' })
  const state = await client.threads.getState(thread.thread_id)
  t.equal((state.values as any).messages.at(-1).content, 'd')
})

t.test('an enqueued run sees the state its predecessor left', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  await client.runs.create(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'first' }] } })
  const second = await client.runs.create(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'second' }] }, multitaskStrategy: 'enqueue' })
  const values = await client.runs.join(thread.thread_id, second.run_id) as any
  t.same(values.messages.map((m: any) => m.content), ['first', 'first', 'second', 'second'])
})

t.test('unknown threads are 404 unless if_not_exists is create; history is newest first', async (t) => {
  const { client } = await serve(t)
  const id = '5b5b5b5b-0000-4000-8000-000000000001'
  await t.rejects(client.runs.wait(id, 'agent', { input: {} }), /HTTP 404.*Thread with ID/)
  const values = await client.runs.wait(id, 'agent', { input: { messages: [{ role: 'user', content: 'made' }] }, ifNotExists: 'create' }) as any
  t.equal(values.messages.length, 2)
  const history = await client.threads.getHistory(id)
  t.ok(history.length >= 3)
  t.same(history.map((s) => (s.metadata as any).step), [...history.map((s) => (s.metadata as any).step)].sort((a, b) => b - a), 'newest first')
  t.equal((history.at(-1)!.metadata as any).source, 'input')
  t.same(history[0].next, [])
})

t.test('assistants.search and threads.search work through the SDK', async (t) => {
  const { client } = await serve(t)
  const assistants = await client.assistants.search({ graphId: 'agent' })
  t.same(assistants.map((a) => a.name), ['agent'])
  const paged = await client.assistants.search({ limit: 1, includePagination: true })
  t.equal(paged.assistants.length, 1)
  t.equal(paged.next, '1')
  await client.threads.create({ metadata: { user: 'u' } })
  t.equal((await client.threads.search({ metadata: { user: 'u' } })).length, 1)
})

t.test('a client that disconnects mid-run does not stop it; its log is complete afterwards', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const controller = new AbortController()
  const waiting = someoneWaitsOn(clock)
  const seen: Part[] = []
  const reading = (async () => {
    for await (const part of client.runs.stream(thread.thread_id, 'pipeline', {
      input: { messages: [{ role: 'user', content: 'go' }] }, streamMode: ['custom', 'values'], signal: controller.signal,
    })) {
      seen.push(part as Part)
    }
  })().catch(() => {})
  await waiting
  controller.abort()
  await reading
  const [run] = await client.runs.list(thread.thread_id)
  await runClockUntil(clock, async () => (await client.runs.get(thread.thread_id, run.run_id)).status !== 'running', 'the run stops running')
  t.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success', 'the run finished without its reader')
  const log = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '-1' })) as Part[]
  t.equal(log[0].event, 'metadata')
  t.equal(log.filter((p) => p.event === 'custom').length, 3, 'every event was logged')
  t.ok(seen.length < log.length, 'the reader had seen only part of it')
})
