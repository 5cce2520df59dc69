// Subgraphs as LangGraph runs them, compared with what the real JS agent server streamed for the
// same graphs (test/fixtures/subgraphs/, README there): the shipped `supervisor` (two subagents run
// as subgraphs) and `nested_interrupt` (an interrupt raised inside a subgraph,
// test/fixtures/subgraphs/hangar/). Every stream mode with and without `stream_subgraphs`
// (namespaced event names, the brief `checkpoints` events, whole subgraph messages without it),
// the subgraphs' checkpoints in their namespaces, the state with `subgraphs`, resuming inside the
// subgraph, and the session protocol's namespaces.

import t from 'tap'
import { runClockUntil } from './helpers.js'
import { ALL_CHANNELS, command, readEvents, rootEnded, type WireEvent } from './protocol-helpers.js'
import { fixture, MODES, recorded, serve, sse, view } from './subgraphs/recordings.js'

const withoutIds = (ns: string) => ns.replace(/:[0-9a-f-]{36}/g, '')

t.test('supervisor: every stream mode, with and without stream_subgraphs, as the real server streams it', async (t) => {
  const { client, stream } = await serve(t)
  const input = fixture('supervisor').input
  for (const subgraphs of [true, false]) {
    for (const modes of [...MODES.map((m) => [m]), ...(subgraphs ? [['values', 'updates', 'messages-tuple']] : [])]) {
      const thread = await client.threads.create()
      const events = await stream(thread.thread_id, 'supervisor', { input }, modes, subgraphs)
      const [real] = recorded('supervisor', modes, subgraphs)
      t.same(events.map(view), real.map(view), `${modes.join('+')}${subgraphs ? ' with' : ' without'} subgraphs: same events in the same order`)
    }
  }
})

t.test('supervisor: each subgraph keeps its checkpoints in its namespace; the root history lists only its own', async (t) => {
  const { client, stream } = await serve(t)
  const thread = await client.threads.create()
  const events = await stream(thread.thread_id, 'supervisor', { input: fixture('supervisor').input }, 'updates', true)
  const namespaces = [...new Set(events.map((e) => e.event.split('|')[1]).filter(Boolean))]
  t.same(namespaces.map(withoutIds), ['researcher', 'writer'])
  const root = await client.threads.getHistory(thread.thread_id, { limit: 100 })
  t.same(root.map((c) => c.next), [[], ['writer'], ['researcher'], ['__start__']], 'root: steps -1..2, as recorded')
  const researcher = await client.threads.getHistory(thread.thread_id, { limit: 100, checkpoint: { checkpoint_ns: namespaces[0] } as any })
  t.same(researcher.map((c) => c.next), [[], ['summarize'], ['search'], ['__start__']], 'researcher: steps -1..2, as recorded')
  t.same(researcher.map((c) => c.checkpoint.checkpoint_ns), Array(4).fill(namespaces[0]))
  t.same(researcher.map((c) => (c.metadata as any).parents), Array(4).fill({ '': root[2].checkpoint.checkpoint_id }), 'their parent is the root checkpoint the node ran from')
  const writer = await client.threads.getHistory(thread.thread_id, { limit: 100, checkpoint: { checkpoint_ns: namespaces[1] } as any })
  t.same(writer.map((c) => c.next), [[], ['write'], ['__start__']])
  t.equal(namespaces[0], `researcher:${root[2].tasks[0].id}`, "the namespace is the node and the root task's id")
  const state = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true })
  t.same(state.tasks, [], 'a finished thread has no pending task, with or without subgraphs')
  t.same((state.values as any).messages.map((m: any) => m.content), ['Paris', 'Searching the web for Paris.', 'Summary: Paris has 2 sources.', 'Here is a report on Paris.'])
})

/** The run of nested_interrupt up to its interrupt, then resumed with "yes", in some modes. */
async function interruptAndResume(served: Awaited<ReturnType<typeof serve>>, modes: string[], subgraphs: boolean) {
  const { client, stream } = served
  const thread = await client.threads.create()
  const first = await stream(thread.thread_id, 'nested_interrupt', { input: fixture('nested_interrupt').input }, modes, subgraphs)
  const stopped = await client.threads.get(thread.thread_id)
  const resumed = await stream(thread.thread_id, 'nested_interrupt', { command: { resume: 'yes' } }, modes, subgraphs)
  return { thread: thread.thread_id, first, stopped, resumed }
}

t.test('nested_interrupt: an interrupt inside a subgraph, streamed and resumed as on the real server', async (t) => {
  const served = await serve(t)
  const cases: [string[], boolean][] = [...MODES.map((m): [string[], boolean] => [[m], true]), [['values', 'updates'], false], [['values', 'updates', 'messages-tuple'], true]]
  for (const [modes, subgraphs] of cases) {
    const { first, stopped, resumed } = await interruptAndResume(served, modes, subgraphs)
    const [realFirst, realResumed] = recorded('nested_interrupt', modes, subgraphs)
    const label = `${modes.join('+')}${subgraphs ? ' with' : ' without'} subgraphs`
    t.same(first.map(view), realFirst.map(view), `${label}: up to the interrupt`)
    t.equal(stopped.status, 'interrupted')
    t.same(Object.values(stopped.interrupts).flat().map((i) => i.value), [{ question: 'Publish the draft about cats?' }], `${label}: the thread shows the subgraph's interrupt`)
    t.same(resumed.map(view), realResumed.map(view), `${label}: resumed`)
  }
})

t.test('nested_interrupt: /wait, the state with and without subgraphs, and the resume', async (t) => {
  const served = await serve(t)
  const { client, clock } = served
  const thread = (await client.threads.create()).thread_id
  let answer: any
  void client.runs.wait(thread, 'nested_interrupt', { input: fixture('nested_interrupt').input }).then((a) => (answer = a))
  await runClockUntil(clock, () => answer !== undefined, 'the run stops')
  t.same(Object.keys(answer), ['__interrupt__'], 'the interrupt, without the values, as recorded')
  const interrupt = answer.__interrupt__[0]
  t.match(interrupt, { id: /^[0-9a-f]{32}$/, value: { question: 'Publish the draft about cats?' } })
  const threadRecord = await client.threads.get(thread)
  t.same(Object.values(threadRecord.interrupts).flat(), [interrupt], 'the same interrupt id at the root')
  t.same((threadRecord.values as any).messages.map((m: any) => m.type), ['human'], 'the root values: only the input, as recorded')

  const plain = await client.threads.getState(thread)
  t.same(plain.next, ['review_flow'])
  const [task] = plain.tasks as any[]
  t.same({ name: task.name, interrupts: task.interrupts, state: task.state }, { name: 'review_flow', interrupts: [interrupt], state: null })
  t.same(task.checkpoint, { thread_id: thread, checkpoint_ns: `review_flow:${task.id}` }, 'the task names its subgraph checkpoint')
  const expanded = await client.threads.getState(thread, undefined, { subgraphs: true })
  const inner = (expanded.tasks[0] as any).state
  t.equal((expanded.tasks[0] as any).checkpoint, null)
  t.same(inner.next, ['review'], "the subgraph's own state: waiting on review")
  t.same(inner.values.messages.map((m: any) => m.content), ['cats', 'Draft about cats.'])
  t.same(inner.tasks.map((x: any) => ({ name: x.name, interrupts: x.interrupts })), [{ name: 'review', interrupts: [interrupt] }])
  t.equal(inner.checkpoint.checkpoint_ns, `review_flow:${task.id}`)
  t.same(inner.checkpoint.checkpoint_map, { '': plain.checkpoint.checkpoint_id, [`review_flow:${task.id}`]: inner.checkpoint.checkpoint_id })
  t.equal(inner.metadata.step, 1)
  t.equal(inner.metadata.langgraph_node, 'review_flow')

  const real = fixture('nested_interrupt').wait
  const realState = JSON.parse(real.interrupted.find((e: any) => e.request.path.endsWith('/state?subgraphs=true')).response.body)
  const shape = (s: any): unknown => ({ next: s.next, tasks: s.tasks.map((x: any) => ({ name: x.name, path: x.path, interrupts: x.interrupts.length, checkpoint: x.checkpoint === null ? null : Object.keys(x.checkpoint), state: x.state === null ? null : shape(x.state) })), metadataKeys: ['step', 'source', 'langgraph_node', 'checkpoint_ns', 'parents'].filter((k) => k in s.metadata) })
  t.same(shape(expanded), shape(realState), 'the expanded state has the recorded shape')

  const done: any = await client.runs.wait(thread, 'nested_interrupt', { command: { resume: 'yes' } })
  t.same(done.messages.map((m: any) => m.content), ['cats', 'Draft about cats.', 'Reviewer said: yes', 'Published.'], 'resumed inside the subgraph: draft did not run again')
  t.equal((await client.threads.getHistory(thread)).length, 4, 'root steps -1..2 after the resume, as recorded')
})

/** What a client reads of a session-protocol event: its channel, the nodes of its namespace, and what happened. */
function protocolView(e: WireEvent): unknown {
  const data = e.params.data as any
  const at = [e.method, e.params.namespace.map((n) => n.split(':')[0])]
  switch (e.method) {
    case 'lifecycle': return [...at, data.event, data.graph_name]
    case 'tasks': return [...at, data.name, 'result' in data ? 'result' : 'start']
    case 'messages': return [...at, data.event]
    case 'updates': return [...at, e.params.node ?? null]
    case 'checkpoints': return [...at, data.step, data.source]
    case 'input.requested': return [...at, data.payload]
    case 'values': return [...at, Object.keys(data).filter((k) => !/^(topics|answer.*)$/.test(k)).sort()]
    default: return at
  }
}

for (const graph of ['supervisor', 'nested_interrupt', 'fanout', 'fanout_send', 'fanout_interrupt']) {
  t.test(`the session protocol, ${graph}: every task a namespace, a subgraph's events under its node's, as the real server sends them`, async (t) => {
    const { base, clock } = await serve(t)
    const run = fixture('protocol').runs.find((r: any) => r.graph === graph)
    const realBody = run.exchanges.find((e: any) => e.request.path.endsWith('/stream/events')).response.body
    const real = sse(realBody).map((e) => e.data as WireEvent)
    const responds = run.exchanges.filter((e: any) => e.request.body.includes('input.respond')).map((e: any) => JSON.parse(e.request.body))
    const threadId = crypto.randomUUID()
    const ends = 1 + responds.length
    let events: WireEvent[] | undefined
    const reading = readEvents(base, threadId, { channels: ALL_CHANNELS }, rootEnded(ends)).then((r) => (events = r.events))
    let seen: WireEvent[] = []
    const watch = readEvents(base, threadId, { channels: ['lifecycle', 'input'] }, (now) => {
      seen = now
      return rootEnded(ends)(now)
    })
    await command(base, threadId, { id: 1, method: 'run.start', params: { assistant_id: graph, input: run.input } })
    for (const respond of responds) {
      await runClockUntil(clock, () => rootEnded(1)(seen), `${graph} stops at its interrupt`, { stepMs: 10 })
      const asked = seen.filter((e) => e.method === 'input.requested').map((e) => (e.params.data as any).interrupt_id)
      // Answer as recorded, with this run's interrupt ids (one, or a list of responses for two).
      const params = respond.params.responses
        ? { responses: respond.params.responses.map((r: any, i: number) => ({ ...r, interrupt_id: asked[i] })) }
        : { ...respond.params, interrupt_id: asked[0] }
      const answer = await command(base, threadId, { ...respond, params })
      t.equal(answer.body.type, 'success', 'input.respond is accepted')
    }
    await runClockUntil(clock, () => events !== undefined, `${graph} ends`, { stepMs: 10 })
    await reading
    await watch
    t.same(events!.map(protocolView), real.map(protocolView), `${real.length} events: same channels, namespaces and order`)
  })
}
