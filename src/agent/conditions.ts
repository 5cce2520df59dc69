// When a `fail` step fails and which route a node takes: conditions on the state (its last human,
// AI and tool messages, its values), the run's configurable and how often the node ran. A `when`
// applies when one of its conditions holds.

import { isDeepStrictEqual } from 'node:util'
import type { Route, When } from './graphs.js'
import { lastHumanText, lastOf, lastToolCalls, textOf } from './messages.js'
import type { State } from './types.js'

/** Truthy as a flag: true, a non-zero number, a non-empty list or object, a string other than '', '0', 'false'. */
export const truthy = (v: unknown) =>
  v === true ||
  (typeof v === 'number' && v !== 0) ||
  (typeof v === 'string' && !['', '0', 'false'].includes(v.toLowerCase())) ||
  (Array.isArray(v) && v.length > 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0)

/** The value at a dotted path into the state (`review.0.type`: key, list index, key); undefined when it leads nowhere. */
export function atPath(value: unknown, path: string): unknown {
  let at = value
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null) return undefined
    at = (at as Record<string, unknown>)[part]
  }
  return at
}

export interface Situation {
  state: State
  /** The run's `config.configurable`. */
  configurable: Record<string, unknown>
  /** How many times the node in question has run in this run (0 before it first ran). */
  visits: number
}

/** Whether one of `when`'s conditions holds (a missing `when` always holds). */
export function holds(when: When | undefined, situation: Situation): boolean {
  if (!when) return true
  const { state, configurable, visits } = situation
  const human = () => lastHumanText(state.messages)
  const tool = lastOf(state.messages, 'tool')
  return (
    (when.configurable !== undefined && truthy(configurable[when.configurable])) ||
    (when.human_contains !== undefined && human().toLowerCase().includes(when.human_contains.toLowerCase())) ||
    (when.human_matches !== undefined && new RegExp(when.human_matches, 'i').test(human())) ||
    (when.state !== undefined && Object.entries(when.state).every(([key, value]) => isDeepStrictEqual(atPath(state, key) ?? null, value))) ||
    (when.state_truthy !== undefined && truthy(atPath(state, when.state_truthy))) ||
    (when.tool_calls !== undefined && lastToolCalls(state.messages).length > 0 === when.tool_calls) ||
    (when.tool_result_contains !== undefined && tool !== undefined && textOf(tool).toLowerCase().includes(when.tool_result_contains.toLowerCase())) ||
    (when.visits_at_least !== undefined && visits >= when.visits_at_least) ||
    (when.calls_tool !== undefined && lastToolCalls(state.messages).some((call) => call.name === when.calls_tool)) ||
    (when.last_message !== undefined && Array.isArray(state.messages) && (state.messages.at(-1) as { type?: unknown } | undefined)?.type === when.last_message) ||
    (when.all !== undefined && when.all.every((inner) => holds(inner, situation))) ||
    (when.not !== undefined && !holds(when.not, situation))
  )
}

/** The route a node takes from a situation: the first that applies (none: it goes to `__end__`). */
export function routeFrom(routes: readonly Route[], situation: Situation): Route | undefined {
  return routes.find((route) => holds(route.when, situation))
}
