// The session protocol's events of one run, shaped as the real server sends them
// (test/fixtures/agent-protocol/ holds its recorded wire). Like stream-modes.ts, this only shapes
// payloads from what the engine says happened; the thread's log numbers and stamps them.

import { textOf, type Message } from './messages.js'
import { hasReasoning, type Piece, type ScriptedReply } from './reply-chunks.js'
import type { TaskView } from './stream-modes.js'
import type { CheckpointRecord, Interrupt, ProtocolEvent, State } from './types.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The namespace segment of a task: `<node>:<task_id>`. */
export const taskNamespace = (task: Pick<TaskView, 'name' | 'id'>) => [`${task.name}:${task.id}`]

/** A root lifecycle event of a run: `running`, then one of `completed`, `interrupted`, `failed` (with the error as JSON text). */
export function rootLifecycle(event: 'running' | 'completed' | 'interrupted' | 'failed', graphName: string, error?: unknown): ProtocolEvent {
  return { method: 'lifecycle', namespace: [], data: error === undefined ? { event, graph_name: graphName } : { event, graph_name: graphName, error: JSON.stringify(error) } }
}

/**
 * A message as protocol events carry it: the fields a client renders, and an AI message's text as
 * a list of content blocks (`[{"type": "text", "text": …}]`).
 */
export function protocolMessage(message: Message): Message {
  const out: Message = { type: message.type, content: message.content, id: message.id }
  if (message.type === 'ai') {
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as { id: unknown; name: unknown; args: unknown }[]) : []
    const text = typeof message.content === 'string' ? (message.content === '' ? [] : [{ type: 'text', text: message.content }]) : message.content as unknown[]
    // Content blocks: the text (or the message's own blocks: reasoning, text), then one `tool_call` block per call, as the protocol's messages carry them.
    const invalid = Array.isArray(message.invalid_tool_calls) ? (message.invalid_tool_calls as { id: unknown; name: unknown; args: unknown }[]) : []
    out.content = [
      ...text,
      ...calls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, args: c.args })),
      ...invalid.map((c) => ({ type: 'invalid_tool_call', id: c.id, name: c.name, args: c.args, error: 'Failed to parse tool call arguments as JSON' })),
    ]
    if (isObject(message.response_metadata) && Object.keys(message.response_metadata).length > 0) out.response_metadata = message.response_metadata
    if (calls.length > 0) out.tool_calls = calls.map((c) => ({ id: c.id, name: c.name, args: c.args, type: 'tool_call' }))
  }
  if (typeof message.name === 'string') out.name = message.name
  if (message.type === 'tool') {
    out.tool_call_id = message.tool_call_id
    out.status = message.status
    if (message.artifact !== null && message.artifact !== undefined) out.artifact = message.artifact
  }
  return out
}

/** State (or a node's update) with its messages in the protocol's form. */
export function protocolState(state: State): State {
  if (!Array.isArray(state.messages)) return state
  return { ...state, messages: (state.messages as Message[]).map((m) => (isObject(m) ? protocolMessage(m) : m)) }
}

/** The protocol events of one run, from the same happenings stream-modes.ts turns into legacy events. */
export class ProtocolEvents {
  /** The ids of each streamed message's tool calls, in the order they streamed (its finish blocks follow it). */
  readonly #callOrder = new Map<string, string[]>()
  /** Blocks of streamed messages not started yet (`<message id>:text|reasoning` → block index). */
  readonly #toStart = new Map<string, number>()
  /** Tasks whose namespace has had an event: only those get lifecycle `started` / their end, as on the real server. */
  readonly #opened = new Set<string>()

  /** The task's lifecycle `started`, before the first event in its namespace. */
  open(task: TaskView): ProtocolEvent[] {
    if (this.#opened.has(task.id)) return []
    this.#opened.add(task.id)
    return [{ method: 'lifecycle', namespace: taskNamespace(task), data: { event: 'started', graph_name: task.name } }]
  }

  values(state: State): ProtocolEvent[] {
    return Object.keys(state).length === 0 ? [] : [{ method: 'values', namespace: [], data: protocolState(state) }]
  }

  updates(node: string, writes: Record<string, unknown>): ProtocolEvent[] {
    return [{ method: 'updates', namespace: [], node, data: protocolState(writes) }]
  }

  /** An event of the `tools` channel, in the namespace of the task whose tool it is. */
  tool(task: TaskView, data: Record<string, unknown>): ProtocolEvent[] {
    return [...this.open(task), { method: 'tools', namespace: taskNamespace(task), data }]
  }

  custom(payload: unknown): ProtocolEvent[] {
    return [{ method: 'custom', namespace: [], data: { payload } }]
  }

  /** A checkpoint of the loop (the input's own checkpoint is not announced, as on the real server). */
  checkpoint(record: CheckpointRecord): ProtocolEvent[] {
    if (record.metadata.source === 'input') return []
    const data = { id: record.checkpoint_id, parent_id: record.parent_checkpoint_id, step: record.metadata.step, source: record.metadata.source }
    return [{ method: 'checkpoints', namespace: [], data }]
  }

  taskStart(task: TaskView, metadata: Record<string, unknown>): ProtocolEvent[] {
    return [{ method: 'tasks', namespace: [], data: { id: task.id, name: task.name, input: task.input, triggers: metadata.langgraph_triggers, interrupts: [], metadata } }]
  }

  /** A task ended: its result (the node's writes), or its interrupts, or its error (`{message, name}`). */
  taskEnd(task: TaskView, outcome: { writes: Record<string, unknown> | null; interrupts: Interrupt[]; error: string | null }, subgraph = false): ProtocolEvent[] {
    // A task's input and result keep the state's full serialization (values and updates are normalized).
    const result = outcome.writes ?? {}
    // The legacy form of a task's error is its JSON text; the protocol carries it as an object.
    const error = outcome.error === null ? null : JSON.parse(outcome.error) as { message: string; name: string }
    // A subgraph's task whose subgraph asked for input ends `completed`, as on the real server.
    const ended = error !== null ? 'failed' : outcome.interrupts.length > 0 && !subgraph ? 'interrupted' : 'completed'
    // A task stopped at an interrupt first asks for input (unless its subgraph did), then reports its (empty) result.
    const asked = subgraph ? [] : this.interrupted(outcome.interrupts)
    const done: ProtocolEvent = { method: 'tasks', namespace: [], data: { id: task.id, name: task.name, result, interrupts: outcome.interrupts, error } }
    if (!this.#opened.delete(task.id)) return [...asked, done]
    return [...asked, done, { method: 'lifecycle', namespace: taskNamespace(task), data: { event: ended, graph_name: task.name } }]
  }

  /** The graph stopped at an interrupt: one `input.requested` per interrupt. */
  interrupted(interrupts: Interrupt[]): ProtocolEvent[] {
    return interrupts.map((i) => ({ method: 'input.requested', namespace: [], data: { interrupt_id: i.id, payload: i.value } }))
  }

  // --- a streamed reply: message-start, content blocks (start, deltas, finish), message-finish ---
  // The reasoning is block 0 when there is reasoning, then the text when there is text; each tool
  // call is the block its chunk's index names.

  replyStart(task: TaskView, messageId: string, reply: ScriptedReply): ProtocolEvent[] {
    const ns = taskNamespace(task)
    const runId = chatRunId(messageId)
    // Each block starts with its first chunk (the model's first token comes a turn later).
    const reasoned = hasReasoning(reply)
    if (reasoned) this.#toStart.set(`${messageId}:reasoning`, 0)
    if (reply.text !== '' || reply.toolCalls.length === 0) this.#toStart.set(`${messageId}:text`, reasoned ? 1 : 0)
    return [...this.open(task), { method: 'messages', namespace: ns, data: { event: 'message-start', id: messageId, run_id: runId } }]
  }

  /** A block's start (`text` or `reasoning`), the first time it streams (or the message ends), if it has not started yet. */
  #blockStart(task: TaskView, messageId: string, kind: 'text' | 'reasoning'): ProtocolEvent[] {
    const index = this.#toStart.get(`${messageId}:${kind}`)
    if (index === undefined) return []
    this.#toStart.delete(`${messageId}:${kind}`)
    const content = kind === 'text' ? { type: 'text', text: '' } : { type: 'reasoning', reasoning: '' }
    return [{ method: 'messages', namespace: taskNamespace(task), data: { event: 'content-block-start', index, content, run_id: chatRunId(messageId) } }]
  }

  /** The first block of a streamed reply opens (its reasoning, else its text). */
  firstBlockStart(task: TaskView, messageId: string): ProtocolEvent[] {
    const reasoning = this.#blockStart(task, messageId, 'reasoning')
    return reasoning.length > 0 ? reasoning : this.#blockStart(task, messageId, 'text')
  }

  replyChunk(task: TaskView, messageId: string, piece: Piece): ProtocolEvent[] {
    const ns = taskNamespace(task)
    const runId = chatRunId(messageId)
    const event = (data: Record<string, unknown>): ProtocolEvent[] => [{ method: 'messages', namespace: ns, data: { ...data, run_id: runId } }]
    switch (piece.kind) {
      case 'reasoning': return [...this.#blockStart(task, messageId, 'reasoning'), ...event({ event: 'content-block-delta', index: 0, delta: { type: 'reasoning-delta', reasoning: piece.text } })]
      case 'text': return [...this.#blockStart(task, messageId, 'text'), ...event({ event: 'content-block-delta', index: piece.block ?? 0, delta: { type: 'text-delta', text: piece.text } })]
      case 'call':
        this.#callOrder.set(messageId, [...(this.#callOrder.get(messageId) ?? []), piece.id])
        return event({ event: 'content-block-start', index: piece.index, content: { type: 'tool_call_chunk', id: piece.id, name: piece.name, args: '', index: piece.index } })
      case 'args': return event({ event: 'content-block-delta', index: piece.index, delta: { type: 'tool-call-delta', args: piece.args } })
      default: return piece.usage ? event({ event: 'usage', usage: piece.usage }) : []
    }
  }

  /** A finished AI message a node returned (not streamed): its start, its text as one delta, its finish. */
  wholeMessage(task: TaskView, message: Message): ProtocolEvent[] {
    const text = typeof message.content === 'string' ? message.content : ''
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls : []
    const start = this.replyStart(task, message.id as string, { text, toolCalls: calls as ScriptedReply['toolCalls'] })
    const delta = text === '' ? [] : this.replyChunk(task, message.id as string, { kind: 'text', text })
    return [...start, ...delta, ...this.replyEnd(task, message)]
  }

  replyEnd(task: TaskView, message: Message): ProtocolEvent[] {
    const started = [...this.#blockStart(task, message.id as string, 'reasoning'), ...this.#blockStart(task, message.id as string, 'text')]
    const ns = taskNamespace(task)
    const runId = chatRunId(message.id as string)
    const text = textOf(message)
    const reasoning = Array.isArray(message.content) ? (message.content as { type?: string; reasoning?: string }[]).find((b) => b?.type === 'reasoning') : undefined
    const calls = (message.tool_calls ?? []) as { id: string; name: string; args: unknown }[]
    const invalid = (message.invalid_tool_calls ?? []) as { id: string; name: string; args: unknown }[]
    // The calls in the order they streamed (valid and invalid ones by their ids' place among the blocks).
    const byId = new Map<string, Record<string, unknown>>([
      ...calls.map((c): [string, Record<string, unknown>] => [c.id, { type: 'tool_call', id: c.id, name: c.name, args: c.args }]),
      ...invalid.map((c): [string, Record<string, unknown>] => [c.id, { type: 'invalid_tool_call', id: c.id, name: c.name, args: c.args, error: 'Failed to parse tool call arguments as JSON' }]),
    ])
    const order = this.#callOrder.get(message.id as string) ?? [...byId.keys()]
    const blocks: unknown[] = [
      ...(reasoning ? [{ type: 'reasoning', reasoning: reasoning.reasoning }] : []),
      ...(text !== '' || byId.size === 0 ? [{ type: 'text', text }] : []),
      ...order.map((id) => byId.get(id)).filter((b) => b !== undefined),
    ]
    const usage = isObject(message.usage_metadata) ? { usage: message.usage_metadata } : {}
    return [
      ...started,
      ...blocks.map((content, index) => ({ method: 'messages', namespace: ns, data: { event: 'content-block-finish', index, content, run_id: runId } })),
      { method: 'messages', namespace: ns, data: { event: 'message-finish', reason: 'stop', ...usage, run_id: runId } },
    ]
  }
}

/** The chat model's run id a streamed message came from: its id without the `run-` prefix. */
const chatRunId = (messageId: string) => messageId.replace(/^run-/, '')
