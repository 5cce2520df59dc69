// How a run reads what it is asked: a command's `update`, `goto` and `resume`, and its breakpoints.

import { GraphError } from './graph-error.js'
import type { Breakpoints, Interrupt, State } from './types.js'

/** `command.update` as an object (a list of `[key, value]` pairs is accepted too). */
export function commandUpdate(update: unknown): unknown {
  if (Array.isArray(update) && update.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string')) {
    return Object.fromEntries(update as [string, unknown][])
  }
  return update
}

/**
 * `command.goto`'s first target: a node name, or a Send (`{node, input}`; `arg` and RemoteGraph's
 * `args` too) whose input the node gets instead of the state. The graphs run one node at a time,
 * so of a list the first is taken. An empty list, as `RemoteGraph` sends it, means no goto.
 */
export function gotoTarget(goto: unknown): { node: string; input?: State } | null {
  const first = Array.isArray(goto) ? goto[0] : goto
  if (first === null || first === undefined) return null
  if (typeof first === 'string') return { node: first }
  if (typeof first === 'object' && !Array.isArray(first) && typeof (first as { node?: unknown }).node === 'string') {
    const send = first as { node: string; input?: unknown; arg?: unknown; args?: unknown }
    const input = send.input ?? send.arg ?? send.args
    return typeof input === 'object' && input !== null && !Array.isArray(input) ? { node: send.node, input: input as State } : { node: send.node }
  }
  throw new GraphError('InvalidUpdateError', `Expected a node name or a Send to go to, got ${JSON.stringify(goto)}`)
}

export const stopsAt = (breakpoints: Breakpoints, node: string) => breakpoints === '*' || breakpoints.includes(node)

/**
 * The value an interrupt resumes with: `resume` itself, or — when it is a map from interrupt id to
 * value that names a pending interrupt, as LangGraph accepts it (and the session protocol's
 * `input.respond` sends it) — that interrupt's entry.
 */
export function resumeValue(resume: unknown, pending: readonly Interrupt[]): unknown {
  if (typeof resume !== 'object' || resume === null || Array.isArray(resume)) return resume
  const named = pending.find((i) => Object.hasOwn(resume, i.id))
  return named ? (resume as Record<string, unknown>)[named.id] : resume
}
