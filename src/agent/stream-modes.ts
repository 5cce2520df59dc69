// The wire form of every stream mode. The engine says what happened (a step's state, a node's
// update, a token, a checkpoint…); this turns it into the events the requested modes ask for, in
// the order the real server sends them. Nothing here waits or decides: it only shapes payloads.

import { v4 as uuid4, v5 as uuid5, parse as parseUuid } from 'uuid'
import type { Message } from './messages.js'
import { chunkOf, type PartialReply, type Piece, type ScriptedReply, type ToolCall } from './reply-chunks.js'
import { taskPath } from './checkpoints.js'
import { ProtocolEvents } from './protocol-events.js'
import type { CheckpointRecord, Emit, Interrupt, ProtocolEvent, RunRequest, State } from './types.js'

/** The namespace of the ids of tool runs in the `events` mode. */
const TOOL_RUNS = parseUuid('3c2b8f61-0d4e-4a7b-9f15-6e2d8c4b1a90')
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const CHECKPOINT_KEYS = ['checkpoint_id', 'checkpoint_ns', 'thread_id']
const HIDDEN_CONFIGURABLE = /^(__|checkpoint_(id|ns|map)$|langgraph_auth_)/

/**
 * The run's metadata as checkpoints and message metadata carry it: the config's `metadata`, then
 * every plain (string, number, boolean) `configurable` value that is not internal, then the ids.
 */
export function runMetadata(request: Pick<RunRequest, 'config' | 'ids'>): Record<string, unknown> {
  const configurable = isObject(request.config.configurable) ? request.config.configurable : {}
  const plain = Object.entries(configurable).filter(
    ([key, value]) => !HIDDEN_CONFIGURABLE.test(key) && ['string', 'number', 'boolean'].includes(typeof value),
  )
  return { ...(isObject(request.config.metadata) ? request.config.metadata : {}), ...Object.fromEntries(plain), ...request.ids }
}

/** One running task, as the modes describe it. */
export interface TaskView {
  id: string
  name: string
  step: number
  input: State
  /** A Send's task: its path (`["__pregel_push", i, false]`); others are pulled by an edge. */
  pushed?: unknown[]
}

/** What started a task: an edge into its node, or a Send. */
export const triggersOf = (task: TaskView) => (task.pushed ? ['__pregel_push'] : [`branch:to:${task.name}`])

export class StreamModes {
  readonly #modes: Set<string>
  readonly #request: RunRequest
  readonly #meta: Record<string, unknown>
  readonly #tags: unknown[]
  /** Message ids already sent by legacy `messages/complete` (or streamed) in this run. */
  readonly #completed = new Set<string>()
  /** The chat-model run of the reply being streamed (`events` mode). */
  #chatRun: string | undefined
  /** The session protocol's events, when the run asked for them. */
  readonly #protocolEvents: ProtocolEvents | null
  /** A subgraph's namespace (`<node>:<task id>` per level); empty for the root graph. */
  readonly #ns: string[]

  /** `meta`: the run's metadata (runMetadata), which the run's checkpoints carry too. */
  constructor(request: RunRequest, ns: string[], meta: Record<string, unknown>) {
    this.#request = request
    this.#ns = ns
    this.#modes = new Set(request.streamModes)
    this.#meta = meta
    this.#tags = Array.isArray(request.config.tags) ? request.config.tags : []
    this.#protocolEvents = request.protocol ? new ProtocolEvents() : null
  }

  /** The protocol's events for one happening (none when the run did not ask for them). */
  #protocol(make: (events: ProtocolEvents) => ProtocolEvent[]): Emit[] {
    return this.#protocolEvents ? make(this.#protocolEvents).map((protocol) => ({ protocol })) : []
  }

  has(mode: string): boolean {
    return this.#modes.has(mode)
  }

  /** Metadata of what a task does (`messages-tuple`, `tasks`, `events`). */
  taskMetadata(task: TaskView): Record<string, unknown> {
    const ns = [...this.#ns, `${task.name}:${task.id}`].join('|')
    return {
      tags: this.#tags,
      ...this.#meta,
      langgraph_step: task.step,
      langgraph_node: task.name,
      langgraph_triggers: triggersOf(task),
      langgraph_path: task.pushed ?? taskPath(task.name),
      langgraph_checkpoint_ns: ns,
      checkpoint_ns: ns,
    }
  }

  #chatMetadata(task: TaskView) {
    return { ...this.taskMetadata(task), ls_provider: 'hangar', ls_model_name: 'hangar-scripted', ls_model_type: 'chat' }
  }

  #event(event: string, data: unknown, name: string, runId: string, tags: unknown[], metadata: object, parents: string[]): Emit {
    return { event: 'events', data: { event, data, name, tags, run_id: runId, metadata, parent_ids: parents } }
  }

  #nodeEvent(task: TaskView, event: string, data: unknown): Emit {
    const tags = [`graph:step:${task.step}`]
    return this.#event(event, data, task.name, task.id, tags, this.taskMetadata(task), [this.#request.ids.run_id])
  }

  // --- the run as a whole -------------------------------------------------------------------

  graphStart(input: unknown): Emit[] {
    if (!this.has('events')) return []
    const { run_id } = this.#request.ids
    return [this.#event('on_chain_start', { input }, 'LangGraph', run_id, this.#tags, this.#meta, [])]
  }

  graphEnd(output: unknown): Emit[] {
    if (!this.has('events')) return []
    const { run_id } = this.#request.ids
    return [this.#event('on_chain_end', { output }, 'LangGraph', run_id, this.#tags, this.#meta, [])]
  }

  /** A full state snapshot: `values`, and the legacy `messages/complete` of messages not seen yet. */
  values(state: State): Emit[] {
    const out: Emit[] = this.#protocol((p) => p.values(state))
    if (this.has('values')) out.push({ event: 'values', data: state })
    if (this.has('messages')) {
      const fresh = (Array.isArray(state.messages) ? (state.messages as Message[]) : []).filter((m) => !this.#completed.has(m.id as string))
      fresh.forEach((m) => this.#completed.add(m.id as string))
      if (fresh.length > 0) out.push({ event: 'messages/complete', data: fresh })
    }
    return out
  }

  /** The graph stopped at an interrupt: `updates` then `values`, both `{"__interrupt__": [...]}`. */
  interrupted(interrupts: Interrupt[]): Emit[] {
    const data = { __interrupt__: interrupts }
    return [
      ...(this.has('updates') ? [{ event: 'updates', data }] : []),
      ...(this.has('values') ? [{ event: 'values', data }] : []),
    ]
  }

  checkpoint(record: CheckpointRecord): Emit[] {
    const protocol = this.#protocol((p) => p.checkpoint(record))
    if (!this.has('checkpoints') && !this.has('debug')) return protocol
    const payload = this.#checkpointPayload(record)
    const step = record.metadata.step as number
    return [
      ...protocol,
      ...(this.has('checkpoints') ? [{ event: 'checkpoints', data: payload }] : []),
      ...(this.has('debug') ? [this.#debug(step, 'checkpoint', payload)] : []),
    ]
  }

  /**
   * With `stream_subgraphs`, the JS server also sends each loop checkpoint of a `values` stream as a
   * compact `checkpoints` event (`{id, parent_id, step, source}`) right before its values.
   */
  checkpointBrief(record: CheckpointRecord): Emit[] {
    if (!this.#request.subgraphs || !this.has('values') || this.has('checkpoints') || record.metadata.source === 'input') return []
    const { checkpoint_id: id, parent_checkpoint_id: parent_id } = record
    return [{ event: 'checkpoints', data: { id, parent_id, step: record.metadata.step, source: record.metadata.source } }]
  }

  #checkpointPayload(record: CheckpointRecord) {
    const { thread_id } = this.#request.ids
    const configurable = isObject(this.#request.config.configurable) ? this.#request.config.configurable : {}
    const ns = this.#ns.join('|')
    const ref = (id: string) => ({ thread_id, checkpoint_id: id, checkpoint_ns: ns, checkpoint_map: null })
    const config = (id: string) => ({
      configurable: { checkpoint_ns: ns, thread_id, checkpoint_id: id, ...omit(configurable, CHECKPOINT_KEYS) },
      metadata: isObject(this.#request.config.metadata) ? this.#request.config.metadata : {},
      recursion_limit: typeof this.#request.config.recursion_limit === 'number' ? this.#request.config.recursion_limit : 25,
      tags: this.#tags,
    })
    const parent = record.parent_checkpoint_id
    return {
      config: config(record.checkpoint_id),
      values: record.values,
      metadata: record.metadata,
      next: record.next,
      tasks: record.tasks.map((t) => ({
        id: t.id,
        name: t.name,
        path: t.path,
        interrupts: t.interrupts,
        ...(t.error !== null ? { error: t.error } : {}),
      })),
      checkpoint: ref(record.checkpoint_id),
      parent_checkpoint: parent === null ? null : ref(parent),
      ...(parent === null ? {} : { parent_config: config(parent) }),
    }
  }

  #debug(step: number, type: 'checkpoint' | 'task' | 'task_result', payload: unknown): Emit {
    return { event: 'debug', data: { step, type, timestamp: new Date(this.#request.clock.now()).toISOString(), payload } }
  }

  // --- one task ------------------------------------------------------------------------------

  taskStart(task: TaskView): Emit[] {
    const payload = {
      id: task.id,
      name: task.name,
      input: task.input,
      triggers: triggersOf(task),
      interrupts: [],
      metadata: this.taskMetadata(task),
    }
    return [
      ...this.#protocol((p) => p.taskStart(task, payload.metadata)),
      ...(this.has('tasks') ? [{ event: 'tasks', data: payload }] : []),
      ...(this.has('debug') ? [this.#debug(task.step, 'task', payload)] : []),
      ...(this.has('events')
        ? [this.#nodeEvent(task, 'on_chain_start', { input: task.input })]
        : []),
    ]
  }

  /** A task ended: with its writes, at an interrupt, or with an error (the task-error JSON text). */
  taskEnd(task: TaskView, outcome: { writes: Record<string, unknown> | null; interrupts: Interrupt[]; error: string | null }): Emit[] {
    // The error travels as its JSON text in a checkpoint's task, as an object in the stream.
    const error = outcome.error === null ? null : JSON.parse(outcome.error) as unknown
    const payload = { id: task.id, name: task.name, result: outcome.writes ?? {}, interrupts: outcome.interrupts, error }
    const ran = outcome.error === null && outcome.interrupts.length === 0
    return [
      ...(this.has('tasks') ? [{ event: 'tasks', data: payload }] : []),
      ...(this.has('debug') ? [this.#debug(task.step, 'task_result', payload)] : []),
      ...(this.has('events') && ran
        ? [this.#nodeEvent(task, 'on_chain_end', { input: task.input, output: outcome.writes })]
        : []),
    ]
  }

  /**
   * The protocol's end of a task (its result, then its namespace's lifecycle), which comes after
   * the node's update. A task that runs a subgraph does not ask for input itself: its subgraph did.
   */
  taskDone(task: TaskView, outcome: { writes: Record<string, unknown> | null; interrupts: Interrupt[]; error: string | null }, subgraph = false): Emit[] {
    return this.#protocol((p) => p.taskEnd(task, outcome, subgraph))
  }

  /** The protocol's `started` of a task's namespace, before its subgraph's first event there (once). */
  opened(task: TaskView): Emit[] {
    return this.#protocol((p) => p.open(task))
  }

  /** `updates`: what one node returned (null when it wrote nothing). */
  updates(node: string, writes: Record<string, unknown>): Emit[] {
    const protocol = this.#protocol((p) => p.updates(node, writes))
    if (!this.has('updates')) return protocol
    return [...protocol, { event: 'updates', data: { [node]: Object.keys(writes).length > 0 ? writes : null } }]
  }

  custom(payload: unknown): Emit[] {
    return [...this.#protocol((p) => p.custom(payload)), ...(this.has('custom') ? [{ event: 'custom', data: payload }] : [])]
  }

  // --- a streamed reply ----------------------------------------------------------------------

  replyStart(task: TaskView, messageId: string, history: unknown, reply: ScriptedReply): Emit[] {
    const out: Emit[] = this.#protocol((p) => p.replyStart(task, messageId, reply))
    if (this.has('messages')) {
      out.push({ event: 'messages/metadata', data: { [messageId]: { metadata: this.#chatMetadata(task) } } })
    }
    if (this.has('events')) {
      this.#chatRun = uuid4()
      out.push(this.#chatEvent(task, 'on_chat_model_start', { input: { messages: [history] } }))
    }
    return out
  }

  /** The protocol's text block of a reply opens (a turn before its first chunk, as on the real server). */
  replyOpen(task: TaskView, messageId: string): Emit[] {
    return this.#protocol((p) => p.firstBlockStart(task, messageId))
  }

  /** One streamed piece of a reply (a word, a tool call, a piece of its arguments, the last chunk); `partial` holds all so far. */
  replyChunk(task: TaskView, messageId: string, piece: Piece, partial: PartialReply): Emit[] {
    const chunk = chunkOf(messageId, piece)
    const out: Emit[] = this.#protocol((p) => p.replyChunk(task, messageId, piece))
    if (this.has('messages-tuple')) out.push({ event: 'messages', data: [chunk, this.#chatMetadata(task)] })
    if (this.has('messages')) out.push({ event: 'messages/partial', data: [partial.message(messageId)] })
    if (this.has('events')) out.push(this.#chatEvent(task, 'on_chat_model_stream', { chunk }))
    return out
  }

  replyEnd(task: TaskView, message: Message, history: unknown): Emit[] {
    const out: Emit[] = this.#protocol((p) => p.replyEnd(task, message))
    if (this.has('messages')) {
      this.#completed.add(message.id as string)
      out.push({ event: 'messages/complete', data: [message] })
    }
    if (this.has('events')) out.push(this.#chatEvent(task, 'on_chat_model_end', { output: message, input: { messages: [history] } }))
    return out
  }

  #chatEvent(task: TaskView, event: string, data: unknown): Emit {
    return this.#event(event, data, 'HangarChatModel', this.#chatRun!, [], this.#chatMetadata(task), [this.#request.ids.run_id, task.id])
  }

  // --- the calls of a tools step ----------------------------------------------------------------

  toolStart(task: TaskView, call: ToolCall): Emit[] {
    const input = JSON.stringify(call.args)
    return [
      ...this.#protocol((p) => p.tool(task, { event: 'tool-started', tool_call_id: call.id, tool_name: call.name, input })),
      ...(this.has('tools') ? [{ event: 'tools', data: { event: 'on_tool_start', toolCallId: call.id, name: call.name, input } }] : []),
      ...(this.has('events') ? [this.#toolEvent(task, call, 'on_tool_start', { input: call.args })] : []),
    ]
  }

  /** An `events` mode event of one tool call (its own run, a child of the task's). */
  #toolEvent(task: TaskView, call: ToolCall, event: string, data: unknown): Emit {
    const run = uuid5(`${task.id}:${call.id}`, TOOL_RUNS)
    return this.#event(event, data, call.name, run, [], omit(this.taskMetadata(task), ['tags']), [this.#request.ids.run_id, task.id])
  }

  /** A tool's progress: a custom event (as `config.writer` writes it) and the tool's own event. */
  toolProgress(task: TaskView, call: ToolCall, payload: unknown): Emit[] {
    return [
      ...this.custom(payload),
      ...this.#protocol((p) => p.tool(task, { event: 'tool-output-delta', tool_call_id: call.id, delta: JSON.stringify(payload) })),
      ...(this.has('tools') ? [{ event: 'tools', data: { event: 'on_tool_event', toolCallId: call.id, name: call.name, data: payload } }] : []),
    ]
  }

  toolEnd(task: TaskView, call: ToolCall, message: Message): Emit[] {
    return [
      ...this.#protocol((p) => p.tool(task, { event: 'tool-finished', tool_call_id: call.id, output: message })),
      ...(this.has('tools') ? [{ event: 'tools', data: { event: 'on_tool_end', toolCallId: call.id, name: call.name, output: message } }] : []),
      ...(this.has('events') ? [this.#toolEvent(task, call, 'on_tool_end', { output: message, input: call.args })] : []),
    ]
  }

  toolError(task: TaskView, call: ToolCall, error: string, message: string): Emit[] {
    return [
      ...this.#protocol((p) => p.tool(task, { event: 'tool-error', tool_call_id: call.id, message })),
      ...(this.has('tools') ? [{ event: 'tools', data: { event: 'on_tool_error', toolCallId: call.id, name: call.name, error: { name: error } } }] : []),
      ...(this.has('events') ? [this.#toolEvent(task, call, 'on_tool_error', { input: call.args, error: message })] : []),
    ]
  }

  /**
   * Whole messages a node wrote without streaming them: `messages-tuple` sends each (as the real
   * servers do); the session protocol sends a finished AI message as one whole content block —
   * except for a node that ran a subgraph (`own: false`), whose messages came from its subgraph.
   */
  written(task: TaskView, messages: Message[], own = true): Emit[] {
    const protocol = own ? messages.filter((m) => m.type === 'ai').flatMap((m) => this.#protocol((p) => p.wholeMessage(task, m))) : []
    if (!this.has('messages-tuple')) return protocol
    return [...protocol, ...messages.map((m) => ({ event: 'messages', data: [m, this.taskMetadata(task)] }))]
  }
}

function omit(object: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)))
}
