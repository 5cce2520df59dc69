// How a scripted AI reply streams, as a LangChain chat model streams one: its reasoning (when the
// script gives one) word by word as `reasoning` content blocks, its text word by word,
// then each tool call (a chunk naming it, then its JSON arguments in pieces of ten characters),
// then, when the script gives usage or response metadata, a last empty chunk carrying them
// (the shapes observed on the real server: test/fixtures/tool-calls/README.md). From the pieces,
// the forms each stream mode sends: the chunk of `messages-tuple`, the message so far of the
// legacy `messages/partial`, and the whole message stored in the state.

import { aiChunk, aiMessage, type Message } from './messages.js'

/** A tool call of a scripted reply, rendered: its arguments are an object, its id is given or derived. */
export interface ToolCall {
  name: string
  args: Record<string, unknown>
  id: string
}

/** A call of a scripted reply: its arguments' JSON text, which may not parse (an invalid tool call). */
export interface ScriptedCall {
  name: string
  id: string
  argsText: string
}

export interface ScriptedReply {
  text: string
  /** The model's reasoning, streamed before the text as a `reasoning` content block (the message's content is then a list of blocks). */
  reasoning?: string
  toolCalls: ScriptedCall[]
  usage?: Record<string, unknown>
  responseMetadata?: Record<string, unknown>
}

export type Piece =
  /** `block`: the text's content block, when the content is a list of blocks (a reply with reasoning). */
  | { kind: 'text'; text: string; block?: number }
  | { kind: 'reasoning'; text: string }
  | { kind: 'call'; index: number; name: string; id: string }
  | { kind: 'args'; index: number; args: string }
  | { kind: 'end'; usage?: Record<string, unknown>; responseMetadata?: Record<string, unknown> }

/** How many characters of a tool call's JSON arguments one chunk carries. */
const ARGS_PIECE = 10

/** Word chunks that keep their leading spaces, so that joined they give the text back exactly. */
export const wordChunks = (text: string): string[] => (text === '' ? [''] : (text.match(/\s*\S+|\s+$/g) ?? [text]))

/** The pieces a reply streams as, in order. A reply with no text and no tool calls streams one empty text chunk. */
export function pieces(reply: ScriptedReply): Piece[] {
  const out: Piece[] = []
  const reasoned = hasReasoning(reply)
  if (reasoned) out.push(...wordChunks(reply.reasoning!).map((text) => ({ kind: 'reasoning' as const, text })))
  const block = reasoned ? { block: 1 } : {}
  if (reply.text !== '' || reply.toolCalls.length === 0) out.push(...wordChunks(reply.text).map((text) => ({ kind: 'text' as const, text, ...block })))
  // As a provider numbers them: the reasoning is block 0, then the text, so the calls come after them.
  const first = (reasoned ? 1 : 0) + (reply.text === '' ? 0 : 1)
  reply.toolCalls.forEach((call, i) => {
    const index = first + i
    out.push({ kind: 'call', index, name: call.name, id: call.id })
    const json = call.argsText
    for (let at = 0; at < json.length; at += ARGS_PIECE) out.push({ kind: 'args', index, args: json.slice(at, at + ARGS_PIECE) })
  })
  if (reply.usage !== undefined || reply.responseMetadata !== undefined) out.push({ kind: 'end', usage: reply.usage, responseMetadata: reply.responseMetadata })
  return out
}

export const hasReasoning = (reply: Pick<ScriptedReply, 'reasoning'>) => reply.reasoning !== undefined && reply.reasoning !== ''

/** A reply's content as a list of blocks (one with reasoning): the reasoning, then the text. */
function blocks(reasoning: string, text: string, withIndex: boolean): unknown[] {
  return [
    { type: 'reasoning', reasoning, ...(withIndex ? { index: 0 } : {}) },
    ...(text === '' ? [] : [{ type: 'text', text, ...(withIndex ? { index: 1 } : {}) }]),
  ]
}

const parsedObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** One `messages-tuple` chunk. Each chunk's tool-call pieces are read alone, as LangChain reads them. */
export function chunkOf(id: string, piece: Piece): Message {
  if (piece.kind === 'reasoning') return { ...aiChunk(id, ''), content: [{ type: 'reasoning', reasoning: piece.text, index: 0 }] }
  if (piece.kind === 'text' && piece.block !== undefined) return { ...aiChunk(id, ''), content: [{ type: 'text', text: piece.text, index: piece.block }] }
  if (piece.kind === 'text') return aiChunk(id, piece.text)
  if (piece.kind === 'end') {
    return { ...aiChunk(id, ''), response_metadata: piece.responseMetadata ?? {}, usage_metadata: piece.usage ?? null }
  }
  if (piece.kind === 'call') {
    return {
      ...aiChunk(id, ''),
      tool_call_chunks: [{ type: 'tool_call_chunk', name: piece.name, id: piece.id, args: '', index: piece.index }],
      tool_calls: [{ name: piece.name, args: {}, id: piece.id, type: 'tool_call' }],
      invalid_tool_calls: [],
    }
  }
  const parsed = parsedObject(piece.args)
  return {
    ...aiChunk(id, ''),
    tool_call_chunks: [{ type: 'tool_call_chunk', args: piece.args, index: piece.index }],
    tool_calls: parsed ? [{ name: '', args: parsed, type: 'tool_call' }] : [],
    invalid_tool_calls: parsed ? [] : [{ name: '', args: piece.args, error: 'Malformed args.', type: 'invalid_tool_call' }],
  }
}

/**
 * JSON that may stop anywhere (a tool call's arguments while they stream), read as LangChain's
 * `parsePartialJson` reads it: an open string, list or object is closed; what still does not parse
 * (a bare word, a key without its value) is null.
 */
export function partialJson(text: string): unknown {
  if (text.trim() === '') return {}
  const whole = parsedObject(text)
  if (whole) return whole
  const closers: string[] = []
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') closers.push('}')
    else if (c === '[') closers.push(']')
    else if (c === '}' || c === ']') closers.pop()
  }
  try {
    return JSON.parse((inString ? `${text}"` : text) + [...closers].reverse().join(''))
  } catch {
    return null
  }
}

/** The legacy `messages/partial` message: everything streamed so far, merged as LangChain merges chunks. */
export class PartialReply {
  #text = ''
  #reasoning: string | undefined
  readonly #calls = new Map<number, { name: string; id: string; args: string }>()
  #end: Extract<Piece, { kind: 'end' }> | undefined

  add(piece: Piece): void {
    if (piece.kind === 'text') this.#text += piece.text
    else if (piece.kind === 'reasoning') this.#reasoning = (this.#reasoning ?? '') + piece.text
    else if (piece.kind === 'call') this.#calls.set(piece.index, { name: piece.name, id: piece.id, args: '' })
    else if (piece.kind === 'args') this.#calls.get(piece.index)!.args += piece.args
    else this.#end = piece
  }

  message(id: string): Message {
    const calls = [...this.#calls.entries()].sort(([a], [b]) => a - b)
    return {
      ...aiChunk(id, this.#text),
      ...(this.#reasoning === undefined ? {} : { content: blocks(this.#reasoning, this.#text, true) }),
      response_metadata: this.#end?.responseMetadata ?? {},
      usage_metadata: this.#end?.usage ?? null,
      tool_call_chunks: calls.map(([index, c]) => ({ type: 'tool_call_chunk', name: c.name, id: c.id, args: c.args, index })),
      // Arguments read so far; those that cannot be read are an invalid call, as LangChain merges chunks.
      tool_calls: calls.filter(([, c]) => partialJson(c.args) !== null).map(([, c]) => ({ name: c.name, args: partialJson(c.args), id: c.id, type: 'tool_call' })),
      invalid_tool_calls: calls.filter(([, c]) => partialJson(c.args) === null)
        .map(([, c]) => ({ name: c.name, args: c.args, id: c.id, error: 'Malformed args.', type: 'invalid_tool_call' })),
    }
  }
}

/** The whole reply as the state stores it: calls whose arguments do not parse are its `invalid_tool_calls`, as in LangChain. */
export function replyMessage(id: string, reply: ScriptedReply): Message {
  const calls = reply.toolCalls.map((call) => ({ call, args: parsedObject(call.argsText) }))
  return {
    ...aiMessage(id, reply.text),
    ...(hasReasoning(reply) ? { content: blocks(reply.reasoning!, reply.text, false) } : {}),
    response_metadata: reply.responseMetadata ?? {},
    tool_calls: calls.filter((c) => c.args).map(({ call, args }) => ({ name: call.name, args, id: call.id, type: 'tool_call' })),
    invalid_tool_calls: calls.filter((c) => !c.args).map(({ call }) => ({ name: call.name, args: call.argsText, id: call.id, error: 'Malformed args.', type: 'invalid_tool_call' })),
    usage_metadata: reply.usage ?? null,
  }
}
