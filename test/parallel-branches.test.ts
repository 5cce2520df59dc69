// Parallel branches as LangGraph runs them, compared with what the real JS agent server streamed
// for the same graphs (test/fixtures/subgraphs/, versions and how to record again in its README):
// `fanout` (two nodes in one superstep streaming a word every 10 ms, then a join), `fanout_send`
// (one Send per topic) and `fanout_interrupt` (two interrupts pending at once, resumed by an id
// map or by one answer for both). hangar's equivalents are test/fixtures/subgraphs/hangar/*.json;
// each stream mode is projected onto what a client reads of it (test/subgraphs/recordings.ts).

import t from 'tap'
import { runClockUntil } from './helpers.js'
import { fixture, MODES, recorded, serve, view } from './subgraphs/recordings.js'

for (const graph of ['fanout', 'fanout_send']) {
  t.test(`${graph}: every stream mode as the real server streams it`, async (t) => {
    const { client, stream } = await serve(t)
    const input = fixture(graph).input
    for (const mode of MODES) {
      const thread = await client.threads.create()
      const events = await stream(thread.thread_id, graph, { input }, mode)
      const [real] = recorded(graph, [mode])
      t.same(events.map(view), real.map(view), `${mode}: same events, nodes, tasks and checkpoints, in the same order`)
    }
  })
}

t.test('fanout: the branches stream word by word in turn, and their writes merge in task order', async (t) => {
  const { client, stream } = await serve(t)
  const thread = await client.threads.create()
  const events = await stream(thread.thread_id, 'fanout', { input: fixture('fanout').input }, 'messages-tuple')
  const chunks = events.filter((e) => e.event === 'messages' && e.data[0].type === 'AIMessageChunk')
  t.same(chunks.map((e) => e.data[1].langgraph_node), ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'], 'a, b, a, b… on the clock, as recorded')
  t.same(chunks.filter((e) => e.data[1].langgraph_node === 'a').map((e) => e.data[0].content).join(''), 'Branch a looked at cats.')
  const state = await client.threads.getState(thread.thread_id)
  t.same((state.values as any).results, ['a: cats', 'b: cats'], 'the append reducer took a then b')
  t.same((state.values as any).messages.map((m: any) => m.content.slice(0, 8)), ['cats', 'Branch a', 'Branch b', 'Joined: '])
  const history = await client.threads.getHistory(thread.thread_id)
  t.same(history.map((c) => c.next), [[], ['join'], ['a', 'b'], ['__start__']], 'one checkpoint per superstep; join runs once')
})

t.test('fanout_send: one task per Send, each with its own input, listed twice in next', async (t) => {
  const { client, stream } = await serve(t)
  const thread = await client.threads.create()
  await stream(thread.thread_id, 'fanout_send', { input: fixture('fanout_send').input }, 'updates')
  const history = await client.threads.getHistory(thread.thread_id)
  const sent = history.find((c) => c.next.includes('research'))!
  t.same(sent.next, ['research', 'research'])
  t.same(sent.tasks.map((task) => (task as any).path), [['__pregel_push', 0, false], ['__pregel_push', 1, false]], 'push paths, as recorded')
  t.not(sent.tasks[0].id, sent.tasks[1].id, 'two tasks of one node have two ids')
  t.same((history[0].values as any).results, ['researched cats', 'researched dogs'])
})

t.test('fanout_interrupt: two interrupts at once, resumed by an id map', async (t) => {
  const { client, stream } = await serve(t)
  const input = fixture('fanout_interrupt').input
  for (const mode of MODES) {
    const thread = await client.threads.create()
    const first = await stream(thread.thread_id, 'fanout_interrupt', { input }, mode)
    const [realFirst, realResumed] = recorded('fanout_interrupt', [mode])
    t.same(first.map(view), realFirst.map(view), `${mode}: up to the two interrupts as recorded`)
    const { interrupts } = await client.threads.get(thread.thread_id)
    const pending = Object.values(interrupts).flat()
    t.same(pending.map((i) => (i.value as any).branch), ['a', 'b'], `${mode}: the thread lists both, one per task`)
    t.equal(Object.keys(interrupts).length, 2)
    const resume = { [pending[0].id!]: 'approve a', [pending[1].id!]: 'reject b' }
    const resumed = await stream(thread.thread_id, 'fanout_interrupt', { command: { resume } }, mode)
    t.same(resumed.map(view), realResumed.map(view), `${mode}: resumed as recorded`)
    const state = await client.threads.getState(thread.thread_id)
    t.same((state.values as any).results, ['a: approve a', 'b: reject b'], `${mode}: each task got its own answer`)
  }
})

t.test('fanout_interrupt by /wait: only the last interrupt is answered; one plain answer resumes both', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const waiting = client.runs.wait(thread.thread_id, 'fanout_interrupt', { input: fixture('fanout_interrupt').input })
  let answer: any
  void waiting.then((a) => (answer = a))
  await runClockUntil(clock, () => answer !== undefined, 'the run stops')
  t.same(answer.__interrupt__.map((i: any) => i.value.branch), ['b'], 'as on the real server: only the last one')
  const stopped = await client.threads.get(thread.thread_id)
  t.equal(stopped.status, 'interrupted')
  t.equal(Object.values(stopped.interrupts).flat().length, 2, 'the thread still has both')
  const done = await client.runs.wait(thread.thread_id, 'fanout_interrupt', { command: { resume: 'yes' } })
  t.same((done as any).results, ['a: yes', 'b: yes'], 'one answer for both, as on the real server')
  t.equal((await client.threads.get(thread.thread_id)).status, 'idle')
})

t.test('an id map that answers one of two interrupts: that task runs, the other asks again; the checkpoint keeps the writes', async (t) => {
  const { client, stream } = await serve(t)
  const thread = await client.threads.create()
  await stream(thread.thread_id, 'fanout_interrupt', { input: fixture('fanout_interrupt').input }, 'updates')
  const [a, b] = Object.values((await client.threads.get(thread.thread_id)).interrupts).flat()
  const resumed = await stream(thread.thread_id, 'fanout_interrupt', { command: { resume: { [a.id!]: 'only a' } } }, 'updates')
  t.same(resumed.map((e) => e.event === 'updates' ? Object.keys(e.data)[0] : e.event), ['metadata', 'ask_a', '__interrupt__'], 'a ran with its answer; b, not named, asked again')
  const paused = await client.threads.getState(thread.thread_id)
  t.same(paused.next, ['ask_b'], 'only the interrupted task is still to run')
  t.same((paused.values as any).results, ['a: only a'], "the values include a's writes")
  t.same(Object.values((await client.threads.get(thread.thread_id)).interrupts).flat().map((i) => i.id), [b.id], 'b keeps its interrupt id')
  const last = await stream(thread.thread_id, 'fanout_interrupt', { command: { resume: 'b at last' } }, 'updates')
  t.same(last.filter((e) => e.event === 'updates').map((e) => Object.keys(e.data)[0]), ['ask_b', 'join'], 'b ran, a did not run again, then join')
  t.same(((await client.threads.getState(thread.thread_id)).values as any).results, ['a: only a', 'b: b at last'])
  t.equal((await client.threads.getHistory(thread.thread_id)).length, 4, 'steps -1, 0, 1, 2: the paused step wrote no checkpoint of its own')
})

t.test('the shipped parallel_approval: two structured approval requests at once, answered together by interrupt id', async (t) => {
  const { client, clock } = await serve(t)
  const thread = (await client.threads.create()).thread_id
  let stopped: any
  void client.runs.wait(thread, 'parallel_approval', { input: { messages: [{ type: 'human', content: 'a new laptop' }] } }).then((a) => (stopped = a))
  await runClockUntil(clock, () => stopped !== undefined, 'both reviews ask')
  const pending = Object.values((await client.threads.get(thread)).interrupts).flat()
  t.same(pending.map((i: any) => i.value[0].description), ['Legal: may we go ahead with this request?', 'Finance: is this within budget?'])
  t.same(pending.map((i: any) => i.value[0].action_request), [{ action: 'legal_review', args: { request: 'a new laptop' } }, { action: 'finance_review', args: { request: 'a new laptop' } }])
  const [legal, finance] = pending
  const approved: any = await client.runs.wait(thread, 'parallel_approval', { command: { resume: { [legal.id!]: [{ type: 'accept' }], [finance.id!]: [{ type: 'accept' }] } } })
  t.equal(approved.messages.at(-1).content, 'Approved by legal and finance: a new laptop can go ahead.')

  const other = (await client.threads.create()).thread_id
  let asked: any
  void client.runs.wait(other, 'parallel_approval', { input: { messages: [{ type: 'human', content: 'a yacht' }] } }).then((a) => (asked = a))
  await runClockUntil(clock, () => asked !== undefined, 'both reviews ask')
  const [l, f] = Object.values((await client.threads.get(other)).interrupts).flat()
  const refused: any = await client.runs.wait(other, 'parallel_approval', { command: { resume: { [l.id!]: [{ type: 'accept' }], [f.id!]: [{ type: 'ignore' }] } } })
  t.equal(refused.messages.at(-1).content, 'Not approved: legal answered accept, finance answered ignore.', 'the script branches on each answer')
})
