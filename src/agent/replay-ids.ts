// Fresh ids for a replayed run. A recording holds the upstream's ids (threads, runs, checkpoints,
// messages, tasks — all UUIDs). A replayed run gives each id it brings a new one derived from it
// and the run (uuid5), so the same recorded run replayed twice — on two threads, or twice on one
// (a regenerate) — never repeats an id. Ids that come from before the run (the thread, its
// assistant, the checkpoint it starts from, the messages and tasks in that checkpoint) keep the
// ids they were given when they were replayed: `aligned` pairs them by position. Interrupt ids
// (32 hex digits, no dashes) are kept: a client answers an interrupt by the id it was shown.

import { v5 as uuid5 } from 'uuid'

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

export class ReplayIds {
  readonly #fixed: ReadonlyMap<string, string>
  readonly #run: string

  /** `runId`: the replaying run (derives new ids); `fixed`: recorded id → the id it already has here. */
  constructor(runId: string, fixed: ReadonlyMap<string, string>) {
    this.#run = runId
    this.#fixed = fixed
  }

  /** The id a recorded id becomes. */
  id(recorded: string): string {
    const key = recorded.toLowerCase()
    return this.#fixed.get(key) ?? uuid5(key, this.#run)
  }

  /** A recorded value with every id in it (keys and strings, at any depth) replaced. */
  map<T>(value: T): T {
    return JSON.parse(JSON.stringify(value ?? null).replace(UUID, (id) => this.id(id))) as T
  }
}

/** The id a recorded id became in the replayed run `runId`. */
export const replayedId = (recorded: string, runId: string) => uuid5(recorded.toLowerCase(), runId)

/**
 * Recorded ids paired with the ids they have here, by position: `recorded` and `here` are the same
 * value (a checkpoint as recorded, and as its replay stored it), so their ids come in the same
 * order. Values that do not line up (edited since) pair nothing.
 */
export function aligned(recorded: unknown, here: unknown): [string, string][] {
  const a = JSON.stringify(recorded).match(UUID) ?? []
  const b = JSON.stringify(here).match(UUID) ?? []
  if (a.length !== b.length) return []
  return a.map((id, i) => [id.toLowerCase(), b[i].toLowerCase()])
}
