// The templating of graph fixtures: `{{last_human}}` (the text of the last human message),
// `{{last_tool}}` (the text of the last tool message), `{{tool_results}}` (the texts of the tool
// messages answering the last AI message, joined with " | "),
// `{{state.<key>}}` (a state value) and `{{context.<key>}}` (a value of the run's context, as
// the client sent it in the run's `context`). In a text, a value is inserted as text (non-strings as
// JSON); a string that is nothing but one template stands for the raw value itself, so
// `{"copy": "{{state.answer}}"}` copies the answer whatever its type.

import { atPath } from './conditions.js'
import { lastHumanText, lastOf, textOf, type Message } from './messages.js'
import type { State } from './types.js'

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/

/** The names a fixture uses that are not `last_human`, `state.<one of stateKeys>` or `context.<any key>`. */
export function unknownTemplates(value: unknown, stateKeys: string[], extraRoots: string[] = []): string[] {
  const unknown: string[] = []
  walkStrings(value, (text) => {
    for (const [, name] of text.matchAll(TEMPLATE)) {
      if (name === 'last_human' || name === 'last_tool' || name === 'tool_results') continue
      if (extraRoots.some((root) => name.startsWith(`${root}.`) && name.length > root.length + 1)) continue
      if (name.startsWith('state.') && stateKeys.includes(name.slice('state.'.length).split('.')[0])) continue
      if (name.startsWith('context.') && name.length > 'context.'.length) continue
      unknown.push(name)
    }
  })
  return unknown
}

function walkStrings(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value)
  else if (Array.isArray(value)) value.forEach((v) => walkStrings(v, visit))
  else if (typeof value === 'object' && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      visit(key)
      walkStrings(v, visit)
    }
  }
}

/** A run's context: what the client sent as `context` (merged over its assistant's). */
export type TemplateContext = unknown

/** Objects a step adds to what its templates read (a tool's `args`), by name. */
export type TemplateRoots = Record<string, unknown>

function lookup(name: string, state: State, context: TemplateContext, roots: TemplateRoots): unknown {
  if (name === 'last_human') return lastHumanText(state.messages)
  if (name === 'tool_results') {
    // The texts of the tool messages after the last AI message (the answers to its calls), joined.
    const messages = Array.isArray(state.messages) ? (state.messages as Message[]) : []
    const after = messages.slice(messages.findLastIndex((m) => m?.type === 'ai') + 1)
    return after.filter((m) => m?.type === 'tool').map(textOf).join(' | ')
  }
  if (name === 'last_tool') {
    const tool = lastOf(state.messages, 'tool')
    return tool ? textOf(tool) : ''
  }
  const dot = name.indexOf('.')
  const root = name.slice(0, dot)
  const key = name.slice(dot + 1)
  // A key may go on into the value: `state.review.0.type`, `args.to`.
  if (root === 'state') return atPath(state, key)
  // `input.<key>`: what the node was given (a Send's input; otherwise the state it started from).
  if (root === 'input') return atPath(roots.input ?? state, key)
  return atPath(root === 'context' ? context : roots[root], key)
}

const asText = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value))

/** A text with every template replaced by its value as text. */
export function renderText(text: string, state: State, context?: TemplateContext, roots: TemplateRoots = {}): string {
  return text.replace(TEMPLATE, (_, name: string) => asText(lookup(name, state, context, roots)))
}

/** Any JSON value with the templates of its strings rendered (a lone template keeps the value's type). */
export function renderValue(value: unknown, state: State, context?: TemplateContext, roots: TemplateRoots = {}): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value)
    if (whole) return structuredClone(lookup(whole[1], state, context, roots) ?? null)
    return renderText(value, state, context, roots)
  }
  if (Array.isArray(value)) return value.map((v) => renderValue(v, state, context, roots))
  if (typeof value === 'object' && value !== null) {
    // Keys are templated too (`{"{{args.path}}": "{{args.content}}"}` writes a file by its path).
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [renderText(k, state, context, roots), renderValue(v, state, context, roots)]))
  }
  return value
}
