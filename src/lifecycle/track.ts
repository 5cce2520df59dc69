// Walking a track of statuses over time: the one rule revisions and deletions share. Pure
// functions: no timers, no SQL, no HTTP.

/** Where something on a track stands: its status, when it entered it, when it moves on by time alone. */
export interface Position<S extends string> {
  status: S
  since: number
  /** When the next timed transition is due; null when none will happen by time alone. */
  nextAt: number | null
}

/**
 * Every status something that entered `status` at `since` enters by time alone until instant
 * `now`, with when it entered it, in order, when each status of `track` lasts `durations[status]`
 * ms. Without durations (moves only when told), or off the track, there are none.
 */
export function stepsAlong<S extends string>(
  track: readonly S[],
  from: { status: S; since: number },
  durations: Readonly<Partial<Record<S, number>>> | undefined,
  now: number,
): Array<{ status: S; since: number }> {
  const steps: Array<{ status: S; since: number }> = []
  let { status, since } = from
  let step = track.indexOf(status)
  if (!durations || step < 0) return steps
  while (step < track.length - 1) {
    const due = since + (durations[status] ?? 0)
    if (now < due) break
    since = due
    status = track[++step]
    steps.push({ status, since })
  }
  return steps
}

/** Where something that entered `status` at `since` stands at instant `now` (see stepsAlong). */
export function walk<S extends string>(
  track: readonly S[],
  from: { status: S; since: number },
  durations: Readonly<Partial<Record<S, number>>> | undefined,
  now: number,
): Position<S> {
  const { status, since } = stepsAlong(track, from, durations, now).at(-1) ?? from
  const moving = durations !== undefined && stepAfter(track, status) !== null
  return { status, since, nextAt: moving ? since + (durations[status] ?? 0) : null }
}

/** The status after `status` on the track, or null at its end (or off it). */
export function stepAfter<S extends string>(track: readonly S[], status: S): S | null {
  const step = track.indexOf(status)
  return step >= 0 && step < track.length - 1 ? track[step + 1] : null
}
