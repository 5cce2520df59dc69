// A2A tasks as hangar reads them back: a task is the run a message started (task id = run id) and
// the runs that resumed it after it stopped for input (each answer to an `input-required` task is a
// run resuming the thread's interrupt), so its state is its latest run's. Nothing is kept of its
// own: each read looks at the thread's runs and checkpoints.

import { randomUUID } from 'node:crypto'
import type { Run, RunRepository } from '../store/runs.js'
import { isObject } from './a2a-message.js'
import { lastOf, textOf, type Message } from './messages.js'
import type { RunExecutor, RunResult } from './run-executor.js'

type Json = Record<string, unknown>

export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'canceled' | 'failed'

/** States a task does not leave (A2A's terminal states). */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'canceled', 'failed'])

/** Whether a run answered an interrupt (a `command.resume`), i.e. continues the task before it on its thread. */
const resumes = (run: Run) => isObject(run.kwargs.command) && run.kwargs.command.resume !== undefined

/** An A2A message (v0.3 JSON) from a LangGraph message, or undefined for other kinds. */
function a2aMessage(message: Message, contextId: string, taskId: string): Json | undefined {
  const role = message.type === 'human' ? 'user' : message.type === 'ai' ? 'agent' : undefined
  if (!role) return undefined
  const id = typeof message.id === 'string' ? message.id : randomUUID()
  return { kind: 'message', role, messageId: id, contextId, taskId, parts: [{ kind: 'text', text: textOf(message) }] }
}

/** The state of a task whose run is still in progress (undefined once it has ended). */
const inProgress = (run: Run): TaskState | undefined => (run.status === 'pending' ? 'submitted' : run.status === 'running' ? 'working' : undefined)

export class A2ATasks {
  readonly #runs: RunRepository
  readonly #executor: RunExecutor

  constructor(runs: RunRepository, executor: RunExecutor) {
    this.#runs = runs
    this.#executor = executor
  }

  /** The run a task stands at now: its own, or the latest of the runs that resumed it, as stored now. */
  current(task: Run): Run {
    let run = this.#runs.bySeq(task.seq) ?? task
    for (let next = this.#runs.nextOnThread(run.thread_seq, run.seq); next && resumes(next); next = this.#runs.nextOnThread(run.thread_seq, run.seq)) {
      run = next
    }
    return run
  }

  /** The task's state now (an ended run's result is read back, not waited for). */
  async state(task: Run): Promise<TaskState> {
    const run = this.current(task)
    return inProgress(run) ?? stateOf(run, await this.#executor.join(run))
  }

  /** A task as it stands now: its state, and once its run has ended its answer (artifact) and its context's messages. */
  async view(task: Run, historyLength?: number): Promise<Json> {
    const current = this.current(task)
    const base = { kind: 'task', id: task.run_id, contextId: task.thread_id }
    const active = inProgress(current)
    if (active) return { ...base, status: { state: active, timestamp: current.updated_at } }
    const result = await this.#executor.join(current)
    const state = stateOf(current, result)
    const values: Json = isObject(result) && !('__error__' in result) ? result : {}
    const messages = Array.isArray(values.messages) ? (values.messages as Message[]) : []
    const history = messages.map((m) => a2aMessage(m, task.thread_id, task.run_id)).filter((m) => m !== undefined)
    const answer = lastOf(values.messages, 'ai')
    const status: Json = { state, timestamp: current.updated_at }
    if (state === 'failed') status.message = agentText(task, current, failureText(result))
    if (state === 'input-required') status.message = agentText(task, current, interruptText(values))
    const artifacts = state === 'completed' && answer
      ? [{ artifactId: typeof answer.id === 'string' ? answer.id : current.run_id, name: 'Assistant Response', parts: [{ kind: 'text', text: textOf(answer) }] }]
      : []
    return {
      ...base,
      status,
      artifacts,
      history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    }
  }
}

function stateOf(run: Run, result: RunResult): TaskState {
  if (run.status === 'interrupted') return 'canceled'
  if (run.status === 'error' || run.status === 'timeout' || '__error__' in result) return 'failed'
  if ('__interrupt__' in result) return 'input-required'
  return 'completed'
}

/** The agent's status message of a task, told by the run it stands at (one id per run). */
function agentText(task: Run, current: Run, text: string): Json {
  return { kind: 'message', role: 'agent', messageId: `${current.run_id}-status`, contextId: task.thread_id, taskId: task.run_id, parts: [{ kind: 'text', text }] }
}

function failureText(result: RunResult): string {
  const error = isObject(result) && isObject(result.__error__) ? result.__error__ : {}
  return typeof error.message === 'string' ? error.message : 'The run failed.'
}

/** What the graph asks for: the first pending interrupt's value (as JSON unless it is a string). */
function interruptText(values: Json): string {
  const interrupts = Array.isArray(values.__interrupt__) ? values.__interrupt__ : []
  const first = isObject(interrupts[0]) ? interrupts[0].value : undefined
  return typeof first === 'string' ? first : JSON.stringify(first ?? null)
}
