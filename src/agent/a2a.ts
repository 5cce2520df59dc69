// The agent server's A2A endpoint (protocol 0.3, JSON-RPC): an assistant as an A2A agent. A
// message's text parts become a human message and its data parts input keys; the run that answers
// it is the task (task id = run id) and the thread it runs on is the context (contextId =
// thread_id), so a conversation continues on its thread. Tasks are not kept anywhere of their own:
// each is read back from its run and the thread's checkpoints. In `HANGAR_AGENT_AUTH=users` a
// task or context of another user's is not found, as that user's thread is not.

import { randomUUID } from 'node:crypto'
import { owns, type Caller } from '../domain/agent-users.js'
import { NotFound, ThreadBusy } from '../domain/errors.js'
import type { RunCreate } from '../schemas/agent.js'
import type { Assistant, AssistantRepository } from '../store/assistants.js'
import type { Run, RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { lastOf, textOf, type Message } from './messages.js'
import type { RunExecutor, RunResult } from './run-executor.js'
import type { RequestContext, RunRequests } from './run-requests.js'
import { resolveAssistantId } from './system-assistants.js'
import { paramsObject, RPC_CODES, RpcError } from './json-rpc.js'
import type { GraphEngine } from './types.js'

/** The A2A protocol version hangar's agent cards and answers follow (the hosted server's). */
export const A2A_PROTOCOL_VERSION = '0.3.0'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const MODES = ['text/plain', 'application/json']

export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'canceled' | 'failed'

export interface A2AOptions {
  assistants: AssistantRepository
  runs: RunRepository
  threads: Pick<ThreadRepository, 'bySeq'>
  executor: RunExecutor
  runRequests: RunRequests
  engine: GraphEngine
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const invalid = (message: string) => new RpcError(RPC_CODES.invalidParams, `Invalid params: ${message}`)

/** An A2A message (v0.3 JSON) from a LangGraph message, or undefined for other kinds. */
function a2aMessage(message: Message, contextId: string, taskId: string): Json | undefined {
  const role = message.type === 'human' ? 'user' : message.type === 'ai' ? 'agent' : undefined
  if (!role) return undefined
  const id = typeof message.id === 'string' ? message.id : randomUUID()
  return { kind: 'message', role, messageId: id, contextId, taskId, parts: [{ kind: 'text', text: textOf(message) }] }
}

export class A2AEndpoint {
  readonly #o: A2AOptions

  constructor(options: A2AOptions) {
    this.#o = options
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
   * `message/send` and `message/stream`: the run answering the message, on the message's context
   * (a new thread when it names none), and the user message as A2A echoes it back.
   */
  start(context: RequestContext, assistant: Assistant, rawParams: unknown): { run: Run; message: Json; blocking: boolean } {
    const params = paramsObject(rawParams)
    const message = params.message
    if (!isObject(message)) throw invalid('message is required')
    if (message.role !== 'user' && message.role !== 'agent') throw invalid('message.role must be "user" or "agent"')
    if (typeof message.messageId !== 'string') throw invalid('message.messageId is required')
    if (!Array.isArray(message.parts) || message.parts.length === 0) throw invalid('message.parts must be a non-empty array')
    if (message.contextId !== undefined && (typeof message.contextId !== 'string' || !UUID.test(message.contextId))) {
      throw invalid('message.contextId must be a UUID (it is the thread id)')
    }
    const texts: string[] = []
    let data: Json = {}
    for (const part of message.parts) {
      if (isObject(part) && part.kind === 'text' && typeof part.text === 'string') texts.push(part.text)
      else if (isObject(part) && part.kind === 'data' && isObject(part.data)) data = { ...data, ...part.data }
      else if (isObject(part) && part.kind === 'file') throw invalid('file parts are not supported')
      else throw invalid('each part must be a text part or a data part')
    }
    const input: Json = { ...data }
    if (texts.length > 0) input.messages = [{ type: 'human', content: texts.join('\n') }]
    const threadId = (message.contextId as string | undefined)?.toLowerCase() ?? randomUUID()
    const body = { assistant_id: assistant.assistant_id, input, if_not_exists: 'create' } as RunCreate
    let run: Run
    try {
      run = this.#o.runRequests.create(context, threadId, body)
    } catch (error) {
      if (error instanceof ThreadBusy) throw new RpcError(RPC_CODES.invalidRequest, `Context ${threadId} already has a task in progress`, 409)
      // Another user's context (thread): not there for this one, as an unknown assistant is not.
      if (error instanceof NotFound) throw new RpcError(RPC_CODES.invalidParams, `Context ${threadId} not found`, 404)
      throw error
    }
    const configuration = isObject(params.configuration) ? params.configuration : {}
    return {
      run,
      message: { ...message, kind: 'message', contextId: run.thread_id, taskId: run.run_id },
      blocking: configuration.blocking !== false,
    }
  }

  /** The run a task id names, in this agent server (and on `contextId`'s thread when given), on a thread of the caller's. */
  #taskRun(scope: string, rawParams: unknown, caller: Caller): { run: Run; historyLength: number | undefined } {
    const params = paramsObject(rawParams)
    if (typeof params.id !== 'string') throw invalid('id is required')
    if (params.contextId !== undefined && typeof params.contextId !== 'string') throw invalid('contextId must be a string')
    const length = params.historyLength
    if (length !== undefined && length !== null && (typeof length !== 'number' || !Number.isInteger(length) || length < 0)) {
      throw invalid('historyLength must be a non-negative integer')
    }
    const run = UUID.test(params.id) ? this.#o.runs.byId(scope, params.id.toLowerCase()) : undefined
    const mine = run !== undefined && owns(caller, this.#o.threads.bySeq(run.thread_seq)?.metadata ?? {})
    if (!run || !mine || (params.contextId !== undefined && run.thread_id !== params.contextId.toLowerCase())) {
      throw new RpcError(RPC_CODES.taskNotFound, `Task ${params.id} not found`, 404)
    }
    return { run, historyLength: typeof length === 'number' ? length : undefined }
  }

  /** `tasks/get`. */
  async get(scope: string, params: unknown, caller: Caller): Promise<Json> {
    const { run, historyLength } = this.#taskRun(scope, params, caller)
    return this.task(run, historyLength)
  }

  /** `tasks/cancel`: a task still in progress is interrupted (its run keeps what it did); an ended one cannot be. */
  async cancel(scope: string, params: unknown, caller: Caller): Promise<Json> {
    const { run } = this.#taskRun(scope, params, caller)
    if (run.status !== 'pending' && run.status !== 'running') {
      throw new RpcError(RPC_CODES.taskNotCancelable, `Task ${run.run_id} has ended and cannot be canceled`)
    }
    this.#o.executor.cancel(run, 'interrupt')
    await this.#o.executor.join(run)
    return this.task(run)
  }

  /**
   * What `message/stream` sends, in order: the task as submitted (with the user's message), the
   * status `working`, then once the run has ended its answer as an artifact and the final status.
   */
  async *stream(run: Run, message: Json): AsyncGenerator<Json> {
    const ids = { taskId: run.run_id, contextId: run.thread_id }
    yield { kind: 'task', id: run.run_id, contextId: run.thread_id, status: { state: 'submitted', timestamp: run.created_at }, history: [message] }
    yield { kind: 'status-update', ...ids, status: { state: 'working', timestamp: run.created_at }, final: false }
    await this.#o.executor.join(run)
    const task = await this.task(run)
    for (const artifact of task.artifacts as Json[]) yield { kind: 'artifact-update', ...ids, artifact, append: false, lastChunk: true }
    yield { kind: 'status-update', ...ids, status: task.status, final: true }
  }

  /** Waits for the task's run to end. */
  async settle(run: Run): Promise<void> {
    await this.#o.executor.join(run)
  }

  /** A task as it stands now: its state, and once it has ended its answer (artifact) and its context's messages. */
  async task(run: Run, historyLength?: number): Promise<Json> {
    const current = this.#o.runs.bySeq(run.seq) ?? run
    const base = { kind: 'task', id: run.run_id, contextId: run.thread_id }
    if (current.status === 'pending' || current.status === 'running') {
      return { ...base, status: { state: current.status === 'pending' ? 'submitted' : 'working', timestamp: current.updated_at } }
    }
    const result = await this.#o.executor.join(current)
    const state = stateOf(current, result)
    const values: Json = isObject(result) && !('__error__' in result) ? result : {}
    const messages = Array.isArray(values.messages) ? (values.messages as Message[]) : []
    const history = messages.map((m) => a2aMessage(m, run.thread_id, run.run_id)).filter((m) => m !== undefined)
    const answer = lastOf(values.messages, 'ai')
    const status: Json = { state, timestamp: current.updated_at }
    if (state === 'failed') status.message = failure(result, run)
    if (state === 'input-required') status.message = interruptMessage(values, run)
    const artifacts = state === 'completed' && answer
      ? [{ artifactId: typeof answer.id === 'string' ? answer.id : run.run_id, name: 'Assistant Response', parts: [{ kind: 'text', text: textOf(answer) }] }]
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

function agentText(run: Run, text: string): Json {
  return { kind: 'message', role: 'agent', messageId: `${run.run_id}-status`, contextId: run.thread_id, taskId: run.run_id, parts: [{ kind: 'text', text }] }
}

function failure(result: RunResult, run: Run): Json {
  const error = isObject(result) && isObject(result.__error__) ? result.__error__ : {}
  return agentText(run, typeof error.message === 'string' ? error.message : 'The run failed.')
}

function interruptMessage(values: Json, run: Run): Json {
  const interrupts = Array.isArray(values.__interrupt__) ? values.__interrupt__ : []
  const first = isObject(interrupts[0]) ? interrupts[0].value : undefined
  return agentText(run, typeof first === 'string' ? first : JSON.stringify(first ?? null))
}
