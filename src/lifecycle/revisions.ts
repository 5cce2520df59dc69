// How a revision moves through its statuses over time. Pure data and functions: no timers, no SQL, no HTTP.
//
// A revision is stored as an *anchor*: the status it was last known to be in and the instant it
// entered it. Its status at any later instant follows from the anchor, its track (the statuses it
// walks through) and its speed (how long each status lasts). Nothing needs to have "ticked" for the
// answer to be right, so a restart, a clock jump or an import can never leave a revision inconsistent.

import { stepAfter, stepsAlong, walk, type Position } from './track.js'

export const RevisionStatus = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
  'CREATE_FAILED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'DEPLOYED',
  'SKIPPED',
  'INTERRUPTED',
  'UNKNOWN',
] as const
export type RevisionStatus = (typeof RevisionStatus)[number]

export const TERMINAL_STATUSES: readonly RevisionStatus[] = [
  'CREATE_FAILED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'DEPLOYED',
  'SKIPPED',
  'INTERRUPTED',
  'UNKNOWN',
]
export const isTerminal = (status: RevisionStatus) => TERMINAL_STATUSES.includes(status)

/**
 * - `fast`: about one second per step (the default);
 * - `realistic`: minutes, like the real service;
 * - `instant`: DEPLOYED (or failed) as soon as it is created;
 * - `poll`: one step per read of that revision, for deterministic polling tests;
 * - `manual`: moves only when told (admin API).
 */
export const RevisionSpeed = ['fast', 'realistic', 'instant', 'poll', 'manual'] as const
export type RevisionSpeed = (typeof RevisionSpeed)[number]
/** The speeds at which things move by time alone (`poll` and `manual` move only when read or told). */
export type TimedSpeed = Exclude<RevisionSpeed, 'poll' | 'manual'>
/** The durations table of a timed speed, or undefined for a speed that does not move by time. */
export function timedTable<T>(tables: Record<TimedSpeed, T>, speed: RevisionSpeed): T | undefined {
  return speed === 'poll' || speed === 'manual' ? undefined : tables[speed]
}

export const SECOND = 1000

/** Time spent in each non-terminal status, per timed speed. */
const DURATIONS: Record<TimedSpeed, Partial<Record<RevisionStatus, number>>> = {
  fast: {
    CREATING: SECOND,
    QUEUED: SECOND,
    AWAITING_BUILD: SECOND,
    BUILDING: SECOND,
    AWAITING_DEPLOY: SECOND,
    DEPLOYING: SECOND,
  },
  realistic: {
    CREATING: 10 * SECOND,
    QUEUED: 30 * SECOND,
    AWAITING_BUILD: 15 * SECOND,
    BUILDING: 240 * SECOND,
    AWAITING_DEPLOY: 15 * SECOND,
    DEPLOYING: 180 * SECOND,
  },
  instant: { CREATING: 0, QUEUED: 0, AWAITING_BUILD: 0, BUILDING: 0, AWAITING_DEPLOY: 0, DEPLOYING: 0 },
}

const timedDurations = (speed: RevisionSpeed) => timedTable(DURATIONS, speed)

/** Sources that are built from code (a template is code too) walk the build steps; image sources skip them. */
export const BUILT_SOURCES: readonly string[] = ['github', 'internal_source', 'internal_template']

const BUILD_TRACK: readonly RevisionStatus[] = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
  'DEPLOYED',
]
const IMAGE_TRACK: readonly RevisionStatus[] = ['CREATING', 'QUEUED', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED']

export type Failure = 'CREATE_FAILED' | 'BUILD_FAILED' | 'DEPLOY_FAILED'

/**
 * Magic references that make a revision fail without any admin call: used as
 * `source_revision_config.repo_ref`, or as the image name of `image_uri` (any tag or digest).
 */
export const FAILURE_REFS: Readonly<Record<string, Failure>> = {
  'hangar/fail-create': 'CREATE_FAILED',
  'hangar/fail-build': 'BUILD_FAILED',
  'hangar/fail-deploy': 'DEPLOY_FAILED',
}

/** The step at which each failure happens. */
const FAILS_DURING: Record<Failure, RevisionStatus> = {
  CREATE_FAILED: 'CREATING',
  BUILD_FAILED: 'BUILDING',
  DEPLOY_FAILED: 'DEPLOYING',
}

function imageName(uri: string): string {
  const noDigest = uri.split('@')[0]
  const slash = noDigest.lastIndexOf('/')
  const colon = noDigest.lastIndexOf(':')
  return colon > slash ? noDigest.slice(0, colon) : noDigest
}

export function failureFor(config: { repo_ref?: string | null; image_uri?: string | null }): Failure | null {
  if (config.repo_ref && Object.hasOwn(FAILURE_REFS, config.repo_ref)) return FAILURE_REFS[config.repo_ref]
  if (config.image_uri) {
    const name = imageName(config.image_uri)
    if (Object.hasOwn(FAILURE_REFS, name)) return FAILURE_REFS[name]
  }
  return null
}

/**
 * The statuses a revision walks through, ending in its terminal status. A build failure on an image
 * source (which has no build step) happens where the build would have been: right after QUEUED.
 */
export function trackFor(source: string, failure: Failure | null): readonly RevisionStatus[] {
  const path = BUILT_SOURCES.includes(source) ? BUILD_TRACK : IMAGE_TRACK
  if (!failure) return path
  const during = FAILS_DURING[failure]
  const at = path.indexOf(during)
  const upTo = at >= 0 ? path.slice(0, at + 1) : path.slice(0, path.indexOf('QUEUED') + 1)
  return [...upTo, failure]
}

export interface Anchor {
  status: RevisionStatus
  /** When the revision entered `status` (epoch ms). */
  since: number
  speed: RevisionSpeed
  track: readonly RevisionStatus[]
}

/**
 * How long a revision stays in `status` at a timed speed before time alone moves it on; null at the
 * speeds where time alone moves nothing (poll, manual).
 */
export function durationOf(speed: RevisionSpeed, status: RevisionStatus): number | null {
  const durations = timedDurations(speed)
  return durations ? durations[status] ?? 0 : null
}

/** Every status a revision anchored at `anchor` enters by time alone until instant `now`, with when it entered it, in order. */
export function stepsAfter(anchor: Anchor, now: number): Array<{ status: RevisionStatus; since: number }> {
  return stepsAlong(anchor.track, anchor, timedDurations(anchor.speed), now)
}

/**
 * When a revision anchored at `anchor` reaches the end of its track (DEPLOYED or its failure) by
 * time alone; null when time alone never moves it there (poll, manual, off the track) or it is there.
 */
export function endAt(anchor: Anchor): number | null {
  return stepsAfter(anchor, Number.POSITIVE_INFINITY).at(-1)?.since ?? null
}

/** Where a revision anchored at `anchor` stands at instant `now`. */
export function statusAt(anchor: Anchor, now: number): Position<RevisionStatus> {
  return walk(anchor.track, anchor, timedDurations(anchor.speed), now)
}

/** Where a revision anchored at `anchor` stands at instant `now` (statusAt), and when it reaches its end from there (endAt). */
export function placeAt(anchor: Anchor, now: number): Position<RevisionStatus> & { endsAt: number | null } {
  const { status, since, nextAt } = statusAt(anchor, now)
  // Nothing comes by time alone (an end, poll, manual): no end by time either.
  return { status, since, nextAt, endsAt: nextAt === null ? null : endAt({ status, since, speed: anchor.speed, track: anchor.track }) }
}

/** The status after the current one on the track, or null at the end (or off the track). */
export function nextStatus(anchor: Pick<Anchor, 'status' | 'track'>): RevisionStatus | null {
  return stepAfter(anchor.track, anchor.status)
}
