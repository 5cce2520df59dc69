// When a revision entered each status it has been through, as a pure function of what the store
// keeps (its creation, the status changes it recorded, its anchor) and the clock. The statuses a
// single write skipped over (a clock jump moves a revision several steps at once) are placed where
// the revision's speed puts them, never after the next status that is known.

import { durationOf, stepsAfter, type RevisionSpeed, type RevisionStatus } from './revisions.js'

export interface RevisionHistory {
  track: readonly RevisionStatus[]
  speed: RevisionSpeed
  createdAt: number
  /** Status changes as the store recorded them: the status, and when the revision entered it. */
  steps: readonly { status: RevisionStatus; at: number }[]
  /** The status the revision was last written in, and since when. */
  anchor: { status: RevisionStatus; since: number }
}

/** A status the revision has been in: from `start` until `end` (null: it still is). */
export interface Phase {
  status: RevisionStatus
  start: number
  end: number | null
}

/** How long a status lasts at the revision's speed; at the speeds time does not move (poll, manual), as long as at `fast`. */
export const nominalDuration = (speed: RevisionSpeed, status: RevisionStatus) => durationOf(speed, status) ?? durationOf('fast', status) ?? 0

/** The statuses the revision has been in until `now`, oldest first; the last one is where it stands. */
export function phasesAt(history: RevisionHistory, now: number): Phase[] {
  const { track, speed } = history
  const known = new Map<RevisionStatus, number>()
  const note = (status: RevisionStatus, at: number) => {
    const seen = known.get(status)
    if (seen === undefined || at < seen) known.set(status, at)
  }
  note(track[0], history.createdAt)
  for (const step of history.steps) note(step.status, step.at)
  note(history.anchor.status, history.anchor.since)
  for (const step of stepsAfter({ ...history.anchor, speed, track }, now)) note(step.status, step.since)

  // On the track, every status up to the furthest one known was passed through; one off the track
  // (an interruption, an end set by hand) comes last.
  const furthest = Math.max(...[...known.keys()].map((status) => track.indexOf(status)))
  const entered: { status: RevisionStatus; start: number }[] = []
  for (let i = 0; i <= furthest; i++) {
    const status = track[i]
    const at = known.get(status)
    if (at !== undefined) {
      entered.push({ status, start: at })
      continue
    }
    const previous = entered.at(-1)!
    const next = track.slice(i + 1, furthest + 1).map((s) => known.get(s)).find((t) => t !== undefined) ?? previous.start
    entered.push({ status, start: Math.min(previous.start + nominalDuration(speed, previous.status), next) })
  }
  for (const [status, at] of known) if (!track.includes(status)) entered.push({ status, start: at })
  return entered.map((phase, i) => ({ ...phase, end: entered[i + 1]?.start ?? null }))
}
