// State channels and their reducers: how an update (a node's writes, a run's input, a state update)
// is merged into a thread's values.

import { GraphError } from './graph-error.js'
import { addMessages, coerceMessages } from './messages.js'
import type { State } from './types.js'

export type Reducer = 'messages' | 'append' | 'replace' | 'ui' | 'merge'
export const REDUCERS = ['messages', 'append', 'replace', 'ui', 'merge'] as const

/** How each declared key merges; a graph-less thread uses `defaultReducer` for every key. */
export interface Channels {
  reducers: Record<string, Reducer>
  /** Whether keys that are not declared are kept (graph-less threads) or ignored (graphs). */
  open: boolean
}

/** The state key UI messages go to: the first with the `ui` reducer (`ui` by convention). */
export const uiKeyOf = (graph: { state: Channels['reducers'] }): string | undefined => Object.entries(graph.state).find(([, reducer]) => reducer === 'ui')?.[0]

export const defaultReducer = (key: string): Reducer => (key === 'messages' ? 'messages' : 'replace')

/** Channels for a thread that has no graph: `messages` merged by id, every other key replaced. */
export const DEFAULT_CHANNELS: Channels = { reducers: {}, open: true }

/**
 * A new thread's state: every list channel (`messages`, `append`, `ui`) starts empty, as LangGraph's
 * message and list annotations default to `[]`, a `merge` dict as `{}`; other keys start unset.
 */
export function initialState(channels: Channels): State {
  return Object.fromEntries(Object.entries(channels.reducers).filter(([, r]) => r !== 'replace').map(([key, r]) => [key, r === 'merge' ? {} : []]))
}

export function reducerOf(channels: Channels, key: string): Reducer | undefined {
  return channels.reducers[key] ?? (channels.open ? defaultReducer(key) : undefined)
}

/**
 * The update as it will be written: undeclared keys dropped, messages coerced (so they carry the
 * ids they will be stored with). Throws a GraphError when the update is not an object.
 */
export function normalizeUpdate(channels: Channels, update: unknown): Record<string, unknown> {
  if (update === null || update === undefined) return {}
  if (typeof update !== 'object' || Array.isArray(update)) {
    throw new GraphError('InvalidUpdateError', `Expected dict, got ${JSON.stringify(update)}`)
  }
  const writes: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(update)) {
    const reducer = reducerOf(channels, key)
    if (reducer === undefined) continue
    writes[key] = reducer === 'messages' ? coerceMessages(value) : structuredClone(value)
  }
  return writes
}

/** The state after `writes` (normalized) are merged in through the reducers. Does not mutate `state`. */
export function applyWrites(channels: Channels, state: State, writes: Record<string, unknown>): State {
  const next: State = { ...state }
  for (const [key, value] of Object.entries(writes)) {
    const reducer = reducerOf(channels, key) ?? 'replace'
    if (reducer === 'messages') next[key] = addMessages(next[key], value)
    else if (reducer === 'append') next[key] = [...asList(next[key]), ...asList(value)]
    else if (reducer === 'ui') next[key] = mergeUi(asList(next[key]) as UiMessage[], asList(value) as UiMessage[])
    else if (reducer === 'merge') next[key] = { ...asObject(next[key]), ...asObject(value) }
    else next[key] = value
  }
  return next
}

const asObject = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

const asList = (value: unknown): unknown[] => (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value])

/** Several writes of one node folded into the one update the node returns (`updates` mode). */
export function foldWrites(channels: Channels, into: Record<string, unknown>, writes: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(writes)) {
    const reducer = reducerOf(channels, key) ?? 'replace'
    if (reducer === 'merge' && key in into) into[key] = { ...asObject(into[key]), ...asObject(value) }
    else into[key] = reducer === 'replace' || !(key in into) ? value : [...asList(into[key]), ...asList(value)]
  }
}

/** A generative-UI message (`{type: "ui", id, name, props, metadata}`) or its removal (`{type: "remove-ui", id}`). */
export interface UiMessage {
  type: string
  id: string
  props?: Record<string, unknown>
  metadata?: { merge?: boolean }
}

/** LangGraph's UI reducer: a removal drops that id; a message with a known id replaces it (or merges its props with `metadata.merge`); others are appended. */
function mergeUi(current: UiMessage[], updates: UiMessage[]): UiMessage[] {
  let next = current.slice()
  for (const event of updates) {
    if (event.type === 'remove-ui') {
      next = next.filter((ui) => ui.id !== event.id)
      continue
    }
    const index = next.findIndex((ui) => ui.id === event.id)
    if (index < 0) next.push(event)
    else next[index] = event.metadata?.merge ? { ...event, props: { ...next[index].props, ...event.props } } : event
  }
  return next
}
