// The agent server's A2A endpoint (protocol 0.3, JSON-RPC): an assistant as an A2A agent. The run
// that answers a message is the task (task id = run id) and the thread it runs on is the context
// (contextId = thread_id), so a conversation continues on its thread; a message naming a task that
// waits for input resumes that task's interrupted thread. What a message carries is
// a2a-message.ts; how a task is read back from its runs (nothing is kept of its own) a2a-task.ts. In
// `HANGAR_AGENT_AUTH=users` a task or context of another user's is not found, as that user's thread is not.

import { randomUUID } from 'node:crypto'
import { owns, type Caller } from '../domain/agent-users.js'
import { NotFound, ThreadBusy } from '../domain/errors.js'
import type { RunCreate } from '../schemas/agent.js'
import type { Assistant, AssistantRepository } from '../store/assistants.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { invalidParams, isObject, readMessage, resumeValue, runInput, type InboundMessage } from './a2a-message.js'
import { A2ATasks, TERMINAL_STATES } from './a2a-task.js'
import type { RunExecutor } from './run-executor.js'
import type { RequestContext, RunRequests } from './run-requests.js'
import { resolveAssistantId } from './system-assistants.js'
import { paramsObject, RPC_CODES, RpcError } from './json-rpc.js'
import type { GraphEngine } from './types.js'

/** The A2A protocol version hangar's agent cards and answers follow (the hosted server's). */
export const A2A_PROTOCOL_VERSION = '0.3.0'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const MODES = ['text/plain', 'application/json']

export interface A2AOptions {
  assistants: AssistantRepository
  runs: RunRepository
  threads: Pick<ThreadRepository, 'bySeq'>
  executor: RunExecutor
  runRequests: RunRequests
  engine: GraphEngine
}

type Json = Record<string, unknown>

/** A message the endpoint took: the task it is part of, the run now answering it, the message as echoed back. */
export interface Started {
  task: Run
  run: Run
  message: Json
  blocking: boolean
}

export class A2AEndpoint {
  readonly #o: A2AOptions

  readonly #tasks: A2ATasks

  constructor(options: A2AOptions) {
    this.#o = options
    this.#tasks = new A2ATasks(options.runs, options.executor)
  }

  /** The assistant an A2A path names (an id or a graph id), or a JSON-RPC error with a 404. */
  assistant(scope: string, assistantId: string): Assistant {
    const found = this.#o.assistants.get(scope, resolveAssistantId(this.#o.engine, assistantId))
    if (!found) throw new RpcError(RPC_CODES.invalidParams, `Assistant ${assistantId} not found`, 404)
    return found
  }

  /** The agent card of an assistant, its endpoint under `endpointBase` (scheme://host[/prefix]). */
  card(scope: string, assistantId: string, endpointBase: string): Json {
    const assistant = this.#o.assistants.get(scope, resolveAssistantId(this.#o.engine, assistantId))
    if (!assistant) throw new NotFound(`Assistant ${assistantId} not found`)
    const description = assistant.description ?? this.#o.engine.info(assistant.graph_id)?.description ?? `The ${assistant.graph_id} graph`
    return {
      protocolVersion: A2A_PROTOCOL_VERSION,
      name: assistant.name,
      description,
      url: `${endpointBase}/a2a/${assistant.assistant_id}`,
      preferredTransport: 'JSONRPC',
      version: String(assistant.version),
      capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
      defaultInputModes: MODES,
      defaultOutputModes: MODES,
      skills: [
        {
          id: `${assistant.graph_id}-main`,
          name: `${assistant.name} capabilities`,
          description,
          tags: ['assistant', 'langgraph', assistant.graph_id],
          examples: [],
          inputModes: MODES,
          outputModes: MODES,
        },
      ],
    }
  }

  /**
   * `message/send` and `message/stream`: a message naming no task starts one, a run on the
   * message's context (a new thread when it names none); a message naming a task that waits for
   * input (`input-required`) resumes it, a run resuming the thread's interrupt with the message's
   * value. Answers the task, the run now answering, and the user message as A2A echoes it back.
   */
  async start(context: RequestContext, assistant: Assistant, rawParams: unknown): Promise<Started> {
    const params = paramsObject(rawParams)
    const message = readMessage(params)
    const answering = message.taskId === undefined ? undefined : await this.#waitingTask(context.scope, message, context.user ?? null)
    const threadId = answering?.thread_id ?? message.contextId ?? randomUUID()
    const body = (answering
      ? { assistant_id: assistant.assistant_id, command: { resume: resumeValue(message) } }
      : { assistant_id: assistant.assistant_id, input: runInput(message), if_not_exists: 'create' }) as RunCreate
    let run: Run
    try {
      run = this.#o.runRequests.create(context, threadId, body)
    } catch (error) {
      if (error instanceof ThreadBusy) throw new RpcError(RPC_CODES.invalidRequest, `Context ${threadId} already has a task in progress`, 409)
      // Another user's context (thread): not there for this one, as an unknown assistant is not.
      if (error instanceof NotFound) throw new RpcError(RPC_CODES.invalidParams, `Context ${threadId} not found`, 404)
      throw error
    }
    const task = answering ?? run
    const configuration = isObject(params.configuration) ? params.configuration : {}
    return {
      task,
      run,
      message: { ...message.raw, kind: 'message', contextId: task.thread_id, taskId: task.run_id },
      blocking: configuration.blocking !== false,
    }
  }

  /**
   * The task a message answers: it must wait for input. One in progress makes the context busy
   * (409); one that has ended cannot take more messages (A2A's UnsupportedOperation).
   */
  async #waitingTask(scope: string, message: InboundMessage, caller: Caller): Promise<Run> {
    const task = this.#find(scope, message.taskId!, caller)
    if (message.contextId !== undefined && message.contextId !== task.thread_id) {
      throw invalidParams(`message.contextId ${message.contextId} is not the context of task ${task.run_id}`)
    }
    const state = await this.#tasks.state(task)
    if (state === 'submitted' || state === 'working') {
      throw new RpcError(RPC_CODES.invalidRequest, `Task ${task.run_id} is still in progress`, 409)
    }
    if (TERMINAL_STATES.has(state)) {
      throw new RpcError(RPC_CODES.unsupportedOperation, `Task ${task.run_id} is in a terminal state (${state}) and cannot be modified`)
    }
    return task
  }

  /** The run a task id names, in this agent server and on a thread of the caller's, or A2A's TaskNotFound. */
  #find(scope: string, taskId: string, caller: Caller): Run {
    const run = UUID.test(taskId) ? this.#o.runs.byId(scope, taskId.toLowerCase()) : undefined
    if (!run || !owns(caller, this.#o.threads.bySeq(run.thread_seq)?.metadata ?? {})) throw new RpcError(RPC_CODES.taskNotFound, `Task ${taskId} not found`, 404)
    return run
  }

  /** The task the params' `id` names (on `contextId`'s thread when given). */
  #taskRun(scope: string, rawParams: unknown, caller: Caller): { task: Run; historyLength: number | undefined } {
    const params = paramsObject(rawParams)
    if (typeof params.id !== 'string') throw invalidParams('id is required')
    if (params.contextId !== undefined && typeof params.contextId !== 'string') throw invalidParams('contextId must be a string')
    const length = params.historyLength
    if (length !== undefined && length !== null && (typeof length !== 'number' || !Number.isInteger(length) || length < 0)) {
      throw invalidParams('historyLength must be a non-negative integer')
    }
    const task = this.#find(scope, params.id, caller)
    if (params.contextId !== undefined && task.thread_id !== params.contextId.toLowerCase()) {
      throw new RpcError(RPC_CODES.taskNotFound, `Task ${params.id} not found`, 404)
    }
    return { task, historyLength: typeof length === 'number' ? length : undefined }
  }

  /** `tasks/get`. */
  async get(scope: string, params: unknown, caller: Caller): Promise<Json> {
    const { task, historyLength } = this.#taskRun(scope, params, caller)
    return this.#tasks.view(task, historyLength)
  }

  /** `tasks/cancel`: a task still in progress is interrupted (its run keeps what it did); an ended one cannot be. */
  async cancel(scope: string, params: unknown, caller: Caller): Promise<Json> {
    const { task } = this.#taskRun(scope, params, caller)
    const run = this.#tasks.current(task)
    if (run.status !== 'pending' && run.status !== 'running') {
      throw new RpcError(RPC_CODES.taskNotCancelable, `Task ${task.run_id} has ended and cannot be canceled`)
    }
    this.#o.executor.cancel(run, 'interrupt')
    await this.#o.executor.join(run)
    return this.#tasks.view(task)
  }

  /**
   * `tasks/resubscribe`: what is left of a task's stream. A task in progress: the task as it stands,
   * then (once its run has ended) its answer and its final status. A task waiting for input: the
   * task, once (its stream has ended; the next message resumes it). A task that has ended: A2A's
   * UnsupportedOperation, as the official SDK's server answers. Refusals come before the stream.
   */
  async resubscribe(scope: string, rawParams: unknown, caller: Caller): Promise<AsyncGenerator<Json>> {
    const { task } = this.#taskRun(scope, rawParams, caller)
    const state = await this.#tasks.state(task)
    if (TERMINAL_STATES.has(state)) {
      throw new RpcError(RPC_CODES.unsupportedOperation, `Task ${task.run_id} is in a terminal state (${state}) and cannot be subscribed to`)
    }
    return this.#rest(task)
  }

  async *#rest(task: Run): AsyncGenerator<Json> {
    const snapshot = await this.#tasks.view(task)
    yield snapshot
    const state = (snapshot.status as { state: string }).state
    if (state === 'submitted' || state === 'working') yield* this.#ending(task, this.#tasks.current(task))
  }

  /** `tasks/pushNotificationConfig/*`: the card says `pushNotifications: false`, so every one is A2A's PushNotificationNotSupported. */
  pushNotificationConfig(): never {
    throw new RpcError(RPC_CODES.pushNotificationNotSupported, 'Push Notification is not supported')
  }

  /**
   * What `message/stream` sends, in order: the task as submitted (with the user's message), the
   * status `working`, then once the run has ended its answer as an artifact and the final status.
   */
  async *stream({ task, run, message }: Started): AsyncGenerator<Json> {
    const ids = { taskId: task.run_id, contextId: task.thread_id }
    yield { kind: 'task', id: task.run_id, contextId: task.thread_id, status: { state: 'submitted', timestamp: run.created_at }, history: [message] }
    yield { kind: 'status-update', ...ids, status: { state: 'working', timestamp: run.created_at }, final: false }
    yield* this.#ending(task, run)
  }

  /** The end of a task's stream: once `run` has ended, the task's answer as an artifact and its final status. */
  async *#ending(task: Run, run: Run): AsyncGenerator<Json> {
    const ids = { taskId: task.run_id, contextId: task.thread_id }
    await this.#o.executor.join(run)
    const view = await this.#tasks.view(task)
    for (const artifact of view.artifacts as Json[]) yield { kind: 'artifact-update', ...ids, artifact, append: false, lastChunk: true }
    yield { kind: 'status-update', ...ids, status: view.status, final: true }
  }

  /** Waits for a run to end. */
  async settle(run: Run): Promise<void> {
    await this.#o.executor.join(run)
  }

  /** A task as it stands now. */
  task(task: Run): Promise<Json> {
    return this.#tasks.view(task)
  }
}
