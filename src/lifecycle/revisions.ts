// How a revision moves through its statuses over time. Pure data and functions: no timers, no SQL, no HTTP.
//
// A revision is stored as an *anchor*: the status it was last known to be in and the instant it
// entered it. Its status at any later instant follows from the anchor, its track (the statuses it
// walks through) and its speed (how long each status lasts). Nothing needs to have "ticked" for the
// answer to be right, so a restart, a clock jump or an import can never leave a revision inconsistent.

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

const SECOND = 1000

/** Time spent in each non-terminal status, per timed speed. */
const DURATIONS: Record<'fast' | 'realistic' | 'instant', Record<string, number>> = {
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

/** Sources that are built from code walk the build steps; image sources skip them. */
export const BUILT_SOURCES: readonly string[] = ['github', 'internal_source']

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

export interface Position {
  status: RevisionStatus
  since: number
  /** When the next timed transition is due; null when none will happen by time alone. */
  nextAt: number | null
}

/**
 * How long a revision stays in `status` at a timed speed before time alone moves it on; null at the
 * speeds where time alone moves nothing (poll, manual).
 */
export function durationOf(speed: RevisionSpeed, status: RevisionStatus): number | null {
  if (speed === 'poll' || speed === 'manual') return null
  return DURATIONS[speed][status] ?? 0
}

/** Every status a revision anchored at `anchor` enters by time alone until instant `now`, with when it entered it, in order. */
export function stepsAfter(anchor: Anchor, now: number): { status: RevisionStatus; since: number }[] {
  const steps: { status: RevisionStatus; since: number }[] = []
  let { status, since } = anchor
  let step = anchor.track.indexOf(status)
  if (step < 0) return steps
  while (step < anchor.track.length - 1) {
    const duration = durationOf(anchor.speed, status)
    if (duration === null || now < since + duration) break
    since += duration
    status = anchor.track[++step]
    steps.push({ status, since })
  }
  return steps
}

/** Where a revision anchored at `anchor` stands at instant `now`. */
export function statusAt(anchor: Anchor, now: number): Position {
  const { status, since } = stepsAfter(anchor, now).at(-1) ?? anchor
  const duration = durationOf(anchor.speed, status)
  const timed = duration !== null && anchor.track.includes(status) && nextStatus({ status, track: anchor.track }) !== null
  return { status, since, nextAt: timed ? since + duration : null }
}

/** The status after the current one on the track, or null at the end (or off the track). */
export function nextStatus(anchor: Pick<Anchor, 'status' | 'track'>): RevisionStatus | null {
  const step = anchor.track.indexOf(anchor.status)
  return step >= 0 && step < anchor.track.length - 1 ? anchor.track[step + 1] : null
}
