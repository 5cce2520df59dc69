// Time travel, breakpoints and commands: named scripts run with the official SDK against an agent
// server that serves the graphs agent (echo chat), approval (interrupt, then answer), flaky (fails
// when the text holds "fail") and pipeline (research → draft → review, one second each). Each
// returns a transcript: what was called and the normalised answer. Recorded once against the real
// JS server into test/fixtures/time-travel/real-server.json; test/time-travel.test.ts runs the same
// scripts against hangar and compares.

import type { Client } from '@langchain/langgraph-sdk'
import {
  collect, firstWhere, parentOf, Script, ScriptStopped, runView, stateView, streamView,
  type Part, type Settle, type Transcript,
} from './script.js'

const human = (content: string) => ({ messages: [{ role: 'user', content }] })

/** Every stream mode whose payload tells how a run ends: values, updates and the three that carry checkpoints and tasks. */
const MODES = ['values', 'updates', 'checkpoints', 'tasks', 'debug'] as const

const messagesOf = (state: any): any[] => state?.values?.messages ?? []

/** Two turns of the echo chat on a new thread; returns the thread and its history afterwards. */
async function twoTurns(s: Script) {
  const thread = await s.thread()
  await s.wait('runs.wait agent "one"', thread, 'agent', { input: human('one') })
  await s.wait('runs.wait agent "two"', thread, 'agent', { input: human('two') })
  const history = await s.history(thread)
  return { thread, history }
}

/** The history entry where a message first appeared (by id), oldest first. */
function whereFirstSeen(history: any[], message: any, what: string) {
  if (message === undefined) throw new ScriptStopped(`no ${what} in the head state`)
  return firstWhere(history, (state) => messagesOf(state).some((m) => m.id === message.id), `${what} appears`)
}

/** The older useStream's "edit": new input from the parent of the checkpoint where the message first appeared. */
async function forkEdit(s: Script) {
  const { thread, history } = await twoTurns(s)
  const firstHuman = messagesOf(history[0]).find((m) => m.type === 'human')
  const fork = parentOf(whereFirstSeen(history, firstHuman, 'first human message'), 'the checkpoint where the first human message appeared')
  await s.wait('runs.wait agent "one, edited" with checkpoint_id = parent of where the first human message appeared',
    thread, 'agent', { input: human('one, edited'), checkpointId: fork })
  await s.state(thread)
  await s.history(thread)
  await s.call('runs.stream agent "one, edited again" with checkpoint {checkpoint_id: same, checkpoint_ns: ""}, modes values+checkpoints',
    () => collect(s.client.runs.stream(thread, 'agent', {
      input: human('one, edited again'),
      checkpoint: { checkpoint_id: fork, checkpoint_ns: '' } as any,
      streamMode: ['values', 'checkpoints'],
    })), streamView)
  await s.state(thread)
  await s.history(thread)
}

/** The older useStream's "regenerate": no input, from the parent of the checkpoint where the last AI message first appeared. */
async function regenerate(s: Script) {
  const { thread, history } = await twoTurns(s)
  const lastAi = messagesOf(history[0]).findLast((m) => m.type === 'ai')
  const fork = parentOf(whereFirstSeen(history, lastAi, 'last AI message'), 'the checkpoint where the last AI message appeared')
  await s.wait('runs.wait agent input null with checkpoint_id = parent of where the last AI message appeared',
    thread, 'agent', { input: null, checkpointId: fork })
  await s.state(thread)
  await s.history(thread)
}

/** State updates written on an earlier checkpoint, and every way to read a checkpoint or history before one. */
async function stateOnCheckpoint(s: Script) {
  const { thread, history } = await twoTurns(s)
  const endOfTurnOne = firstWhere(history, (state) => messagesOf(state).length === 2 && state.next.length === 0, 'turn one has ended')
  const turnOne: string = endOfTurnOne.checkpoint.checkpoint_id
  const turnTwo = history[0]?.checkpoint.checkpoint_id
  if (typeof turnTwo !== 'string') throw new ScriptStopped('no head checkpoint after two turns')
  const { client } = s
  await s.call('threads.updateState {values: "note", checkpoint_id: end of turn one}',
    () => client.threads.updateState(thread, { values: human('note'), checkpointId: turnOne }))
  await s.state(thread)
  await s.history(thread)
  await s.call('threads.updateState {values: "note 2", checkpoint: {checkpoint_id: end of turn one, checkpoint_ns: ""}}',
    () => client.threads.updateState(thread, { values: human('note 2'), checkpoint: { checkpoint_id: turnOne, checkpoint_ns: '' } as any }))
  await s.state(thread)
  await s.history(thread)
  await s.call('threads.getState(end of turn one as a string): GET /state/{checkpoint_id}',
    () => client.threads.getState(thread, turnOne), stateView)
  await s.call('threads.getState({checkpoint_id: end of turn two}): POST /state/checkpoint',
    () => client.threads.getState(thread, { checkpoint_id: turnTwo } as any), stateView)
  const historyBefore = (step: string, before: unknown) =>
    s.call(step, () => client.threads.getHistory(thread, { limit: 100, before: before as any }), (states) => states.map(stateView))
  await historyBefore('threads.getHistory {before: end of turn two as a string}', turnTwo)
  await historyBefore('threads.getHistory {before: {checkpoint_id}}', { checkpoint_id: turnTwo })
  await historyBefore('threads.getHistory {before: {configurable: {checkpoint_id}}}', { configurable: { checkpoint_id: turnTwo } })
  await s.call('threads.getHistory {checkpoint: {checkpoint_id: end of turn one}}',
    () => client.threads.getHistory(thread, { limit: 100, checkpoint: { checkpoint_id: turnOne } }), (states) => states.map(stateView))
}

/** An interrupting run (streamed with every mode, and waited on), its state and history, and the resume. */
async function interrupt(s: Script) {
  const { client } = s
  const thread = await s.thread()
  await s.call('runs.stream approval "buy", modes values+updates+checkpoints+tasks+debug',
    () => collect(client.runs.stream(thread, 'approval', { input: human('buy'), streamMode: [...MODES] })), streamView)
  await s.state(thread)
  await s.threadStatus(thread)
  await s.history(thread)
  await s.runs(thread)
  await s.wait('runs.wait command {resume: "yes"}', thread, 'approval', { command: { resume: 'yes' } })
  await s.state(thread)
  await s.threadStatus(thread)
  await s.history(thread)

  const waited = await s.thread()
  await s.wait('runs.wait approval "sell" (interrupts)', waited, 'approval', { input: human('sell') })
  await s.runs(waited)
  await s.call('runs.stream command {resume: "no"}, modes values+updates+checkpoints+tasks+debug',
    () => collect(client.runs.stream(waited, 'approval', { command: { resume: 'no' }, streamMode: [...MODES] })), streamView)
  await s.history(waited)
}

/** A failing run: its stream in every mode, the state's task error, statuses, history; and a later turn. */
async function failure(s: Script) {
  const { client } = s
  const thread = await s.thread()
  await s.call('runs.stream flaky "please fail", modes values+updates+checkpoints+tasks+debug',
    () => collect(client.runs.stream(thread, 'flaky', { input: human('please fail'), streamMode: [...MODES] })), streamView)
  await s.state(thread)
  await s.threadStatus(thread)
  await s.history(thread)
  await s.runs(thread)
  await s.wait('runs.wait flaky "better now" after the failure', thread, 'flaky', { input: human('better now') })
  await s.threadStatus(thread)
  await s.history(thread)

  const waited = await s.thread()
  await s.wait('runs.wait flaky "fail again"', waited, 'flaky', { input: human('fail again') })
  await s.runs(waited)
  await s.threadStatus(waited)
}

/** A breakpoint stops the run; a run with input null goes on from there. */
async function stopAndGoOn(s: Script, what: string, breakpoint: { interruptBefore?: string[]; interruptAfter?: string[] }) {
  const thread = await s.thread()
  await s.wait(`runs.wait pipeline "topic" ${what}`, thread, 'pipeline', { input: human('topic'), ...breakpoint })
  await s.runs(thread)
  await s.threadStatus(thread)
  await s.state(thread)
  await s.history(thread)
  await s.wait('runs.wait pipeline input null', thread, 'pipeline', { input: null })
  await s.runs(thread)
  await s.threadStatus(thread)
  await s.state(thread)
  await s.history(thread)
}

async function breakpoints(s: Script) {
  const { client } = s
  await stopAndGoOn(s, 'interrupt_before ["draft"]', { interruptBefore: ['draft'] })
  await stopAndGoOn(s, 'interrupt_after ["research"]', { interruptAfter: ['research'] })

  const streamed = await s.thread()
  await s.call('runs.stream pipeline "topic" interrupt_before ["draft"], modes values+updates+checkpoints+tasks+debug',
    () => collect(client.runs.stream(streamed, 'pipeline', { input: human('topic'), interruptBefore: ['draft'], streamMode: [...MODES] })), streamView)
  await s.threadStatus(streamed)
  await s.call('runs.stream pipeline input null interrupt_after ["draft"], modes values+updates+checkpoints+tasks+debug',
    () => collect(client.runs.stream(streamed, 'pipeline', { input: null, interruptAfter: ['draft'], streamMode: [...MODES] })), streamView)
  await s.threadStatus(streamed)
  await s.state(streamed)

  const configured = await s.thread()
  const assistant = await s.need('assistants.create pipeline {config: {interrupt_before: ["draft"]}}',
    () => client.assistants.create({ graphId: 'pipeline', config: { interrupt_before: ['draft'] } as any }),
    (a) => ({ assistant_id: a.assistant_id, graph_id: a.graph_id, config: a.config }))
  await s.wait('runs.wait that assistant "topic"', configured, assistant.assistant_id, { input: human('topic') })
  await s.runs(configured)
  await s.threadStatus(configured)
  await s.state(configured)
}

/**
 * A state update as if a node had run, then a run with input null goes on from the node after it:
 * on a thread that has never run (the server cannot tell its graph), and on one created for the graph.
 */
async function asNode(s: Script) {
  const { client } = s
  const values = { ...human('topic'), topic: 'given topic', stages: ['research'] }
  const bare = await s.thread()
  await s.call('threads.updateState {values, as_node: "research"} on a thread that has never run',
    () => client.threads.updateState(bare, { values, asNode: 'research' }))
  await s.wait('runs.wait pipeline input null', bare, 'pipeline', { input: null })
  await s.threadStatus(bare)
  await s.history(bare)

  const thread = await s.thread('pipeline')
  await s.call('threads.updateState {values, as_node: "research"}', () => client.threads.updateState(thread, { values, asNode: 'research' }))
  await s.threadStatus(thread)
  await s.state(thread)
  await s.history(thread)
  await s.wait('runs.wait pipeline input null', thread, 'pipeline', { input: null })
  await s.threadStatus(thread)
  await s.state(thread)
  await s.history(thread)
}

/** A background pipeline run, cancelled once research's update has streamed (the first checkpoint after it exists). */
async function cancelAfterResearch(s: Script, action: 'interrupt' | 'rollback') {
  const { client } = s
  const thread = await s.thread()
  if (action === 'rollback') {
    // What a thread with nothing on it answers, and an unknown run: what a rollback is documented to come back to.
    await s.threadStatus(thread, 'threads.get before any run')
    await s.state(thread, 'threads.getState before any run')
    await s.call('runs.get of a run that does not exist', () => client.runs.get(thread, '1ef4f2a0-0000-6000-8000-000000000000'), runView)
  }
  const run = await s.need('runs.create pipeline "topic" (background), modes updates+values',
    () => client.runs.create(thread, 'pipeline', { input: human('topic'), streamMode: ['updates', 'values'] }), runView)
  const joined = client.runs.joinStream(thread, run.run_id)[Symbol.asyncIterator]()
  const seen: Part[] = []
  for (;;) {
    const next = await s.settle(joined.next())
    if (next.done) throw new ScriptStopped('the joined stream ended before research had run')
    seen.push(next.value as Part)
    const part = next.value as Part
    if (part.event === 'updates' && typeof part.data === 'object' && part.data !== null && 'research' in part.data) break
  }
  s.record('runs.joinStream, read up to research\'s update', streamView(seen))
  await s.call(`runs.cancel {wait: true, action: ${action}}`, () => client.runs.cancel(thread, run.run_id, true, action))
  const rest: Part[] = []
  await s.call('the rest of the joined stream', async () => {
    for (;;) {
      const next = await joined.next()
      if (next.done) return rest
      rest.push(next.value as Part)
    }
  }, streamView)
  await s.call('runs.get', () => client.runs.get(thread, run.run_id), runView)
  await s.runs(thread)
  await s.threadStatus(thread)
  await s.state(thread)
  await s.history(thread)
  await s.wait('runs.wait pipeline input null', thread, 'pipeline', { input: null })
  await s.runs(thread)
  await s.threadStatus(thread)
  await s.history(thread)
}

/** An approval thread stopped at its interrupt, then resumed with `command`. */
async function commandOnInterrupt(s: Script, what: string, command: (interruptId: string) => unknown) {
  const { client } = s
  const thread = await s.thread()
  await s.wait('runs.wait approval "buy" (interrupts)', thread, 'approval', { input: human('buy') })
  const pending = await client.threads.getState(thread)
  const interruptId = (pending.tasks[0]?.interrupts[0] as { id?: string } | undefined)?.id ?? 'no interrupt'
  await s.wait(`runs.wait command ${what}`, thread, 'approval', { command: command(interruptId) as any })
  await s.threadStatus(thread)
  await s.state(thread)
  await s.call('threads.getHistory {limit: 100} (count)', () => client.threads.getHistory(thread, { limit: 100 }), (states) => states.length)
}

async function commands(s: Script) {
  await commandOnInterrupt(s, 'as RemoteGraph sends it {lg_name: "Command", resume: "yes", goto: []}',
    () => ({ lg_name: 'Command', resume: 'yes', goto: [] }))
  await commandOnInterrupt(s, '{resume: {<interrupt id>: "mapped"}}', (id) => ({ resume: { [id]: 'mapped' } }))
  await commandOnInterrupt(s, '{goto: "respond"}', () => ({ goto: 'respond' }))
  await commandOnInterrupt(s, '{goto: ["respond"]}', () => ({ goto: ['respond'] }))
  // A node reached by a Send gets the Send's input as its state: respond needs messages.
  const sent = { answer: 'sent', messages: [] }
  await commandOnInterrupt(s, '{goto: {node: "respond", input: {answer: "sent", messages: []}}}', () => ({ goto: { node: 'respond', input: sent } }))
  await commandOnInterrupt(s, 'with a Send as RemoteGraph sends it {goto: {lg_name: "Send", node: "respond", args: {answer: "sent", messages: []}}}',
    () => ({ goto: { lg_name: 'Send', node: 'respond', args: sent } }))
  await commandOnInterrupt(s, '{update: {answer: "updated"}, goto: "respond"}', () => ({ update: { answer: 'updated' }, goto: 'respond' }))
  await commandOnInterrupt(s, '{update: [["answer", "paired"]], goto: "respond"}', () => ({ update: [['answer', 'paired']], goto: 'respond' }))
  await commandOnInterrupt(s, '{resume: "yes", update: {messages: ["extra"]}}', () => ({ resume: 'yes', update: human('extra') }))
}

export const scenarios: Record<string, (s: Script) => Promise<void>> = {
  'fork-edit': forkEdit,
  regenerate,
  'state-on-checkpoint': stateOnCheckpoint,
  interrupt,
  failure,
  breakpoints,
  'as-node': asNode,
  'cancelled-then-continue': (s) => cancelAfterResearch(s, 'interrupt'),
  'cancel-rollback': (s) => cancelAfterResearch(s, 'rollback'),
  commands,
}

export const scenarioNames = Object.keys(scenarios)

/** Runs one scenario; a script that cannot go on ends its transcript with the reason. */
export async function runScenario(name: string, client: Client, settle: Settle): Promise<Transcript> {
  const script = new Script(client, settle)
  try {
    await scenarios[name](script)
  } catch (error) {
    if (!(error instanceof ScriptStopped)) throw error
    script.steps.push({ step: 'stopped', result: error.message })
  }
  return script.steps
}
