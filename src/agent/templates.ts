// The templating of graph fixtures: `{{last_human}}` (the text of the last human message) and
// `{{state.<key>}}` (a state value). In a text, a value is inserted as text (non-strings as
// JSON); a string that is nothing but one template stands for the raw value itself, so
// `{"copy": "{{state.answer}}"}` copies the answer whatever its type.

import { lastHumanText } from './messages.js'
import type { State } from './types.js'

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/

/** The names a fixture uses that are not `last_human` or `state.<one of stateKeys>`. */
export function unknownTemplates(value: unknown, stateKeys: string[]): string[] {
  const unknown: string[] = []
  walkStrings(value, (text) => {
    for (const [, name] of text.matchAll(TEMPLATE)) {
      if (name === 'last_human') continue
      if (name.startsWith('state.') && stateKeys.includes(name.slice('state.'.length))) continue
      unknown.push(name)
    }
  })
  return unknown
}

function walkStrings(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value)
  else if (Array.isArray(value)) value.forEach((v) => walkStrings(v, visit))
  else if (typeof value === 'object' && value !== null) Object.values(value).forEach((v) => walkStrings(v, visit))
}

function lookup(name: string, state: State): unknown {
  if (name === 'last_human') return lastHumanText(state.messages)
  return state[name.slice('state.'.length)]
}

const asText = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value))

/** A text with every template replaced by its value as text. */
export function renderText(text: string, state: State): string {
  return text.replace(TEMPLATE, (_, name: string) => asText(lookup(name, state)))
}

/** Any JSON value with the templates of its strings rendered (a lone template keeps the value's type). */
export function renderValue(value: unknown, state: State): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value)
    if (whole) return structuredClone(lookup(whole[1], state) ?? null)
    return renderText(value, state)
  }
  if (Array.isArray(value)) return value.map((v) => renderValue(v, state))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderValue(v, state)]))
  }
  return value
}
