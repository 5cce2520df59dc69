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
 * Where something that entered `status` at `since` stands at instant `now`, when each status of
 * `track` lasts `durations[status]` ms. Without durations (moves only when told), or off the track
 * (a status the walk never leaves), it stays where it is.
 */
export function walk<S extends string>(
  track: readonly S[],
  from: { status: S; since: number },
  durations: Readonly<Partial<Record<S, number>>> | undefined,
  now: number,
): Position<S> {
  let { status, since } = from
  let step = track.indexOf(status)
  if (!durations || step < 0) return { status, since, nextAt: null }
  while (step < track.length - 1) {
    const due = since + (durations[status] ?? 0)
    if (now < due) return { status, since, nextAt: due }
    since = due
    status = track[++step]
  }
  return { status, since, nextAt: null }
}

/** The status after `status` on the track, or null at its end (or off it). */
export function stepAfter<S extends string>(track: readonly S[], status: S): S | null {
  const step = track.indexOf(status)
  return step >= 0 && step < track.length - 1 ? track[step + 1] : null
}
