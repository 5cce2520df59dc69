import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Clock } from '../src/clock.js'
import { FixtureError } from '../src/fixtures.js'
import { interruptId, taskId } from '../src/agent/checkpoints.js'
import { createEngine, GraphError } from '../src/agent/engine.js'
import type { CheckpointRecord, EngineOutput, GraphEngine, PausedAt, RunRequest } from '../src/agent/types.js'
import { SHIPPED_GRAPHS, turn, until, waitsOnClock } from './helpers.js'

const GRAPHS = join(import.meta.dirname, '..', 'fixtures', 'graphs')
const IDS = {
  run_id: '0193a0a0-0000-7000-8000-000000000001',
  thread_id: '11111111-1111-4111-8111-111111111111',
  assistant_id: 'fe096781-5601-53d2-b2f6-0d3403f7e9ca',
  graph_id: 'agent',
}
const MODES = ['values', 'updates', 'messages-tuple', 'custom']

interface Timed {
  at: number
  output: EngineOutput
}

const human = (content: string, id: string) => ({
  content, additional_kwargs: {}, response_metadata: {}, type: 'human', name: null, id, example: false,
})
const ai = (content: string, id: string) => ({
  content, additional_kwargs: {}, response_metadata: {}, type: 'ai', name: null, id, example: false,
  tool_calls: [], invalid_tool_calls: [], usage_metadata: null,
})
const chunk = (content: string, id: string) => ({ ...ai(content, id), type: 'AIMessageChunk', tool_call_chunks: [] })

function request(clock: Clock, over: Partial<RunRequest> = {}): RunRequest {
  const graphId = over.graphId ?? 'agent'
  const ids = { ...IDS, graph_id: graphId }
  return {
    graphId,
    start: null,
    forked: false,
    interruptBefore: [],
    interruptAfter: [],
    input: null,
    command: null,
    config: { configurable: { ...ids, 'user-agent': 'tap' }, metadata: { created_by: 'system' } },
    streamModes: MODES,
    protocol: false,
    subgraphs: false,
    ids,
    clock,
    signal: new AbortController().signal,
    ...over,
  }
}

/** An output as the single events it carries (a stream mode's events travel up together, as `emits`). */
const flat = (output: EngineOutput): EngineOutput[] =>
  output.kind === 'emits'
    ? output.list.map((item): EngineOutput => ('protocol' in item ? { kind: 'protocol', event: item.protocol } : { kind: 'emit', event: item.event, data: item.data }))
    : [output]

/** Runs the generator to its end, moving the clock by `step` ms whenever the run waits on it; each event in `seen` alone. */
async function drive(clock: Clock, outputs: AsyncIterable<EngineOutput>, step = 50): Promise<Timed[]> {
  const start = clock.now()
  const seen: Timed[] = []
  const iterator = outputs[Symbol.asyncIterator]()
  for (;;) {
    let settled = false
    const next = iterator.next().finally(() => (settled = true))
    for (let guard = 0; !settled; guard++) {
      await turn()
      if (settled) break
      if (clock.listenerCount('change') === 0 || guard > 100_000) throw new Error('the run waits on something other than the clock')
      clock.advance(step)
    }
    const result = await next
    if (result.done) return seen
    for (const output of flat(result.value)) seen.push({ at: clock.now() - start, output })
  }
}

const emits = (timed: Timed[]) =>
  timed.flatMap(({ output }) => (output.kind === 'emit' ? [{ event: output.event, data: output.data }] : []))
const checkpoints = (timed: Timed[]) =>
  timed.flatMap(({ output }) => (output.kind === 'checkpoint' ? [output.checkpoint] : []))
/** Stored checkpoints the run rewrote (a pending task settled), in order. */
const amended = (timed: Timed[]) =>
  timed.flatMap(({ output }) => (output.kind === 'amend' ? [output.checkpoint] : []))
const done = (timed: Timed[]) => {
  const last = timed.at(-1)!.output
  if (last.kind !== 'done') throw new Error(`the last output is ${last.kind}`)
  return last
}

/** A thread as the run manager keeps it: its checkpoints (amended as runs settle their tasks) and where it is paused. */
class Thread {
  readonly history: CheckpointRecord[] = []
  pausedAt: PausedAt | null = null
  constructor(readonly engine: GraphEngine, readonly clock: Clock, readonly graphId: string) {}

  async run(over: Partial<RunRequest>): Promise<Timed[]> {
    const latest = this.history.at(-1)
    const timed = await drive(this.clock, this.engine.run(request(this.clock, {
      graphId: this.graphId,
      start: latest ? { ...latest, pausedAt: this.pausedAt } : null,
      ...over,
    })))
    for (const { output } of timed) {
      if (output.kind === 'checkpoint') this.history.push(output.checkpoint)
      if (output.kind === 'amend') this.history[this.history.findIndex((c) => c.checkpoint_id === output.checkpoint.checkpoint_id)] = output.checkpoint
    }
    this.pausedAt = done(timed).pausedAt
    return timed
  }
}

const engine = createEngine(GRAPHS)
const say = (content: string, id = 'h1') => ({ messages: [{ role: 'user', content, id }] })

t.test('the shipped graphs are listed in file-name order', async (t) => {
  t.same(engine.graphs().map((g) => g.graph_id), [...SHIPPED_GRAPHS])
  t.equal(engine.info('nope'), undefined)
  t.match(engine.info('agent')!.description, /Echo/)
})

t.test('a graph draws as a line from __start__ through its nodes to __end__, its edges sorted by source as LangGraph JS sorts them', async (t) => {
  const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema' }
  const runnable = (name: string) => ({ id: name, type: 'runnable', data: { id: ['langgraph', 'RunnableCallable'], name }, metadata: {} })
  t.same(engine.info('pipeline')!.drawable, {
    nodes: [{ id: '__start__', type: 'schema', data: schema }, runnable('research'), runnable('draft'), runnable('review'),
      { id: '__end__', type: 'schema', data: schema }],
    edges: [
      { source: '__start__', target: 'research', conditional: false },
      { source: 'draft', target: 'review', conditional: false },
      { source: 'research', target: 'draft', conditional: false },
      { source: 'review', target: '__end__', conditional: false },
    ],
  })
})

t.test('a graph\'s schemas come from its state keys: messages is a list of objects, others anything', async (t) => {
  const schemas = engine.info('approval')!.schemas
  const state = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { messages: { type: 'array', items: { type: 'object' } }, answer: {} },
    additionalProperties: false,
  }
  t.same(schemas, {
    graph_id: 'approval', input_schema: state, output_schema: state, state_schema: state,
    config_schema: { $schema: state.$schema, type: 'object', properties: {} },
    context_schema: { $schema: state.$schema, type: 'object', properties: {} },
  })
  t.same((engine.info('flaky')!.schemas.config_schema as { properties: object }).properties, { fail: {} }, 'the configurable keys a graph reads')
})

t.test('the agent graph echoes the last human message as values, updates and token messages', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('Hello there friend') })))
  const [input, applied, after] = checkpoints(timed)
  const events = emits(timed)
  const aiId = (events[1].data as [{ id: string }])[0].id
  t.match(aiId, /^run-[0-9a-f]{8}-[0-9a-f]{4}-7/, 'the reply id is run-<uuid7>')
  const task = taskId(applied.checkpoint_id, 'agent')
  const ns = `agent:${task}`
  const meta = {
    tags: [], created_by: 'system', ...IDS, 'user-agent': 'tap',
    langgraph_step: 1, langgraph_node: 'agent', langgraph_triggers: ['branch:to:agent'], langgraph_path: ['__pregel_pull', 'agent'],
    langgraph_checkpoint_ns: ns, checkpoint_ns: ns, ls_provider: 'hangar', ls_model_name: 'hangar-scripted', ls_model_type: 'chat',
  }
  const h = human('Hello there friend', 'h1')
  const a = ai('Hello there friend', aiId)
  t.same(events, [
    { event: 'values', data: { messages: [h] } },
    { event: 'messages', data: [chunk('Hello', aiId), meta] },
    { event: 'messages', data: [chunk(' there', aiId), meta] },
    { event: 'messages', data: [chunk(' friend', aiId), meta] },
    { event: 'updates', data: { agent: { messages: [a] } } },
    { event: 'values', data: { messages: [h, a] } },
  ])
  t.same(after.values, { messages: [h, a] })
  t.equal(input.metadata.source, 'input')
  t.same(done(timed), { kind: 'done', status: 'success', values: { messages: [h, a] }, pausedAt: null, error: null })
  t.ok(timed.every(({ at }) => at === 0), 'no delay at all')
})

t.test('the token chunks of a reply concatenate to the reply, spaces included', async (t) => {
  const clock = Clock.manual()
  const text = '  Many   spaces, and a tab\there.  '
  const timed = await drive(clock, engine.run(request(clock, { input: say(text) })))
  const pieces = emits(timed).filter((e) => e.event === 'messages').map((e) => (e.data as [{ content: string }])[0].content)
  t.equal(pieces.join(''), text)
  t.ok(pieces.length > 4, 'one chunk per word')
})

t.test('a run writes an input checkpoint, one after the input and one per node, chained and numbered', async (t) => {
  const clock = Clock.manual(Date.UTC(2025, 5, 1))
  const timed = await drive(clock, engine.run(request(clock, { input: say('hi') })))
  const [input, applied, after] = checkpoints(timed)
  t.same([input, applied, after].map((c) => c.metadata.step), [-1, 0, 1])
  t.same([input, applied, after].map((c) => c.metadata.source), ['input', 'loop', 'loop'])
  t.same([input, applied, after].map((c) => c.next), [['__start__'], ['agent'], []])
  t.same([input, applied, after].map((c) => c.parent_checkpoint_id), [null, input.checkpoint_id, applied.checkpoint_id])
  t.same([input, applied, after].map((c) => c.checkpoint_id.slice(19, 23)), ['ffff', '8000', '8001'], 'the clock sequence holds the step')
  for (const c of [input, applied, after]) {
    t.equal(c.checkpoint_id[14], '6', 'a version 6 uuid')
    t.same(c.metadata.parents, {})
    t.equal(c.metadata.thread_id, IDS.thread_id)
    t.equal(c.metadata.run_id, IDS.run_id)
    t.equal(c.metadata.created_by, 'system')
    t.same(c.interrupts, {})
  }
  t.same([...[input, applied, after].map((c) => c.checkpoint_id)].sort(), [input, applied, after].map((c) => c.checkpoint_id), 'ids sort in creation order')
  t.same(input.tasks, [{ id: taskId(input.checkpoint_id, '__start__'), name: '__start__', path: ['__pregel_pull', '__start__'], error: null,
    interrupts: [], checkpoint: null, state: null, result: say('hi') }])
  t.same(input.metadata.writes, { __start__: say('hi') })
  t.same(applied.tasks.map((x) => [x.id, x.name, x.result]), [[taskId(applied.checkpoint_id, 'agent'), 'agent', null]])
  t.same(after.tasks, [])
  t.same(Object.keys(after.metadata.writes as object), ['agent'])
  const v6Time = (id: string) => {
    const hex = id.slice(0, 8) + id.slice(9, 13) + id.slice(15, 18)
    return Number((BigInt(`0x${hex}`) - 122192928000000000n) / 10000n)
  }
  t.equal(v6Time(input.checkpoint_id), clock.now(), 'the id carries the clock\'s time')
  const order = timed.map(({ output }) => (output.kind === 'emit' ? output.event : output.kind))
  t.same(order.slice(0, 3), ['checkpoint', 'checkpoint', 'values'], 'the state is stored before its values event')
  t.same(order.slice(-4), ['checkpoint', 'updates', 'values', 'done'])
})

t.test('a second run on a thread goes on numbering from its last checkpoint and keeps the history', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'agent')
  await thread.run({ input: say('one', 'h1') })
  const second = await thread.run({ input: say('two', 'h2') })
  t.same(checkpoints(second).map((c) => [c.metadata.source, c.metadata.step]), [['input', 2], ['loop', 3], ['loop', 4]])
  t.equal(checkpoints(second)[0].parent_checkpoint_id, thread.history[2].checkpoint_id)
  t.same((done(second).values.messages as { content: string }[]).map((m) => m.content), ['one', 'one', 'two', 'two'])
})

t.test('checkpoint ids keep their order when the clock is moved back', async (t) => {
  const clock = Clock.manual(Date.UTC(2025, 5, 1))
  const thread = new Thread(engine, clock, 'agent')
  await thread.run({ input: say('one', 'h1') })
  clock.set(Date.UTC(2024, 0, 1))
  await thread.run({ input: say('two', 'h2') })
  const ids = thread.history.map((c) => c.checkpoint_id)
  t.equal(ids.length, 6)
  t.same([...ids].sort(), ids)
})

t.test('an input that writes nothing sends no first values event but still runs the nodes', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: { unknown: 1 } })))
  t.same(emits(timed).map((e) => e.event), ['messages', 'updates', 'values'])
  t.same(checkpoints(timed)[1].values, { messages: [] }, 'undeclared keys are ignored; the list channel starts empty')
})

t.test('the pipeline graph reports progress per node, one second apart, then streams its summary', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { graphId: 'pipeline', input: say('rockets') })))
  t.same(emits(timed).map((e) => e.event), [
    'values',
    'custom', 'updates', 'values',
    'custom', 'updates', 'values',
    'custom', 'messages', 'messages', 'messages', 'messages', 'messages', 'updates', 'values',
  ])
  const custom = timed.filter(({ output }) => output.kind === 'emit' && output.event === 'custom')
  t.same(custom.map(({ at, output }) => [at, (output as { data: unknown }).data]), [
    [1000, { node: 'research', progress: 33, status: 'Researching: rockets' }],
    [2000, { node: 'draft', progress: 66, status: 'Drafting' }],
    [3000, { node: 'review', progress: 100, status: 'Reviewing' }],
  ])
  const updates = emits(timed).filter((e) => e.event === 'updates').map((e) => e.data as Record<string, unknown>)
  t.same(updates.slice(0, 2), [{ research: { topic: 'rockets', stages: ['research'] } }, { draft: { stages: ['draft'] } }])
  const tokens = timed.filter(({ output }) => output.kind === 'emit' && output.event === 'messages')
  t.same(tokens.map(({ at }) => at), [3000, 3100, 3200, 3300, 3400], 'a token every 100 ms')
  const final = done(timed).values as { stages: string[]; topic: string; messages: { content: string }[] }
  t.same(final.stages, ['research', 'draft', 'review'])
  t.equal(final.messages[1].content, 'Researched, drafted and reviewed: rockets')
  t.same(checkpoints(timed).map((c) => c.metadata.step), [-1, 0, 1, 2, 3])
})

t.test('nothing happens before the clock reaches a node\'s delay', async (t) => {
  const clock = Clock.manual()
  const seen: string[] = []
  const controller = new AbortController()
  const run = engine.run(request(clock, { graphId: 'pipeline', input: say('x'), streamModes: ['custom'], signal: controller.signal }))
  const iterator = run[Symbol.asyncIterator]()
  let pending = iterator.next()
  const collect = async () => {
    for (;;) {
      const raced = await Promise.race([pending, turn().then(() => 'waiting' as const)])
      if (raced === 'waiting') return
      if (raced.done) return
      for (const output of flat(raced.value)) seen.push(output.kind === 'emit' ? output.event : output.kind)
      pending = iterator.next()
    }
  }
  await collect()
  t.same(seen, ['checkpoint', 'checkpoint'], 'only the input is stored while the first node waits')
  t.equal(clock.listenerCount('change'), 1)
  clock.advance(999)
  await collect()
  t.same(seen, ['checkpoint', 'checkpoint'], '999 ms: still waiting')
  clock.advance(1)
  await collect()
  t.same(seen.slice(2), ['custom', 'amend', 'checkpoint'], 'at 1000 ms the node runs (its task settled, then its step stored)')
  controller.abort()
  t.same(await pending, { done: true, value: undefined }, 'an abort ends it')
})

t.test('the flaky graph fails when configurable.fail is true: error last, status error', async (t) => {
  const clock = Clock.manual()
  const config = { configurable: { ...IDS, graph_id: 'flaky', fail: true } }
  const timed = await drive(clock, engine.run(request(clock, { graphId: 'flaky', input: say('hello'), config })))
  const events = emits(timed)
  const error = { error: 'FlakyError', message: 'The flaky graph failed on request: hello' }
  t.same(events.at(-1), { event: 'error', data: error })
  t.same(events.map((e) => e.event), ['values', 'error'])
  t.same(done(timed), { kind: 'done', status: 'error', values: { messages: [human('hello', 'h1')] }, pausedAt: null, error })
  t.same(checkpoints(timed).map((c) => c.metadata.step), [-1, 0], 'no checkpoint is written for the failure')
  const failed = amended(timed).at(-1)!
  t.equal(failed.checkpoint_id, checkpoints(timed)[1].checkpoint_id, 'the error is kept on the checkpoint the node ran from')
  t.same(failed.next, ['agent'])
  t.same(failed.values, { messages: [human('hello', 'h1')] }, 'the failed node wrote nothing')
  t.same(JSON.parse(failed.tasks[0].error!), { message: error.message, name: 'FlakyError' })
  t.same(failed.interrupts, { [failed.tasks[0].id]: [] }, 'a failed task shows with no interrupts')
})

t.test('the flaky graph fails when the last human message contains "fail", in any case', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { graphId: 'flaky', input: say('please FAIL now') })))
  t.equal(done(timed).status, 'error')
  t.same(emits(timed).at(-1)!.event, 'error')
})

t.test('the flaky graph answers otherwise', async (t) => {
  const clock = Clock.manual()
  const config = { configurable: { ...IDS, fail: false } }
  const timed = await drive(clock, engine.run(request(clock, { graphId: 'flaky', input: say('all good'), config })))
  t.equal(done(timed).status, 'success')
  t.equal((done(timed).values.messages as { content: string }[])[1].content, 'all good')
})

t.test('the approval graph stops at its interrupt and names it in updates, values and the checkpoint', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  const timed = await thread.run({ input: say('deploy it') })
  const paused = thread.history.at(-1)!
  const task = paused.tasks[0]
  const interrupt = { id: interruptId(task.id), value: { question: 'Approve this request?', request: 'deploy it' } }
  t.match(interrupt.id, /^[0-9a-f]{32}$/)
  t.same(Object.keys(done(timed).pausedAt!.interrupts[0]), ['id', 'value'], 'the id comes first, as the server sends it')
  t.same(emits(timed), [
    { event: 'values', data: { messages: [human('deploy it', 'h1')] } },
    { event: 'updates', data: { __interrupt__: [interrupt] } },
    { event: 'values', data: { __interrupt__: [interrupt] } },
  ])
  t.same(paused.next, ['ask'])
  t.equal(paused.metadata.step, 0, 'the interrupt is kept on the checkpoint the node ran from')
  t.same(checkpoints(timed).length, 2, 'no checkpoint is written for the interrupt')
  t.same(task.interrupts, [interrupt])
  t.same(paused.interrupts, { [task.id]: [interrupt] })
  t.same(paused.values, { messages: [human('deploy it', 'h1')] })
  t.same(done(timed), {
    kind: 'done', status: 'success', values: { __interrupt__: [interrupt] }, pausedAt: { node: 'ask', interrupts: [interrupt] }, error: null,
  })
})

t.test('resuming the approval graph re-runs the node with the answer and goes on', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const before = thread.history.at(-1)!
  const timed = await thread.run({ command: { resume: 'yes' } })
  const events = emits(timed)
  t.same(events[0], { event: 'values', data: before.values }, 'the stream starts with the state before the node')
  t.same(events[1], { event: 'updates', data: { ask: { answer: 'yes' } } })
  t.same(events[2], { event: 'values', data: { ...before.values, answer: 'yes' } })
  const reply = events.filter((e) => e.event === 'messages').map((e) => (e.data as [{ content: string }])[0].content).join('')
  t.equal(reply, 'You answered: yes')
  t.same(checkpoints(timed).map((c) => [c.metadata.step, c.next, c.parent_checkpoint_id === null]), [[1, ['respond'], false], [2, [], false]])
  t.equal(checkpoints(timed)[0].parent_checkpoint_id, before.checkpoint_id)
  t.equal(done(timed).pausedAt, null)
  t.equal(done(timed).values.answer, 'yes')
  const resumed = (events.find((e) => e.event === 'messages')!.data as [unknown, { langgraph_step: number }])[1]
  t.equal(resumed.langgraph_step, 2, 'the reply runs in the step after the resumed one')
  const settled = thread.history.find((c) => c.checkpoint_id === before.checkpoint_id)!
  t.same(settled.tasks[0].result, { answer: 'yes' }, 'the resumed task\'s result is kept on the checkpoint it ran from')
  t.same(settled.tasks[0].interrupts, before.tasks[0].interrupts, 'beside the interrupt it answered')
})

t.test('the resumed task is the one the paused checkpoint lists', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const paused = thread.history.at(-1)!
  const timed = await thread.run({ command: { resume: 'no' }, streamModes: ['tasks'] })
  const [start] = emits(timed).map((e) => e.data as { id: string; name: string })
  t.same([start.id, start.name], [paused.tasks[0].id, 'ask'])
  t.same(Object.keys(paused.interrupts), [start.id], 'the thread\'s interrupts are keyed by that task')
})

t.test('a run without input on an interrupted thread runs the node again, which interrupts again', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const first = thread.pausedAt!.interrupts[0]
  const timed = await thread.run({ input: null })
  t.same(emits(timed).map((e) => e.event), ['values', 'updates', 'values'])
  const again = done(timed).pausedAt!
  t.equal(again.node, 'ask')
  t.equal(again.interrupts[0].id, first.id, 'the same task raises the same interrupt')
  t.same(again.interrupts[0].value, first.value)
})

t.test('a new input on an interrupted thread starts over from the first node', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const timed = await thread.run({ input: say('actually, roll back', 'h2') })
  t.same(checkpoints(timed).map((c) => c.metadata.source), ['input', 'loop'], 'the input, then its step (the new interrupt adds none)')
  t.same(checkpoints(timed)[0].interrupts, {}, 'the pending interrupt is dropped')
  t.same(done(timed).pausedAt!.interrupts[0].value, { question: 'Approve this request?', request: 'actually, roll back' })
})

t.test('command.update with resume joins the resumed node\'s step: no checkpoint of its own', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const timed = await thread.run({ command: { update: { messages: [{ role: 'user', content: 'edited', id: 'h1' }] }, resume: 'ok' } })
  const [resumed] = checkpoints(timed)
  t.same([resumed.metadata.step, resumed.metadata.source, resumed.next], [1, 'loop', ['respond']], 'the first checkpoint is the resumed node\'s step')
  t.same((resumed.values.messages as { content: string }[]).map((m) => m.content), ['edited'])
  t.equal(resumed.values.answer, 'ok')
  t.equal(done(timed).values.answer, 'ok')
})

t.test('a goto away from an interrupted node runs it beside the interrupted node, which interrupts again', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const timed = await thread.run({ command: { goto: 'respond', update: { answer: 'skipped' } } })
  const [input] = checkpoints(timed)
  t.same([checkpoints(timed).length, input.metadata.source, input.metadata.step], [1, 'input', 1], 'the command is the run\'s input; the interrupt writes no checkpoint')
  const settled = thread.history.at(-1)!
  t.same(settled.next, ['ask'], 'the interrupted node is still next')
  t.same(settled.tasks.map((task) => [task.name, task.interrupts.length, task.result === null]), [['ask', 1, true], ['respond', 0, false]])
  t.same((settled.values.messages as { content: string }[]).map((m) => m.content), ['deploy it', 'You answered: skipped'], 'the state shows what respond wrote')
  t.same(done(timed).values, settled.values, 'the run answers the state')
  t.equal(done(timed).pausedAt!.node, 'ask')
})

t.test('a goto with a Send gives the node the Send\'s input; its writes go to the state', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  const timed = await thread.run({ command: { goto: { node: 'respond', arg: { answer: 'private', messages: [] } } } })
  t.same(done(timed).values, { messages: [{ ...ai('You answered: private', (done(timed).values.messages as { id: string }[])[0].id) }] })
})

t.test('command.update may be given as [key, value] pairs', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  await thread.run({ input: say('deploy it') })
  const timed = await thread.run({ command: { update: [['answer', 'preset']] } })
  t.equal(checkpoints(timed)[0].values.answer, 'preset')
  t.equal(done(timed).pausedAt!.node, 'ask', 'the interrupted node runs again and interrupts again')
})

t.test('command.goto starts the run at that node', async (t) => {
  const thread = new Thread(engine, Clock.manual(), 'approval')
  const timed = await thread.run({ command: { goto: 'respond' } })
  t.same(checkpoints(timed).map((c) => c.next), [['respond'], []])
  t.equal((done(timed).values.messages as { content: string }[])[0].content, 'You answered: ')
})

t.test('a command that cannot apply is an error event', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { command: { goto: 'nowhere' } })))
  t.same(emits(timed), [{ event: 'error', data: { error: 'InvalidUpdateError', message: "Node 'nowhere' does not exist in graph 'agent'" } }])
  t.equal(done(timed).status, 'error')
})

t.test('an input that is not an object fails at the input step', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: 'hi' })))
  t.same(emits(timed), [{ event: 'error', data: { error: 'InvalidUpdateError', message: 'Expected dict, got "hi"' } }])
  const [input] = checkpoints(timed)
  t.same(JSON.parse(input.tasks[0].error!), { message: 'Expected dict, got "hi"', name: 'InvalidUpdateError' })
})

t.test('removing an unknown message in the input is an error event', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: { messages: [{ type: 'remove', id: 'nope' }] } })))
  t.same(emits(timed).at(-1), { event: 'error', data: { error: 'ValueError', message: "Attempting to delete a message with an ID that doesn't exist ('nope')" } })
})

t.test('an unknown graph ends the run with an error', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { graphId: 'ghost' })))
  t.same(emits(timed), [{ event: 'error', data: { error: 'ValueError', message: "Graph 'ghost' not found" } }])
})

t.test('legacy messages mode sends complete, metadata and growing partials', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('a b'), streamModes: ['messages'] })))
  const events = emits(timed)
  const aiId = Object.keys(events[1].data as object)[0]
  t.same(events.map((e) => e.event), ['messages/complete', 'messages/metadata', 'messages/partial', 'messages/partial', 'messages/complete'])
  t.same(events[0].data, [human('a b', 'h1')], 'the first snapshot lists the history')
  t.match(events[1].data, { [aiId]: { metadata: { langgraph_node: 'agent', ls_provider: 'hangar' } } })
  t.same(events[2].data, [chunk('a', aiId)])
  t.same(events[3].data, [chunk('a b', aiId)])
  t.same(events[4].data, [ai('a b', aiId)])
})

t.test('events mode sends LangChain stream events for the graph, the node and the chat model', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('yo'), streamModes: ['events'] })))
  const events = emits(timed).map((e) => e.data as { event: string; name: string; run_id: string; tags: string[]; parent_ids: string[]; data: Record<string, unknown> })
  t.ok(emits(timed).every((e) => e.event === 'events'))
  t.same(events.map((e) => [e.event, e.name]), [
    ['on_chain_start', 'LangGraph'], ['on_chain_start', 'agent'], ['on_chat_model_start', 'HangarChatModel'],
    ['on_chat_model_stream', 'HangarChatModel'], ['on_chat_model_end', 'HangarChatModel'], ['on_chain_end', 'agent'], ['on_chain_end', 'LangGraph'],
  ])
  t.equal(events[0].run_id, IDS.run_id)
  t.same(events[0].data, { input: say('yo') })
  t.same(events[1].tags, ['graph:step:1'])
  t.same(events[1].parent_ids, [IDS.run_id])
  const streamed = events[3].data.chunk as { id: string }
  t.same(streamed, chunk('yo', streamed.id))
  t.same(events[2].parent_ids, [IDS.run_id, events[1].run_id])
  t.same((events[6].data.output as { messages: unknown[] }).messages.length, 2)
})

t.test('debug mode sends checkpoints, tasks and task results in LangGraph\'s order', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('yo'), streamModes: ['debug'] })))
  const debug = emits(timed).map((e) => e.data as { step: number; type: string; timestamp: string; payload: Record<string, unknown> })
  t.same(debug.map((d) => [d.type, d.step]), [['checkpoint', -1], ['checkpoint', 0], ['task', 1], ['task_result', 1], ['checkpoint', 1]])
  t.equal(debug[0].timestamp, new Date(clock.now()).toISOString())
  t.same(debug[2].payload.triggers, ['branch:to:agent'])
  t.same(Object.keys(debug[3].payload), ['id', 'name', 'result', 'interrupts', 'error'])
})

t.test('tasks mode sends a start and an end per node', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('yo'), streamModes: ['tasks'] })))
  const [start, end] = emits(timed).map((e) => e.data as Record<string, unknown>)
  const applied = checkpoints(timed)[1]
  const id = taskId(applied.checkpoint_id, 'agent')
  t.match(start, { id, name: 'agent', input: applied.values, triggers: ['branch:to:agent'], interrupts: [], metadata: { langgraph_node: 'agent' } })
  t.match(end, { id, name: 'agent', interrupts: [], error: null })
  t.same(Object.keys((end.result as { messages: unknown[] }))[0], 'messages')
})

t.test('checkpoints mode sends each checkpoint with its config and its parent\'s', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('yo'), streamModes: ['checkpoints'] })))
  const stored = checkpoints(timed)
  const sent = emits(timed).map((e) => e.data as Record<string, any>)
  t.equal(sent.length, 3)
  t.same(sent[0].checkpoint, { thread_id: IDS.thread_id, checkpoint_id: stored[0].checkpoint_id, checkpoint_ns: '', checkpoint_map: null })
  t.equal(sent[0].parent_checkpoint, null)
  t.notOk('parent_config' in sent[0])
  t.match(sent[1].config, { configurable: { checkpoint_ns: '', thread_id: IDS.thread_id, checkpoint_id: stored[1].checkpoint_id, run_id: IDS.run_id }, recursion_limit: 25, tags: [] })
  t.equal(sent[1].parent_config.configurable.checkpoint_id, stored[0].checkpoint_id)
  t.same(sent[1].tasks, [{ id: stored[1].tasks[0].id, name: 'agent', path: ['__pregel_pull', 'agent'], interrupts: [] }])
  t.same(sent.map((s) => [s.metadata.step, s.next]), [[-1, ['__start__']], [0, ['agent']], [1, []]])
  t.same(sent[2].values, stored[2].values)
})

t.test('with subgraphs asked for, a graph without subgraphs keeps plain event names; values get the brief checkpoints events', async (t) => {
  const clock = Clock.manual()
  const timed = await drive(clock, engine.run(request(clock, { input: say('yo'), subgraphs: true })))
  // As the real JS server sends them (test/fixtures/subgraphs/fanout.json, with stream_subgraphs): `{id, parent_id, step, source}` before each values.
  t.same(emits(timed).map((e) => e.event), ['checkpoints', 'values', 'messages', 'updates', 'checkpoints', 'values'])
  t.same(Object.keys(emits(timed)[0].data as object), ['id', 'parent_id', 'step', 'source'])
})

t.test('an abort while a node waits stops the run at once', async (t) => {
  const clock = Clock.manual()
  const controller = new AbortController()
  const outputs: string[] = []
  const running = (async () => {
    for await (const output of engine.run(request(clock, { graphId: 'pipeline', input: say('x'), signal: controller.signal }))) {
      for (const one of flat(output)) outputs.push(one.kind)
    }
  })()
  await until(() => waitsOnClock(clock), 'the pipeline waits on the clock')
  controller.abort(new Error('cancelled'))
  await running
  t.same(outputs, ['checkpoint', 'checkpoint', 'emit'], 'nothing after the abort, and no done')
  t.equal(clock.listenerCount('change'), 0, 'the wait is gone')
})

t.test('an aborted signal yields nothing', async (t) => {
  const clock = Clock.manual()
  const controller = new AbortController()
  controller.abort()
  t.same(await drive(clock, engine.run(request(clock, { input: say('x'), signal: controller.signal }))), [])
})

t.test('a state update without as_node merges through the reducers and leaves nothing to run', async (t) => {
  const current = { values: { messages: [human('u1', 'u-1')], answer: 'old' }, checkpointId: 'parent-id', step: 4 }
  const record = engine.updateState('approval', current, { messages: [{ role: 'user', content: 'u1-edited', id: 'u-1' }], answer: 'new' }, null)
  t.same(record.values, { messages: [human('u1-edited', 'u-1')], answer: 'new' })
  t.same(record.next, [])
  t.same(record.tasks, [])
  t.equal(record.parent_checkpoint_id, 'parent-id')
  t.equal(record.checkpoint_id.slice(19, 23), '8004')
  t.same(record.metadata, { graph_id: 'approval', source: 'update', step: 4, writes: { respond: { messages: [human('u1-edited', 'u-1')], answer: 'new' } }, parents: {} })
  t.same(current.values.answer, 'old', 'the current state is not changed')
})

t.test('a state update as a node makes its successor next', async (t) => {
  const current = { values: { messages: [] }, checkpointId: null, step: 0 }
  const asAsk = engine.updateState('approval', current, { answer: 'yes' }, 'ask')
  t.same(asAsk.next, ['respond'])
  t.same(asAsk.tasks.map((x) => [x.id, x.name]), [[taskId(asAsk.checkpoint_id, 'respond'), 'respond']])
  t.same(engine.updateState('approval', current, { answer: 'yes' }, 'respond').next, [])
  t.same(engine.updateState('approval', current, null, '__start__').next, ['ask'])
  const error = t.throws(() => engine.updateState('approval', current, {}, 'ghost')) as GraphError
  t.equal(error.name, 'InvalidUpdateError')
})

t.test('a thread without a graph merges messages by id and replaces every other key', async (t) => {
  const current = { values: { messages: [human('a', '1')], n: 1 }, checkpointId: null, step: 0 }
  const record = engine.updateState(null, current, [{ messages: [{ role: 'user', content: 'b', id: '2' }], n: 2 }, { other: [1] }], null)
  t.same(record.values, { messages: [human('a', '1'), human('b', '2')], n: 2, other: [1] })
  t.same(record.metadata.source, 'update')
  t.notOk('graph_id' in record.metadata)
})

t.test('a state update the reducers refuse throws', async (t) => {
  const current = { values: { messages: [human('a', '1')] }, checkpointId: null, step: 0 }
  t.throws(() => engine.updateState('agent', current, { messages: [{ type: 'remove', id: 'nope' }] }, null), /doesn't exist \('nope'\)/)
  t.throws(() => engine.updateState('agent', current, 'text', null), { name: 'InvalidUpdateError' })
})

// --- fixtures of one's own ------------------------------------------------------------------

const graphFile = (graph: object) => JSON.stringify({ graph_id: 'g', state: { messages: 'messages' }, nodes: [{ name: 'n', steps: [] }], ...graph })

t.test('messages a node writes without streaming are sent whole in messages-tuple', async (t) => {
  const dir = t.testdir({
    'g.json': graphFile({
      state: { messages: 'messages', log: 'append', copy: 'replace' },
      nodes: [{ name: 'n', steps: [
        { update: { messages: [{ role: 'assistant', content: 'whole', id: 'w1' }], log: 'first', copy: '{{state.log}}' } },
        { update: { log: ['second'] } },
      ] }],
    }),
  })
  const clock = Clock.manual()
  const timed = await drive(clock, createEngine(dir).run(request(clock, { graphId: 'g', input: { log: ['zero'] } })))
  const events = emits(timed)
  t.same(events.map((e) => e.event), ['values', 'messages', 'updates', 'values'])
  t.same((events[1].data as unknown[])[0], ai('whole', 'w1'))
  t.same(events[2].data, { n: { messages: [ai('whole', 'w1')], log: ['first', 'second'], copy: ['zero'] } }, 'a lone template keeps the value')
  t.same(done(timed).values, { log: ['zero', 'first', 'second'], messages: [ai('whole', 'w1')], copy: ['zero'] })
})

t.test('a node whose update the reducers refuse fails like a raising node', async (t) => {
  const dir = t.testdir({ 'g.json': graphFile({ nodes: [{ name: 'n', steps: [{ update: { messages: [{ type: 'remove', id: 'ghost' }] } }] }] }) })
  const clock = Clock.manual()
  const timed = await drive(clock, createEngine(dir).run(request(clock, { graphId: 'g', input: {} })))
  const message = "Attempting to delete a message with an ID that doesn't exist ('ghost')"
  t.same(emits(timed), [{ event: 'error', data: { error: 'ValueError', message } }])
  t.same(JSON.parse(amended(timed).at(-1)!.tasks[0].error!), { message, name: 'ValueError' })
})

t.test('a node that writes nothing updates as null', async (t) => {
  const dir = t.testdir({ 'g.json': graphFile({ nodes: [{ name: 'quiet', steps: [{ wait_ms: 10 }] }] }) })
  const clock = Clock.manual()
  const timed = await drive(clock, createEngine(dir).run(request(clock, { graphId: 'g', input: {} })))
  t.same(emits(timed), [{ event: 'updates', data: { quiet: null } }, { event: 'values', data: { messages: [] } }])
  t.equal(timed.at(-1)!.at, 50, 'the wait was on the clock')
})

const fixtureError = (t: Test, graph: unknown, message: string) => {
  const dir = t.testdir({ 'bad.json': typeof graph === 'string' ? graph : JSON.stringify(graph) })
  t.throws(() => createEngine(dir), new FixtureError(`fixture ${join(dir, 'bad.json')}: ${message}`))
}

t.test('an invalid graph fixture stops loading with one line naming the file and the field', async (t) => {
  const node = { name: 'n', steps: [] }
  fixtureError(t, '{"graph_id": ', '(top level): Unexpected end of JSON input')
  fixtureError(t, { nodes: [node] }, 'graph_id: Field required')
  fixtureError(t, { graph_id: 'g', state: { a: 'mix' }, nodes: [node] }, "state.a: Input should be 'messages', 'append', 'replace', 'ui' or 'merge'")
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', delay_ms: -1 }] }, 'nodes[0].delay_ms: Input should be greater than or equal to 0')
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', delay: 5 }] }, 'nodes[0].delay: Extra inputs are not permitted')
  fixtureError(t, { graph_id: 'g', nodes: [] }, 'nodes: a graph needs at least one node')
  fixtureError(t, { graph_id: 'g', nodes: [node, node] }, "nodes[1].name: 'n' names two nodes")
  fixtureError(t, { graph_id: 'g', nodes: [{ name: '__end__' }] }, "nodes[0].name: '__end__' is a reserved name")
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', steps: [{ custom: 1, wait_ms: 2 }] }] },
    'nodes[0].steps[0]: a step does exactly one of reply, update, custom, wait_ms, interrupt, fail, tools, ui, remove_ui, store_put, store_search (found custom, wait_ms)')
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', steps: [{ update: { x: 1 } }] }] }, "nodes[0].steps[0].update.x: 'x' is not a state key (declared: none)")
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', steps: [{ reply: { text: 'hi' } }] }] },
    "nodes[0].steps[0].reply: a reply needs the state key 'messages' with the reducer 'messages'")
  fixtureError(t, { graph_id: 'g', state: { messages: 'messages' }, nodes: [{ name: 'n', steps: [{ reply: { text: '{{state.nope}}' } }] }] },
    "nodes[0].steps[0].reply.text: unknown template '{{state.nope}}' (use {{last_human}}, {{last_tool}}, {{tool_results}}, {{state.<key>}}, {{context.<key>}} or {{input.<key>}})")
  fixtureError(t, { graph_id: 'g', state: { a: 'replace' }, nodes: [{ name: 'n', steps: [
    { interrupt: { value: 1, resume_key: 'a' } }, { interrupt: { value: 2, resume_key: 'a' } }] }] },
    'nodes[0].steps[1].interrupt: a node holds at most one interrupt (put the next one in its own node)')
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', steps: [{ interrupt: { value: 1 } }] }] }, 'nodes[0].steps[0].interrupt.resume_key: Field required')
  fixtureError(t, { graph_id: 'g', nodes: [{ name: 'n', steps: [{ fail: { message: 'x', when: {} } }] }] },
    'nodes[0].steps[0].fail.when: name a condition: configurable, human_contains, human_matches, state, state_truthy, tool_calls, tool_result_contains, visits_at_least, last_message, calls_tool, all, not')
})

t.test('two files defining one graph_id are refused', async (t) => {
  const dir = t.testdir({ 'a.json': graphFile({}), 'b.json': graphFile({}) })
  t.throws(() => createEngine(dir), new FixtureError(`fixture ${join(dir, 'b.json')}: graph_id: 'g' is already defined in ${join(dir, 'a.json')}`))
})

t.test('a missing graphs directory holds no graphs; files other than .json are skipped', async (t) => {
  t.same(createEngine(join(t.testdirName, 'none')).graphs(), [])
  const dir = t.testdir({ 'README.md': '# not a graph', 'g.json': graphFile({}) })
  t.same(createEngine(dir).graphs().map((g) => g.graph_id), ['g'])
})
