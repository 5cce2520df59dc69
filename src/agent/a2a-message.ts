// What an A2A message (protocol 0.3) sent to the agent server asks for: which context (thread) and
// task it names, and what it carries for the graph. Its text parts become a human message and its
// data parts input keys of a new run; a message that answers a task waiting for input
// (`input-required`) is instead the value the interrupted graph resumes with: the data parts' object
// as it is (several are merged), else the text. docs/agent-server-wire.md ("A2A") says why.

import { RPC_CODES, RpcError } from './json-rpc.js'

type Json = Record<string, unknown>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/**
 * The metadata flag of a data part the official client had to wrap: A2A 0.3 data parts hold an
 * object, so `@a2a-js/sdk` sends a v1 data part holding anything else (an array, a string) as
 * `{"value": …}` with this flag set.
 */
const WRAPPED_DATA = 'data_part_compat'

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
export const invalidParams = (message: string) => new RpcError(RPC_CODES.invalidParams, `Invalid params: ${message}`)

/** A message from the client, checked. */
export interface InboundMessage {
  /** The message as the client sent it (echoed back in the task's history). */
  raw: Json
  /** The thread it continues (lower case), when it names one. */
  contextId: string | undefined
  /** The task it answers, when it names one. */
  taskId: string | undefined
  texts: string[]
  /** The data parts, in order. */
  dataParts: (Json & { data: Json })[]
}

/** The message of `message/send` and `message/stream` params; an invalid-params error when it is not one. */
export function readMessage(params: Json): InboundMessage {
  const message = params.message
  if (!isObject(message)) throw invalidParams('message is required')
  if (message.role !== 'user' && message.role !== 'agent') throw invalidParams('message.role must be "user" or "agent"')
  if (typeof message.messageId !== 'string') throw invalidParams('message.messageId is required')
  if (!Array.isArray(message.parts) || message.parts.length === 0) throw invalidParams('message.parts must be a non-empty array')
  if (message.contextId !== undefined && (typeof message.contextId !== 'string' || !UUID.test(message.contextId))) {
    throw invalidParams('message.contextId must be a UUID (it is the thread id)')
  }
  if (message.taskId !== undefined && typeof message.taskId !== 'string') throw invalidParams('message.taskId must be a string')
  const texts: string[] = []
  const dataParts: InboundMessage['dataParts'] = []
  for (const part of message.parts) {
    if (isObject(part) && part.kind === 'text' && typeof part.text === 'string') texts.push(part.text)
    else if (isObject(part) && part.kind === 'data' && isObject(part.data)) dataParts.push(part as InboundMessage['dataParts'][number])
    else if (isObject(part) && part.kind === 'file') throw invalidParams('file parts are not supported')
    else throw invalidParams('each part must be a text part or a data part')
  }
  return {
    raw: message,
    contextId: (message.contextId as string | undefined)?.toLowerCase(),
    taskId: message.taskId as string | undefined,
    texts,
    dataParts,
  }
}

/** The input of the run a new task starts: the data parts' keys, and the texts as one human message. */
export function runInput(message: InboundMessage): Json {
  const input: Json = {}
  for (const part of message.dataParts) Object.assign(input, part.data)
  if (message.texts.length > 0) input.messages = [{ type: 'human', content: message.texts.join('\n') }]
  return input
}

/**
 * What an interrupted graph resumes with: a data part's object as it is (several are merged; one the
 * official client wrapped gives back what it wrapped: an array, a string), else the texts joined by
 * newlines.
 */
export function resumeValue(message: InboundMessage): unknown {
  const [first, ...more] = message.dataParts
  if (!first) return message.texts.join('\n')
  if (more.length === 0) return isObject(first.metadata) && first.metadata[WRAPPED_DATA] === true && 'value' in first.data ? first.data.value : first.data
  return Object.assign({}, ...message.dataParts.map((part) => part.data))
}
