// Subgraph checkpoints (namespaces `<node>:<task id>`) in the store and the thread routes, against
// what the real JS agent server answered (test/fixtures/subgraphs/, README there). The engine does
// not run subgraphs yet, so each test stores the recorded checkpoints through the real
// ThreadRepository (a second connection to hangar's database file) with the recorded ids and
// times, then reads them with the official SDK from a listening hangar.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { Client } from '@langchain/langgraph-sdk'
import type { CheckpointRecord } from '../src/agent/types.js'
import { Clock } from '../src/clock.js'
import { ThreadRepository } from '../src/store/threads.js'
import { API_KEY, serveApp } from './helpers.js'

interface Exchange { request: { method: string; path: string; body: string }; response: { status: number; body: string } }
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/subgraphs/${name}.json`, import.meta.url), 'utf8'))
const nested = fixture('nested_interrupt').wait as { thread_id: string; interrupted: Exchange[] }
const supervisor = fixture('supervisor').after_first_turn as { thread_id: string; exchanges: Exchange[] }

/** The recorded answer to a request (the body, when given, as sent). */
function recorded(exchanges: Exchange[], method: string, path: string, body?: unknown): any {
  const found = exchanges.find((e) => e.request.method === method && e.request.path.endsWith(path) && (body === undefined || e.request.body === JSON.stringify(body)))
  if (!found) throw new Error(`no recorded ${method} ${path}`)
  return JSON.parse(found.response.body)
}

const RESEARCHER = 'researcher:ec9f6e96-77e9-52b3-9cec-09f72ab90c30'
const WRITER = 'writer:59316155-6896-5be1-8a5e-d1ccc756afbc'
const REVIEW_FLOW = 'review_flow:78c51907-87e7-5037-b837-cb9fbcc3f951'
const supervisorHistory = (ns?: string) =>
  recorded(supervisor.exchanges, 'POST', '/history', ns === undefined ? { limit: 100 } : { limit: 100, checkpoint: { checkpoint_ns: ns } })
const nestedState = recorded(nested.interrupted, 'GET', '/state')
const nestedStateWithSubgraphs = recorded(nested.interrupted, 'GET', '/state?subgraphs=true')
const nestedHistory = recorded(nested.interrupted, 'POST', '/history')
const nestedThread = recorded(nested.interrupted, 'GET', `/threads/${nested.thread_id}`)

/** A recorded ThreadState as the engine hands it to the store (pending interrupts keyed by task). */
function recordOf(state: any): CheckpointRecord {
  return {
    checkpoint_id: state.checkpoint.checkpoint_id,
    parent_checkpoint_id: state.parent_checkpoint?.checkpoint_id ?? null,
    checkpoint_ns: state.checkpoint.checkpoint_ns,
    values: state.values,
    next: state.next,
    metadata: state.metadata,
    tasks: state.tasks,
    interrupts: Object.fromEntries(state.tasks.filter((task: any) => task.interrupts.length > 0).map((task: any) => [task.id, task.interrupts])),
  }
}

/**
 * hangar's ThreadState also carries the hosted server's `interrupts`, `checkpoint_id` and
 * `parent_checkpoint_id` (docs/agent-server-wire.md §5.1), the JS server's does not: dropped, in
 * nested states too, before comparing.
 */
function asJsServer(state: any): any {
  const { interrupts: _interrupts, checkpoint_id: _id, parent_checkpoint_id: _parent, ...rest } = state
  return { ...rest, tasks: rest.tasks.map((task: any) => (task.state ? { ...task, state: asJsServer(task.state) } : task)) }
}

/** A listening hangar with a file database, the SDK, and the real store on a second connection to that file. */
async function hangar(t: Test) {
  const db = join(t.testdir(), 'hangar.db')
  const { base, api } = await serveApp(t, { db })
  const raw = new Database(db)
  raw.pragma('foreign_keys = ON')
  raw.pragma('busy_timeout = 5000')
  t.teardown(() => raw.close())
  const seedClock = Clock.manual(0)
  const store = new ThreadRepository(raw, seedClock)
  const client = new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } })
  /** Creates the thread and stores the checkpoints, each at its recorded time, in this order. */
  const seed = async (threadId: string, states: any[]) => {
    await client.threads.create({ threadId })
    for (const state of states) {
      seedClock.set(Date.parse(state.created_at))
      store.addCheckpoint(store.get('', threadId)!, recordOf(state), null)
    }
    return store.get('', threadId)!
  }
  return { client, api, store, raw, seed }
}

/** The supervisor thread after its run: 4 root checkpoints, 4 of `researcher`, 3 of `writer`, stored as they were written. */
const supervisorCheckpoints = () => [...supervisorHistory(), ...supervisorHistory(RESEARCHER), ...supervisorHistory(WRITER)]
  .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))

/**
 * The nested_interrupt thread stopped inside its subgraph: root steps -1 and 0, and the subgraph's
 * step 1 (recorded) after an earlier one of its own (its step 0, as hangar would store it).
 */
function nestedCheckpoints() {
  const latest = nestedStateWithSubgraphs.tasks[0].state
  const earlier = {
    ...latest,
    values: { messages: latest.values.messages.slice(0, 1) },
    next: ['draft'],
    tasks: [{ id: '2b4a1c39-3d2e-5c55-9a4e-0f8f3c6f1e11', name: 'draft', error: null, interrupts: [], path: ['__pregel_pull', 'draft'], checkpoint: null, state: null, result: null }],
    metadata: { ...latest.metadata, step: 0 },
    created_at: '2026-11-25T23:20:45.070Z',
    checkpoint: { ...latest.checkpoint, checkpoint_id: latest.parent_checkpoint.checkpoint_id },
    parent_checkpoint: null,
  }
  return [...[...nestedHistory].reverse(), earlier, latest]
}

t.test('history lists the root graph\'s checkpoints only, as the real server does', async (t) => {
  const { client, seed } = await hangar(t)
  await seed(supervisor.thread_id, supervisorCheckpoints())
  const history = await client.threads.getHistory(supervisor.thread_id, { limit: 100 })
  t.equal(history.length, 4, '4 of the 11 checkpoints are the root graph\'s')
  t.strictSame(history.map(asJsServer), supervisorHistory())
})

t.test('history of a subgraph namespace lists that subgraph\'s checkpoints, newest first, each with its namespace and checkpoint map', async (t) => {
  const { client, seed } = await hangar(t)
  await seed(supervisor.thread_id, supervisorCheckpoints())
  for (const ns of [RESEARCHER, WRITER]) {
    const history = await client.threads.getHistory(supervisor.thread_id, { limit: 100, checkpoint: { checkpoint_ns: ns } })
    t.strictSame(history.map(asJsServer), supervisorHistory(ns), ns)
  }
  const [newest, second] = supervisorHistory(RESEARCHER)
  const one = await client.threads.getHistory(supervisor.thread_id, { checkpoint: { checkpoint_ns: RESEARCHER, checkpoint_id: second.checkpoint.checkpoint_id } })
  t.strictSame(one.map(asJsServer), [second], 'a namespace and an id: that checkpoint')
  const before = await client.threads.getHistory(supervisor.thread_id, { limit: 1, checkpoint: { checkpoint_ns: RESEARCHER }, before: newest.checkpoint.checkpoint_id as never })
  t.strictSame(before.map(asJsServer), [second], '`before` pages within the namespace')
})

t.test('history of a namespace without checkpoints is empty; a namespace that is not a string is a 422', async (t) => {
  const { client, api, seed } = await hangar(t)
  await seed(supervisor.thread_id, supervisorCheckpoints())
  t.strictSame(await client.threads.getHistory(supervisor.thread_id, { checkpoint: { checkpoint_ns: 'nope:1' } }), [])
  const wrong = await api.post(`/threads/${supervisor.thread_id}/history`, { checkpoint: { checkpoint_ns: 5 } })
  t.equal(wrong.status, 422)
  t.strictSame(wrong.body.detail.map((d: any) => d.loc), [['body', 'checkpoint', 'checkpoint_ns']])
})

t.test('the thread\'s values, interrupts and state stay the root graph\'s while a subgraph writes and amends checkpoints', async (t) => {
  const { client, store, seed } = await hangar(t)
  const [rootInput, rootStep0, ...sub] = nestedCheckpoints()
  const thread = await seed(nested.thread_id, [rootInput, rootStep0])
  const before = await client.threads.get(nested.thread_id)
  for (const state of sub) store.addCheckpoint(thread, recordOf(state), null)
  const amended = recordOf(sub[1])
  store.amendCheckpoint(thread, { ...amended, values: { messages: [] }, interrupts: {} }, null)
  const after = await client.threads.get(nested.thread_id)
  t.strictSame(after.values, nestedThread.values, 'the root graph\'s values')
  t.strictSame(after.interrupts, nestedThread.interrupts, 'the root graph\'s pending interrupt')
  t.strictSame(after, before, 'nothing of the thread moved, not even its times')
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id)), nestedState, 'its state is the root graph\'s latest checkpoint')
})

t.test('state with subgraphs shows the subgraph\'s latest state in the task that runs it, as recorded; without, the task names its namespace', async (t) => {
  const { client, seed } = await hangar(t)
  await seed(nested.thread_id, nestedCheckpoints())
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id)), nestedState)
  const state = await client.threads.getState(nested.thread_id, undefined, { subgraphs: true })
  t.strictSame(asJsServer(state), nestedStateWithSubgraphs)
  t.strictSame(state.tasks[0].checkpoint, null)
  const root = nestedState.checkpoint
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id, root.checkpoint_id, { subgraphs: true })), nestedStateWithSubgraphs, 'GET /state/{id}?subgraphs=true')
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id, root, { subgraphs: true })), nestedStateWithSubgraphs, 'POST /state/checkpoint with subgraphs')
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id, root)), nestedState, 'POST /state/checkpoint without')
  t.strictSame((await client.threads.getHistory(nested.thread_id)).map(asJsServer), nestedHistory, 'history never expands subgraphs')
})

t.test('a subgraph checkpoint is read by id or as its namespace\'s latest; named in another namespace it is not found', async (t) => {
  const { client, api, seed } = await hangar(t)
  await seed(nested.thread_id, nestedCheckpoints())
  const inner = nestedStateWithSubgraphs.tasks[0].state
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id, inner.checkpoint.checkpoint_id)), inner, 'by id')
  const latest = await client.threads.getState(nested.thread_id, { checkpoint_ns: REVIEW_FLOW } as never)
  t.strictSame(asJsServer(latest), inner, 'the namespace\'s latest')
  const elsewhere = await api.post(`/threads/${nested.thread_id}/state/checkpoint`, { checkpoint: { checkpoint_id: inner.checkpoint.checkpoint_id, checkpoint_ns: '' } })
  t.strictSame([elsewhere.status, elsewhere.body], [404, { detail: `Checkpoint ${inner.checkpoint.checkpoint_id} not found` }])
})

t.test('after the run, state with subgraphs is the plain state: no task is pending', async (t) => {
  const { client, seed } = await hangar(t)
  await seed(supervisor.thread_id, supervisorCheckpoints())
  const plain = recorded(supervisor.exchanges, 'GET', '/state')
  t.strictSame(asJsServer(await client.threads.getState(supervisor.thread_id)), plain)
  t.strictSame(asJsServer(await client.threads.getState(supervisor.thread_id, undefined, { subgraphs: true })), recorded(supervisor.exchanges, 'GET', '/state?subgraphs=true'))
})

t.test('a copy has every namespace\'s checkpoints; prune keep_latest keeps the subgraph a pending task runs; delete leaves no checkpoint', async (t) => {
  const { client, raw, seed } = await hangar(t)
  await seed(nested.thread_id, nestedCheckpoints())
  const copy = await client.threads.copy(nested.thread_id)
  // The copy's checkpoints keep their metadata (thread_id included); the refs name the copy.
  const copied = JSON.stringify(await client.threads.getState(copy.thread_id, undefined, { subgraphs: true }))
  t.equal(copied.split(`"thread_id":"${copy.thread_id}"`).length - 1, 4, 'the refs of both states name the copy')
  t.strictSame(asJsServer(JSON.parse(copied.replaceAll(copy.thread_id, nested.thread_id))), nestedStateWithSubgraphs, 'the same states, subgraph included')
  t.equal((await client.threads.getHistory(copy.thread_id, { checkpoint: { checkpoint_ns: REVIEW_FLOW } })).length, 2, 'both of the subgraph\'s')
  t.equal((await client.threads.getHistory(copy.thread_id)).length, 2, 'the root graph\'s two')

  await client.threads.prune([nested.thread_id], { strategy: 'keep_latest' })
  t.strictSame((await client.threads.getHistory(nested.thread_id)).map((s) => s.checkpoint.checkpoint_id), [nestedState.checkpoint.checkpoint_id])
  t.strictSame((await client.threads.getHistory(nested.thread_id, { checkpoint: { checkpoint_ns: REVIEW_FLOW } })).map((s) => s.checkpoint.checkpoint_id),
    [nestedStateWithSubgraphs.tasks[0].state.checkpoint.checkpoint_id], 'the interrupted subgraph keeps its latest checkpoint')
  t.strictSame(asJsServer(await client.threads.getState(nested.thread_id, undefined, { subgraphs: true })), nestedStateWithSubgraphs, 'the state reads as before')

  const copySeq = (raw.prepare('SELECT seq FROM threads WHERE thread_id = ?').get(copy.thread_id) as { seq: number }).seq
  await client.threads.delete(copy.thread_id)
  t.strictSame(raw.prepare('SELECT count(*) AS n FROM checkpoints WHERE thread_seq = ?').get(copySeq), { n: 0 }, 'the copy\'s checkpoints went with it')
})

t.test('prune keep_latest of a finished thread keeps no subgraph checkpoint', async (t) => {
  const { client, seed } = await hangar(t)
  await seed(supervisor.thread_id, supervisorCheckpoints())
  await client.threads.prune([supervisor.thread_id], { strategy: 'keep_latest' })
  t.equal((await client.threads.getHistory(supervisor.thread_id)).length, 1)
  for (const ns of [RESEARCHER, WRITER]) t.strictSame(await client.threads.getHistory(supervisor.thread_id, { checkpoint: { checkpoint_ns: ns } }), [], ns)
})

t.test('a run starts from the root graph\'s latest checkpoint, not from a newer subgraph one, and only its root checkpoints move the thread', async (t) => {
  const { client, store } = await hangar(t)
  const thread = await client.threads.create()
  await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'one' }] } })
  const rootLatest = (await client.threads.getState(thread.thread_id)).checkpoint.checkpoint_id!
  store.addCheckpoint(store.get('', thread.thread_id)!, {
    checkpoint_id: '1f1e926d-0000-6000-8000-000000000001', parent_checkpoint_id: null, checkpoint_ns: 'inner:1',
    values: { messages: [] }, next: [], metadata: { source: 'loop', step: 0, parents: { '': rootLatest } }, tasks: [], interrupts: {},
  }, null)
  const values = await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'two' }] } }) as any
  t.equal(values.messages.length, 4, 'the second run went on from the first run\'s messages')
  const history = await client.threads.getHistory(thread.thread_id, { limit: 100 })
  const input = history.find((s) => s.metadata?.source === 'input' && s.parent_checkpoint !== null)!
  t.equal(input.parent_checkpoint?.checkpoint_id, rootLatest, 'its input checkpoint is a child of the root graph\'s latest')
  t.strictSame((await client.threads.get(thread.thread_id)).values, values)
})
