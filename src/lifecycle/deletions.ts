// How a deployment goes away over time once DELETE is answered. Pure data and functions: no timers,
// no SQL, no HTTP.
//
// Like a revision, a deletion is stored as an anchor (the step it was last known to be at, since
// when, at which speed). It walks AWAITING_DELETE → AWAITING_FINAL_DELETE → DELETED; the last is
// not a status anyone reads: the deployment is gone (404) from then on.

import { SECOND, timedTable, type RevisionSpeed, type TimedSpeed } from './revisions.js'
import { stepAfter, walk, type Position } from './track.js'

export const DeletionStep = ['AWAITING_DELETE', 'AWAITING_FINAL_DELETE', 'DELETED'] as const
export type DeletionStep = (typeof DeletionStep)[number]
/** The deployment statuses a deletion shows while it lasts. */
export type DeletingStatus = Exclude<DeletionStep, 'DELETED'>
export const DELETING_STATUSES: readonly string[] = ['AWAITING_DELETE', 'AWAITING_FINAL_DELETE'] satisfies DeletingStatus[]

/**
 * How long each step lasts, per timed speed (the deployment's revision speed): `instant` is gone
 * as DELETE answers, `fast` in three seconds, `realistic` in three minutes.
 */
const DURATIONS: Record<TimedSpeed, Record<DeletingStatus, number>> = {
  fast: { AWAITING_DELETE: 2 * SECOND, AWAITING_FINAL_DELETE: SECOND },
  realistic: { AWAITING_DELETE: 60 * SECOND, AWAITING_FINAL_DELETE: 120 * SECOND },
  instant: { AWAITING_DELETE: 0, AWAITING_FINAL_DELETE: 0 },
}

export interface DeletionAnchor {
  step: DeletionStep
  /** When the deletion entered `step` (epoch ms). */
  since: number
  speed: RevisionSpeed
}

/** Where a deletion anchored at `anchor` stands at instant `now`. */
export function deletionAt(anchor: DeletionAnchor, now: number): Position<DeletionStep> {
  return walk(DeletionStep, { status: anchor.step, since: anchor.since }, timedTable(DURATIONS, anchor.speed), now)
}

/** The step after `step`, or null once the deployment is gone. */
export const nextDeletionStep = (step: DeletionStep): DeletionStep | null => stepAfter(DeletionStep, step)
