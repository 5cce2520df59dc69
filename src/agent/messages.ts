// LangChain messages as the hosted agent server stores and streams them: coercion of every input
// form a client may send, the stored dict (every field, nulls included), the AI message chunk of
// `messages-tuple`, and the `add_messages` reducer (merge by id, `remove`, `__remove_all__`).

import { v4 as uuid4 } from 'uuid'
import { GraphError } from './graph-error.js'

export type Message = Record<string, unknown>

export const REMOVE_ALL = '__remove_all__'

const ROLES: Record<string, string> = {
  human: 'human',
  user: 'human',
  ai: 'ai',
  assistant: 'ai',
  system: 'system',
  developer: 'system',
  tool: 'tool',
  remove: 'remove',
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const objectOr = (v: unknown) => (isObject(v) ? v : {})
const pythonRepr = (v: unknown) => JSON.stringify(v)

/**
 * One message in the stored (hosted) form, from any accepted input: a dict with `role` or `type`,
 * a bare string (a human message), or a `[role, content]` pair. Content is kept as given (a string
 * or a list of parts). A message without an id gets a uuid4.
 */
export function coerceMessage(input: unknown): Message {
  if (typeof input === 'string') return stored('human', input, {})
  if (Array.isArray(input) && input.length === 2 && typeof input[0] === 'string') return stored(role(input[0]), content(input[1]), {})
  if (!isObject(input)) throw new GraphError('ValueError', `Unsupported message type: ${pythonRepr(input)}`)
  const kind = input.role ?? input.type
  if (typeof kind !== 'string') {
    throw new GraphError('ValueError', `Message dict must contain 'role' and 'content' keys, got ${pythonRepr(input)}`)
  }
  const type = role(kind)
  if (kind === 'developer') {
    const marked = { ...objectOr(input.additional_kwargs), __openai_role__: 'developer' }
    return stored(type, content(input.content), { ...input, additional_kwargs: marked })
  }
  return stored(type, content(input.content), input)
}

/** A reducer's right-hand side: one message or a list of them. */
export function coerceMessages(value: unknown): Message[] {
  if (value === null || value === undefined) return []
  return (Array.isArray(value) ? value : [value]).map(coerceMessage)
}

function role(kind: string): string {
  const type = ROLES[kind] ?? ROLES[kind.replace(/MessageChunk$/, '').toLowerCase()]
  if (!type) {
    throw new GraphError(
      'ValueError',
      `Unexpected message type: '${kind}'. Use one of 'human', 'user', 'ai', 'assistant', 'function', 'tool', 'system', or 'developer'.`,
    )
  }
  return type
}

function content(value: unknown): string | unknown[] {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string' || Array.isArray(value)) return value
  throw new GraphError('ValueError', `Message content should be a string or a list of content parts, got ${pythonRepr(value)}`)
}

/** The hosted form, fields in the order the Python server writes them. */
function stored(type: string, body: string | unknown[], given: Record<string, unknown>): Message {
  const id = typeof given.id === 'string' && given.id !== '' ? given.id : type === 'remove' ? undefined : uuid4()
  if (id === undefined) throw new GraphError('ValueError', 'A remove message needs the id of the message to remove')
  // Each type's own fields follow the common ones (assigned, not spread: messages are made per event).
  const message: Message = {
    content: body,
    additional_kwargs: { ...objectOr(given.additional_kwargs) },
    response_metadata: { ...objectOr(given.response_metadata) },
    type,
    name: typeof given.name === 'string' ? given.name : null,
    id,
  }
  switch (type) {
    case 'human':
      message.example = given.example === true
      break
    case 'ai':
      message.example = given.example === true
      message.tool_calls = Array.isArray(given.tool_calls) ? given.tool_calls.map(toolCall) : []
      message.invalid_tool_calls = Array.isArray(given.invalid_tool_calls) ? given.invalid_tool_calls : []
      message.usage_metadata = isObject(given.usage_metadata) ? given.usage_metadata : null
      break
    case 'tool':
      if (typeof given.tool_call_id !== 'string') {
        throw new GraphError('ValueError', `A tool message needs a 'tool_call_id', got ${pythonRepr(given)}`)
      }
      message.tool_call_id = given.tool_call_id
      message.artifact = given.artifact ?? null
      message.status = given.status === 'error' ? 'error' : 'success'
      break
  }
  return message
}

function toolCall(call: unknown): unknown {
  if (!isObject(call)) throw new GraphError('ValueError', `A tool call should be an object, got ${pythonRepr(call)}`)
  return { name: call.name ?? null, args: objectOr(call.args), id: call.id ?? null, type: 'tool_call' }
}

/**
 * LangGraph's `add_messages`: messages whose id is already present replace it in place, new ones
 * are appended, `remove` messages delete by id (an unknown id is an error), and a
 * `remove` of `__remove_all__` drops everything before it (the messages after it in the same
 * update are what remains).
 */
export function addMessages(current: unknown, update: unknown): Message[] {
  const left = coerceMessages(current)
  const right = coerceMessages(update)
  const removeAll = right.findLastIndex((m) => m.type === 'remove' && m.id === REMOVE_ALL)
  if (removeAll >= 0) return right.slice(removeAll + 1)

  const merged = [...left]
  const index = new Map(merged.map((m, i) => [m.id as string, i]))
  const removed = new Set<string>()
  for (const message of right) {
    const id = message.id as string
    const at = index.get(id)
    if (at !== undefined) {
      if (message.type === 'remove') removed.add(id)
      else {
        removed.delete(id)
        merged[at] = message
      }
    } else {
      if (message.type === 'remove') {
        throw new GraphError('ValueError', `Attempting to delete a message with an ID that doesn't exist ('${id}')`)
      }
      index.set(id, merged.length)
      merged.push(message)
    }
  }
  return merged.filter((m) => !removed.has(m.id as string))
}

/** A finished AI message in the stored form. */
export function aiMessage(id: string, text: string): Message {
  return stored('ai', text, { id })
}

/** One streamed piece of an AI message (`messages-tuple`), as a Python server sends it. */
export function aiChunk(id: string, text: string): Message {
  // Its type in the message's place, then the chunks' own field (one is made per streamed piece: no spread).
  const chunk = aiMessage(id, text)
  chunk.type = 'AIMessageChunk'
  chunk.tool_call_chunks = []
  return chunk
}

/** The plain text of a message: its string content, or its text parts joined. */
export function textOf(message: Message): string {
  const body = message.content
  if (typeof body === 'string') return body
  if (!Array.isArray(body)) return ''
  return body
    .map((part) => (typeof part === 'string' ? part : isObject(part) && typeof part.text === 'string' ? part.text : ''))
    .join('')
}

/** The text of the last human message of a message list ('' when there is none). */
export function lastHumanText(messages: unknown): string {
  if (!Array.isArray(messages)) return ''
  const last = (messages as Message[]).findLast((m) => isObject(m) && m.type === 'human')
  return last ? textOf(last) : ''
}

/** The last message of a type in a message list (undefined when there is none). */
export function lastOf(messages: unknown, type: string): Message | undefined {
  return Array.isArray(messages) ? (messages as Message[]).findLast((m) => isObject(m) && m.type === type) : undefined
}

/** The tool calls of the last AI message ([] when it has none, or there is no AI message). */
export function lastToolCalls(messages: unknown): { name: string; args: Record<string, unknown>; id: string }[] {
  const calls = lastOf(messages, 'ai')?.tool_calls
  return Array.isArray(calls) ? calls.filter(isObject) as { name: string; args: Record<string, unknown>; id: string }[] : []
}
