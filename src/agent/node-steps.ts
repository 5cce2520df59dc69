// How one node plays its steps on the run's clock: its delay, streamed replies, state updates,
// custom events, waits, its interrupt (or the resume value that answers it) and failures. It
// yields the events the steps make and returns what the node wrote, or where it stopped.

import { v7 as uuid7 } from 'uuid'
import { GraphError } from './graph-error.js'
import { holds } from './conditions.js'
import type { GraphNode, Step } from './graphs.js'
import { aiMessage, type Message } from './messages.js'
import { applyWrites, foldWrites, normalizeUpdate, type Channels } from './state.js'
import type { Emit, StreamModes, TaskView } from './stream-modes.js'
import { renderText, renderValue } from './templates.js'
import type { EngineOutput, RunRequest, State } from './types.js'

export type NodeOutcome =
  | { kind: 'ok'; state: State; writes: Record<string, unknown>; unstreamed: Message[] }
  | { kind: 'interrupt'; value: unknown }
  | { kind: 'fail'; error: GraphError }

export interface NodeContext {
  channels: Channels
  modes: StreamModes
  request: RunRequest
  /** Set when the node is resumed: the value its interrupt step returns. */
  resume?: { value: unknown }
  /** How many times the node ran before in this run. */
  visits?: number
}

/** The run's `config.configurable`. */
export const configurableOf = (request: RunRequest) => (request.config.configurable ?? {}) as Record<string, unknown>

export function* emit(list: Emit[]): Generator<EngineOutput> {
  for (const item of list) yield 'protocol' in item ? { kind: 'protocol', event: item.protocol } : { kind: 'emit', event: item.event, data: item.data }
}

/** Word chunks that keep their leading spaces, so that joined they give the text back exactly. */
export const wordChunks = (text: string): string[] => (text === '' ? [''] : (text.match(/\s*\S+|\s+$/g) ?? [text]))

export async function* playNode(node: GraphNode, task: TaskView, context: NodeContext): AsyncGenerator<EngineOutput, NodeOutcome> {
  const { channels, request } = context
  const wait = (ms: number) => request.clock.until(request.clock.now() + ms, request.signal)
  let state = task.input
  const writes: Record<string, unknown> = {}
  const streamed = new Set<string>()
  const write = (update: unknown) => {
    const normalized = normalizeUpdate(channels, update)
    state = applyWrites(channels, state, normalized)
    foldWrites(channels, writes, normalized)
  }

  if (node.delay_ms > 0) await wait(node.delay_ms)
  try {
    for (const step of node.steps) {
      if (step.reply) {
        const message = yield* reply(step.reply, task, state, context, wait)
        write({ messages: [message] })
        streamed.add(message.id as string)
      } else if (step.update !== undefined) write(renderValue(step.update, state, request.context))
      else if (Object.hasOwn(step, 'custom')) yield* emit(context.modes.custom(renderValue(step.custom, state, request.context)))
      else if (step.wait_ms !== undefined) await wait(step.wait_ms)
      else if (step.interrupt) {
        if (!context.resume) return { kind: 'interrupt', value: renderValue(step.interrupt.value, state, request.context) }
        write({ [step.interrupt.resume_key]: context.resume.value })
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

/** Streams an AI message word by word (`token_delay_ms` apart) and returns it whole. */
async function* reply(
  spec: NonNullable<Step['reply']>,
  task: TaskView,
  state: State,
  { modes, request }: NodeContext,
  wait: (ms: number) => Promise<void>,
): AsyncGenerator<EngineOutput, Message> {
  const id = `run-${uuid7({ msecs: request.clock.now() })}`
  const text = renderText(spec.text, state, request.context)
  const history = state.messages ?? []
  const delay = spec.token_delay_ms ?? 0
  yield* emit(modes.replyStart(task, id, history))
  let sofar = ''
  for (const [i, chunk] of wordChunks(text).entries()) {
    if (i > 0 && delay > 0) await wait(delay)
    sofar += chunk
    yield* emit(modes.replyChunk(task, id, chunk, sofar))
  }
  const message = aiMessage(id, text)
  yield* emit(modes.replyEnd(task, message, history))
  return message
}
