// How one node plays its steps on the run's clock: its delay, streamed replies, state updates,
// custom events, waits, its interrupt (or the resume value that answers it) and failures. It
// yields the events the steps make and returns what the node wrote, or where it stopped.

import { v5 as uuid5, v7 as uuid7, parse as parseUuid } from 'uuid'
import { GraphError } from './graph-error.js'
import { holds } from './conditions.js'
import type { GraphNode, Step } from './graphs.js'
import { coerceMessage, lastOf, lastToolCalls, type Message } from './messages.js'
import { PartialReply, pieces, replyMessage, type ScriptedReply } from './reply-chunks.js'
import { applyWrites, foldWrites, normalizeUpdate, type Channels } from './state.js'
import type { StreamModes, TaskView } from './stream-modes.js'
import { renderText, renderValue } from './templates.js'
import type { TaskOutput } from './task-scheduler.js'
import type { Emit, EngineOutput, Interrupt, RunRequest, State } from './types.js'

export type NodeOutcome =
  | { kind: 'ok'; state: State; writes: Record<string, unknown>; unstreamed: Message[] }
  /** `interrupts`: those a subgraph raised (with their ids); a node's own gets an id from its task. */
  | { kind: 'interrupt'; value: unknown; interrupts?: Interrupt[] }
  | { kind: 'fail'; error: GraphError }

export interface NodeContext {
  channels: Channels
  modes: StreamModes
  request: RunRequest
  /** Set when the node is resumed: the value its interrupt step returns. */
  resume?: { value: unknown }
  /** How many times the node ran before in this run. */
  visits?: number
  /** The state key UI messages go to (the graph's key with the `ui` reducer). */
  uiKey?: string
}

/** The run's `config.configurable`. */
export const configurableOf = (request: RunRequest) => (request.config.configurable ?? {}) as Record<string, unknown>

/** A stream mode's events, as one output (none for none). */
export function* emit(list: Emit[]): Generator<EngineOutput> {
  if (list.length > 0) yield { kind: 'emits', list }
}

/** Plays the node's steps; its waits are yielded (see task-scheduler.ts), so that parallel tasks interleave on the clock. */
export async function* playNode(node: GraphNode, task: TaskView, context: NodeContext): AsyncGenerator<TaskOutput, NodeOutcome> {
  const { channels, request } = context
  let state = task.input
  const writes: Record<string, unknown> = {}
  const streamed = new Set<string>()
  let pushed = 0
  const write = (update: unknown) => {
    const normalized = normalizeUpdate(channels, update)
    state = applyWrites(channels, state, normalized)
    foldWrites(channels, writes, normalized)
  }

  if (node.delay_ms > 0) yield { kind: 'wait', ms: node.delay_ms }
  try {
    for (const step of node.steps) {
      if (step.when && !holds(step.when, { state, configurable: configurableOf(request), visits: context.visits ?? 0 })) continue
      if (step.reply) {
        const message = yield* reply(step.reply, task, state, context)
        write({ messages: [message] })
        streamed.add(message.id as string)
      } else if (step.update !== undefined) write(renderValue(step.update, state, request.context))
      else if (Object.hasOwn(step, 'custom')) yield* emit(context.modes.custom(renderValue(step.custom, state, request.context)))
      else if (step.wait_ms !== undefined) yield { kind: 'wait', ms: step.wait_ms }
      else if (step.interrupt) {
        if (!context.resume) {
          const value = renderValue(step.interrupt.value, state, request.context)
          // An interrupt travels as an exception: the tasks beside it that finish at once report first, as in LangGraph JS.
          yield { kind: 'wait', ms: 0, last: true }
          return { kind: 'interrupt', value }
        }
        write({ [step.interrupt.resume_key]: context.resume.value })
      } else if (step.ui || step.remove_ui !== undefined) {
        const event = step.ui
          ? uiMessage(step.ui, task, state, request, pushed++)
          : { type: 'remove-ui', id: renderText(step.remove_ui!, state, request.context) }
        yield* emit(context.modes.custom(event))
        write({ [context.uiKey ?? 'ui']: [event] })
      } else if (step.store_put || step.store_search) {
        write(storeStep(step, state, request))
      } else if (step.tools) {
        const answered = yield* tools(step.tools, task, state, context)
        write({ messages: answered.messages })
        // What the tools wrote beside their messages, in the order of the calls.
        for (const update of answered.updates) write(update)
      } else if (step.fail && holds(step.fail.when, { state, configurable: configurableOf(request), visits: context.visits ?? 0 })) {
        return { kind: 'fail', error: new GraphError(step.fail.error ?? 'Error', renderText(step.fail.message, state, request.context)) }
      }
    }
  } catch (error) {
    if (error instanceof GraphError) return { kind: 'fail', error }
    throw error
  }
  const unstreamed = Object.entries(writes)
    .filter(([key]) => channels.reducers[key] === 'messages')
    .flatMap(([, list]) => list as Message[])
    .filter((m) => m.type !== 'remove' && !streamed.has(m.id as string))
  return { kind: 'ok', state, writes, unstreamed }
}

/**
 * A store step, on the run's store: a put (returns no update), or a search whose items go to the
 * state key `into`. Raises (the node fails) when the run has no store or the store refuses.
 */
function storeStep(step: Step, state: State, request: RunRequest): Record<string, unknown> {
  const store = request.store
  if (!store) throw new GraphError('InvalidUpdateError', 'This run has no store (a store step needs the agent server\'s)')
  const labels = (list: string[]) => list.map((label) => renderText(label, state, request.context))
  try {
    if (step.store_put) {
      const value = renderValue(step.store_put.value, state, request.context) as Record<string, unknown>
      store.put(labels(step.store_put.namespace), renderText(step.store_put.key, state, request.context), value)
      return {}
    }
    const search = step.store_search!
    const filter = search.filter === undefined ? null : renderValue(search.filter, state, request.context) as Record<string, unknown>
    const query = search.query === undefined ? null : renderText(search.query, state, request.context)
    return { [search.into]: store.search(labels(search.namespace_prefix), { query, filter, limit: search.limit ?? 10 }) }
  } catch (error) {
    if (error instanceof GraphError) throw error
    throw new GraphError('InvalidUpdateError', (error as Error).message)
  }
}

/** The reply's text and tool calls rendered; a call without an id gets one derived from the message id and its place. */
function scripted(spec: NonNullable<Step['reply']>, messageId: string, state: State, request: RunRequest): ScriptedReply {
  const toolCalls = (spec.tool_calls ?? []).map((call, i) => ({
    name: call.name,
    // The arguments' JSON text as the model streams it: `args_text` as written (it may not parse), else `args`.
    argsText: call.args_text !== undefined ? renderText(call.args_text, state, request.context) : JSON.stringify(callArgs(renderValue(call.args ?? {}, state, request.context), call.name)),
    id: call.id === undefined ? `call_${uuid5(`${messageId}:${i}`, TOOL_CALL_IDS).replaceAll('-', '').slice(0, 24)}` : renderText(call.id, state, request.context),
  }))
  return {
    text: renderText(spec.text ?? '', state, request.context),
    ...(spec.reasoning === undefined ? {} : { reasoning: renderText(spec.reasoning, state, request.context) }),
    toolCalls,
    ...(spec.usage_metadata ? { usage: spec.usage_metadata } : {}),
    ...(spec.response_metadata ? { responseMetadata: spec.response_metadata } : {}),
  }
}

/** A tool call's rendered arguments, which must be an object (a template may have led elsewhere). */
function callArgs(args: unknown, name: string): Record<string, unknown> {
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) return args as Record<string, unknown>
  throw new GraphError('ValueError', `The arguments of a call to ${name} must be an object, got ${JSON.stringify(args)}`)
}

const TOOL_CALL_IDS = parseUuid('6f1c3a52-9b7e-4d21-8c0a-2e5f7b9d1a43')

/** Streams an AI message as a chat model does (`token_delay_ms` between chunks) and returns it whole. */
async function* reply(
  spec: NonNullable<Step['reply']>,
  task: TaskView,
  state: State,
  { modes, request }: NodeContext,
): AsyncGenerator<TaskOutput, Message> {
  const id = `run-${uuid7({ msecs: request.clock.now() })}`
  const script = scripted(spec, id, state, request)
  const history = state.messages ?? []
  const delay = spec.token_delay_ms ?? 0
  yield* emit(modes.replyStart(task, id, history, script))
  // The model's first chunk comes after turns of the event loop: tasks beside this one start their replies first.
  yield { kind: 'wait', ms: 0 }
  yield* emit(modes.replyOpen(task, id))
  yield { kind: 'wait', ms: 0 }
  const partial = new PartialReply()
  // Chunks that come at the same time travel up as one output (each chunk's events are made whole
  // when it comes: nothing in them changes with the chunks after it).
  let chunks: Emit[] = []
  for (const [i, piece] of pieces(script).entries()) {
    if (i > 0 && delay > 0) {
      yield* emit(chunks)
      chunks = []
      yield { kind: 'wait', ms: delay }
    }
    partial.add(piece)
    chunks.push(...modes.replyChunk(task, id, piece, partial))
  }
  const message = replyMessage(id, script)
  chunks.push(...modes.replyEnd(task, message, history))
  yield* emit(chunks)
  return message
}

/**
 * A tools step, as LangGraph's ToolNode runs: each tool call of the last AI message gets a
 * ToolMessage, from the result scripted for its tool (`*` for any other); a tool that raises, or
 * one the script does not know, answers an error ToolMessage (`Error: <message>\n Please fix your
 * mistakes.`). The calls start together; their ends follow in order, errors last.
 */
async function* tools(
  spec: NonNullable<Step['tools']>,
  task: TaskView,
  state: State,
  { modes, request }: NodeContext,
): AsyncGenerator<EngineOutput, { messages: Message[]; updates: Record<string, unknown>[] }> {
  const calls = lastToolCalls(state.messages)
  for (const call of calls) yield* emit(modes.toolStart(task, call))
  const answered: { call: (typeof calls)[number]; message: Message; error?: string }[] = []
  for (const call of calls) {
    const result = spec[call.name] ?? spec['*']
    const roots = { args: call.args }
    for (const payload of result?.progress ?? []) yield* emit(modes.toolProgress(task, call, renderValue(payload, state, request.context, roots)))
    const content = result ? renderValue(result.content ?? '', state, request.context, roots) : `Tool "${call.name}" not found.`
    const error = result === undefined ? 'Error' : result.error
    const fields = { type: 'tool', tool_call_id: call.id, name: call.name }
    const message = error === undefined
      ? coerceMessage({ ...fields, content, status: 'success', artifact: result?.artifact === undefined ? null : renderValue(result.artifact, state, request.context, roots) })
      : coerceMessage({ ...fields, content: `Error: ${typeof content === 'string' ? content : JSON.stringify(content)}\n Please fix your mistakes.`, status: 'error' })
    answered.push({ call, message, ...(error === undefined ? {} : { error }) })
  }
  for (const { call, message, error } of answered) if (error === undefined) yield* emit(modes.toolEnd(task, call, message))
  for (const { call, message, error } of answered) if (error !== undefined) yield* emit(modes.toolError(task, call, error, textOfError(message)))
  // A tool that raised writes nothing; the others their `update`, rendered with their call's arguments.
  const updates = answered.flatMap(({ call, error }) => {
    const update = (spec[call.name] ?? spec['*'])?.update
    return error === undefined && update ? [renderValue(update, state, request.context, { args: call.args }) as Record<string, unknown>] : []
  })
  return { messages: answered.map((a) => a.message), updates }
}

/** The message a tool's error carried (an error ToolMessage's content without LangGraph's wrapping). */
const textOfError = (message: Message) => String(message.content).replace(/^Error: /, '').replace(/\n Please fix your mistakes\.$/, '')

/** A UI message as `push_ui_message` writes it: `{type: "ui", id, name, props, metadata: {merge?, run_id, tags, name, id?}}`. */
function uiMessage(spec: NonNullable<Step['ui']>, task: TaskView, state: State, request: RunRequest, n: number) {
  const lastAi = spec.attach ? lastOf(state.messages, 'ai') : undefined
  return {
    type: 'ui',
    id: spec.id === undefined ? uuid5(`${request.ids.run_id}:${task.id}:${n}`, TOOL_CALL_IDS) : renderText(spec.id, state, request.context),
    name: spec.name,
    props: renderValue(spec.props ?? {}, state, request.context),
    metadata: {
      ...(spec.merge ? { merge: true } : {}),
      run_id: request.ids.run_id,
      tags: Array.isArray(request.config.tags) ? request.config.tags : [],
      name: task.name,
      ...(lastAi ? { id: lastAi.id } : {}),
    },
  }
}
