// One scenario's script: calls made with the official SDK, each answer reduced to what is compared
// (views below) and normalised (ids labelled, times dropped), in the order they were made. The same
// script runs against the real agent server (by test/time-travel/record.ts) and against hangar
// (by test/time-travel.test.ts): only `settle` differs.

import type { Client } from '@langchain/langgraph-sdk'
import { Labels, normalise } from './normalise.js'

/**
 * Waits for a call's answer. Against the real server it is the identity (its graphs sleep in real
 * time); against hangar it moves the manual clock while the call is pending.
 */
export type Settle = <T>(pending: Promise<T>) => Promise<T>

export interface Step {
  step: string
  result: unknown
}

export type Transcript = Step[]

/** Thrown when the script cannot go on (a checkpoint it looks for is not there): the transcript ends. */
export class ScriptStopped extends Error {}

/** An HTTP error as the SDK throws it (`HTTP <status>: <body>`). */
function httpError(error: unknown): { status: number; body: unknown } | undefined {
  if (!(error instanceof Error) || typeof (error as { status?: unknown }).status !== 'number') return undefined
  const status = (error as unknown as { status: number }).status
  const text = error.message.replace(/^HTTP \d+: /, '')
  try {
    return { status, body: JSON.parse(text) }
  } catch {
    return { status, body: text }
  }
}

/** A stream part as the SDK yields it. */
export interface Part {
  event: string
  data: unknown
}

export async function collect(stream: AsyncIterable<unknown>): Promise<Part[]> {
  const parts: Part[] = []
  for await (const part of stream) parts.push(part as Part)
  return parts
}

// Views: the part of an answer that is compared.

export const stateView = (state: any) => ({
  values: state.values,
  next: state.next,
  // Ordered by name: LangGraph orders a step's tasks by their ids, which are hashes.
  tasks: [...(state.tasks ?? [])].sort((a: any, b: any) => String(a.name).localeCompare(String(b.name))).map((task: any) => ({
    id: task.id,
    name: task.name,
    error: task.error,
    interrupts: task.interrupts,
    result: task.result,
  })),
  // The JS server leaves out what is undefined (no metadata before any checkpoint); Python servers
  // send null. Read alike.
  metadata: state.metadata ?? null,
  checkpoint: state.checkpoint,
  parent_checkpoint: state.parent_checkpoint,
})

export const historyView = (states: any[]) => ({ count: states.length, states: states.map(stateView) })

/** A thread without interrupts: the JS server leaves the field out, Python servers and hangar send {}. Read alike. */
export const threadView = (thread: any) => ({ status: thread.status, interrupts: thread.interrupts ?? {} })

export const runView = (run: any) => ({ run_id: run.run_id, status: run.status })

export const runsView = (runs: any[]) => runs.map(runView)

/** A thread's runs compared as a set (ordered by label): the JS server lists the oldest first, hangar the newest. */
const byRunLabel = (runs: unknown) =>
  Array.isArray(runs) ? [...runs].sort((a, b) => String(a.run_id).localeCompare(String(b.run_id), 'en', { numeric: true })) : runs

/**
 * A debug event without its payload's `config` / `parent_config`: the run's configurable and
 * metadata as the server passed them to the graph (the checkpoint ids in them are also in the
 * payload's `checkpoint` / `parent_checkpoint`).
 */
function withoutRunConfig(data: any) {
  if (typeof data?.payload !== 'object' || data.payload === null) return data
  const { config: _config, parent_config: _parent, ...payload } = data.payload
  return { ...data, payload }
}

/**
 * A `checkpoints` event as the JS server 1.5.1 sends it: `{values, metadata, next}`. hangar sends
 * the full form of the hosted server and of langgraph-api 2.0.0 (also `config`, `parent_config`,
 * `tasks`, `checkpoint`, `parent_checkpoint`; docs/agent-server-wire.md, "checkpoints"), a
 * superset a client reads alike: the fields 1.5.1 sends are compared.
 */
function checkpointFields(data: any) {
  if (typeof data !== 'object' || data === null) return data
  return { values: data.values, metadata: data.metadata, next: data.next }
}

/** Event names, and the data of every event but token chunks (their ids and chunking are not the point here). */
export const streamView = (parts: Part[]) =>
  parts.map((part) => {
    if (part.event.startsWith('messages')) return { event: part.event }
    const data = part.event === 'debug' ? withoutRunConfig(part.data) : part.event === 'checkpoints' ? checkpointFields(part.data) : part.data
    return { event: part.event, data }
  })

export class Script {
  readonly steps: Step[] = []
  readonly #labels = new Labels()

  constructor(
    readonly client: Client,
    readonly settle: Settle,
  ) {}

  /**
   * Makes a call, waits for it through `settle`, records `view(answer)` (or the HTTP error's status
   * and body) under `step`, and returns the answer (undefined after an HTTP error).
   */
  async call<T>(step: string, call: () => Promise<T>, view: (answer: T) => unknown = (answer) => answer): Promise<T | undefined> {
    try {
      const answer = await this.settle(call())
      this.record(step, answer === undefined ? null : view(answer))
      return answer
    } catch (error) {
      const failure = httpError(error)
      if (failure === undefined) throw error
      this.record(step, { error: failure })
      return undefined
    }
  }

  record(step: string, result: unknown) {
    this.steps.push({ step, result: normalise(result, this.#labels) })
  }

  /** A call whose answer the script needs to go on. */
  async need<T>(step: string, call: () => Promise<T>, view?: (answer: T) => unknown): Promise<T> {
    const answer = await this.call(step, call, view)
    if (answer === undefined) throw new ScriptStopped(`${step}: no answer`)
    return answer
  }

  /** A new thread; from here on, ids other than threads' are labelled afresh (see Labels.restart). */
  async thread(graphId?: string): Promise<string> {
    this.#labels.restart(['thread'])
    const step = graphId === undefined ? 'threads.create' : `threads.create {graphId: "${graphId}"}`
    const thread = await this.need(step, () => this.client.threads.create(graphId === undefined ? {} : { graphId }), (t) => ({ thread_id: t.thread_id }))
    return thread.thread_id
  }

  state(threadId: string, step = 'threads.getState') {
    return this.need(step, () => this.client.threads.getState(threadId), stateView)
  }

  history(threadId: string, step = 'threads.getHistory {limit: 100}') {
    return this.need(step, () => this.client.threads.getHistory(threadId, { limit: 100 }), historyView)
  }

  /** runs.wait, with a failure's `__error__` answer recorded rather than thrown. */
  wait(step: string, threadId: string, assistantId: string, payload: Record<string, unknown>) {
    return this.call(step, () => this.client.runs.wait(threadId, assistantId, { ...payload, raiseError: false }))
  }

  threadStatus(threadId: string, step = 'threads.get') {
    return this.call(step, () => this.client.threads.get(threadId), threadView)
  }

  async runs(threadId: string, step = 'runs.list') {
    const runs = await this.call(step, () => this.client.runs.list(threadId), runsView)
    const last = this.steps.at(-1)!
    last.result = byRunLabel(last.result)
    return runs
  }
}

/** The checkpoint id of the oldest history entry that satisfies `holds` (history is newest first). */
export function firstWhere(history: any[], holds: (state: any) => boolean, what: string): any {
  const found = [...history].reverse().find(holds)
  if (found === undefined) throw new ScriptStopped(`no history entry where ${what}`)
  return found
}

/** The parent checkpoint id of a state, or a stop when it has none. */
export function parentOf(state: any, what: string): string {
  const id = state?.parent_checkpoint?.checkpoint_id
  if (typeof id !== 'string') throw new ScriptStopped(`${what} has no parent checkpoint`)
  return id
}
