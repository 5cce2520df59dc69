// The build and deploy logs of a revision, as a pure function of what it was made from, the
// statuses it has been through and the clock: nothing is written per line. Each status has its
// script of lines, spread over how long the status lasts at the revision's speed; a line shows once
// the clock has passed it. A failure cuts its step short with an ERROR line saying why. Secret
// values are never printed: any that a line would hold (a command the user wrote) is masked.

import { createHash } from 'node:crypto'
import type { SourceRevisionConfig } from '../schemas/deployments.js'
import { revisionFailure, statusMessage } from './revision-failures.js'
import { SOURCE_BUCKET, type FailureStep, type RevisionSnapshot } from './revision-snapshot.js'
import { nominalDuration, phasesAt, type Phase, type RevisionHistory } from './revision-timeline.js'
import { BUILT_SOURCES, isTerminal, type RevisionStatus } from './revisions.js'

export const LogLevel = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const
export type LogLevel = (typeof LogLevel)[number]
export const LogType = ['build', 'deploy'] as const
export type LogType = (typeof LogType)[number]

export interface LogLine {
  id: string
  /** Epoch milliseconds. */
  timestamp: number
  level: LogLevel
  message: string
  /** The revision's place among its deployment's (lines of the same instant sort by it, then by `index`). */
  ordinal: number
  index: number
}

/** Everything a revision's logs are made of. */
export interface LogSubject {
  revisionId: string
  ordinal: number
  source: string
  config: SourceRevisionConfig
  snapshot: RevisionSnapshot
  history: RevisionHistory
  /** The registry built images are pushed to. */
  registry: string
  /** Masked wherever a line would hold one; never printed. */
  secretValues: readonly string[]
}

/** A line of a status's script: where in the status it comes (a fraction of its duration), and the step it begins, if any. */
interface Entry {
  status: RevisionStatus
  at: number
  level: LogLevel
  message: string
  step?: FailureStep
}

const BASE_IMAGE = 'langchain/langgraph-api:3.11'
/** Secret values shorter than this are not masked: they would mask ordinary words. */
const MASKED_MIN_LENGTH = 4
const MASK = '********'
const LARGE_TARBALL = 50 * 1024 * 1024

const BUILD_STATUSES: readonly RevisionStatus[] = ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING']

/** Which log a status's lines go to: a built source's early statuses build, everything else deploys. */
const logOf = (source: string, status: RevisionStatus): LogType =>
  BUILT_SOURCES.includes(source) && BUILD_STATUSES.includes(status) ? 'build' : 'deploy'

const builtImage = (subject: LogSubject) =>
  `${subject.registry}/${subject.snapshot.deployment_name}:${subject.revisionId.slice(0, 8)}`

function fetchEntries(subject: LogSubject): Entry[] {
  const line = (at: number, message: string, step?: FailureStep, level: LogLevel = 'INFO'): Entry => ({ status: 'BUILDING', at, level, message, step })
  const { config, snapshot } = subject
  if (subject.source === 'github') {
    return [
      line(0.04, `Cloning ${snapshot.repo_url ?? 'the repository'} at ${config.repo_ref}`, 'fetch'),
      line(0.1, `Checked out commit ${config.repo_commit_sha}`),
    ]
  }
  const tarball = snapshot.tarball
  const path = tarball?.object_path ?? config.source_tarball_path
  return [
    line(0.04, path ? `Fetching source tarball gs://${SOURCE_BUCKET}/${path}` : 'Fetching the source tarball', 'fetch'),
    ...(tarball?.size == null ? [] : [line(0.08, `Downloaded ${tarball.size} bytes (sha256 ${tarball.sha256})`)]),
    ...(tarball?.size != null && tarball.size > LARGE_TARBALL
      ? [line(0.09, 'The source tarball is over 50 MB: large files (models, data sets) belong in .dockerignore', undefined, 'WARNING')]
      : []),
    line(0.1, 'Unpacking the source tarball', 'unpack'),
    ...(tarball?.files == null ? [] : [line(0.12, `Unpacked ${tarball.files} files`)]),
  ]
}

function buildEntries(subject: LogSubject): Entry[] {
  const line = (at: number, message: string, step?: FailureStep, level: LogLevel = 'INFO'): Entry => ({ status: 'BUILDING', at, level, message, step })
  const { snapshot, revisionId } = subject
  const name = snapshot.deployment_name
  const configPath = subject.config.langgraph_config_path ?? 'langgraph.json'
  const image = builtImage(subject)
  const digest = createHash('sha256').update(revisionId).digest('hex')
  return [
    { status: 'AWAITING_BUILD', at: 0, level: 'INFO', message: `Revision ${revisionId} is waiting for a builder` },
    line(0, `Building revision ${revisionId} of '${name}'`),
    ...fetchEntries(subject),
    line(0.15, `Reading ${configPath}`, 'config'),
    line(0.17, `Base image ${BASE_IMAGE}`, undefined, 'DEBUG'),
    line(0.2, `Step 1/5 : FROM ${BASE_IMAGE}`),
    line(0.24, `Step 2/5 : ADD . /deps/${name}`),
    line(0.28, `Step 3/5 : RUN ${snapshot.install_command ?? `uv pip install --system -e /deps/${name}`}`, 'install'),
    line(0.5, 'Installed the dependencies'),
    line(0.55, `Step 4/5 : ${snapshot.build_command ? `RUN ${snapshot.build_command}` : `ENV LANGGRAPH_CONFIG=/deps/${name}/${configPath}`}`),
    line(0.65, `Step 5/5 : WORKDIR /deps/${name}`),
    line(0.72, `Built image ${image}`),
    line(0.78, `Pushing image ${image}`),
    line(0.92, `Pushed ${image}@sha256:${digest}`),
    line(0.97, 'Build finished'),
  ]
}

function deployEntries(subject: LogSubject): Entry[] {
  const line = (at: number, message: string, step?: FailureStep, level: LogLevel = 'INFO'): Entry => ({ status: 'DEPLOYING', at, level, message, step })
  const { snapshot, revisionId } = subject
  const names = snapshot.secret_names
  const built = BUILT_SOURCES.includes(subject.source)
  return [
    ...(built ? [{ status: 'AWAITING_DEPLOY' as const, at: 0, level: 'INFO' as const, message: `Revision ${revisionId} is waiting to be deployed` }] : []),
    line(0, `Deploying revision ${revisionId} of '${snapshot.deployment_name}'`),
    line(0.05, `Pulling image ${built ? builtImage(subject) : subject.config.image_uri}`),
    line(0.15, names.length === 0 ? 'No secrets to set' : `Setting ${names.length} secret${names.length === 1 ? '' : 's'} as environment variables: ${names.join(', ')}`),
    line(0.2, 'Started server process [1]'),
    line(0.25, 'Waiting for application startup.'),
    line(0.35, 'Loading the graphs', undefined, 'DEBUG'),
    line(0.5, 'Application startup complete.'),
    line(0.55, 'Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)'),
    line(0.7, 'Checking health: GET /ok', 'health'),
    line(0.8, 'Health check passed: GET /ok 200'),
    line(0.9, `Routing traffic to revision ${revisionId}`),
  ]
}

/** Every line the revision could print, in order: its statuses' scripts. */
function scriptOf(subject: LogSubject): Entry[] {
  const queued: Entry = { status: 'QUEUED', at: 0, level: 'INFO', message: `Revision ${subject.revisionId} is queued` }
  return [queued, ...(BUILT_SOURCES.includes(subject.source) ? buildEntries(subject) : []), ...deployEntries(subject)]
}

const masker = (values: readonly string[]) => {
  const masked = [...new Set(values.filter((value) => value.length >= MASKED_MIN_LENGTH))].sort((a, b) => b.length - a.length)
  return (message: string) => masked.reduce((text, value) => text.split(value).join(MASK), message)
}

/**
 * The lines of one of the revision's logs that the clock has passed, oldest first, and whether
 * that log is complete (no line will be added to it).
 */
export function revisionLog(subject: LogSubject, type: LogType, now: number): { lines: LogLine[]; complete: boolean } {
  const phases = phasesAt(subject.history, now)
  const failure = revisionFailure(subject.config, subject.snapshot)
  const script = scriptOf(subject)
  const lines: LogLine[] = []
  const mask = masker(subject.secretValues)
  const add = (index: number, timestamp: number, level: LogLevel, message: string) => {
    if (timestamp <= now) {
      lines.push({ id: `${subject.revisionId}-${type}-${String(index).padStart(4, '0')}`, timestamp, level, message: mask(message), ordinal: subject.ordinal, index })
    }
  }
  phases.forEach((phase, i) => {
    const next = phases[i + 1]
    if (logOf(subject.source, phase.status) !== type) return
    const failingStep = failure && next?.status === failure.status ? failure.step : undefined
    for (const { index, timestamp, entry } of placed(script, phase, next, subject, failingStep)) {
      add(index, timestamp, entry.level, entry.message)
    }
  })
  const last = phases.at(-1)!
  const terminal = isTerminal(last.status)
  if (terminal) {
    const before = phases.at(-2)?.status ?? last.status
    const deployed = last.status === 'DEPLOYED'
    if (logOf(subject.source, deployed ? last.status : before) === type) {
      const message = deployed
        ? `Application started: revision ${subject.revisionId} of '${subject.snapshot.deployment_name}' is live`
        : statusMessage(last.status, failure) ?? `Ended as ${last.status}`
      const level: LogLevel = deployed || last.status === 'SKIPPED' ? 'INFO' : last.status === 'INTERRUPTED' ? 'WARNING' : 'ERROR'
      add(script.length, last.start, level, message)
    }
  }
  const complete = terminal || (type === 'build' && logOf(subject.source, last.status) === 'deploy')
  return { lines, complete }
}

/**
 * Where each line of a status's script falls. The revision went on to `next`: lines past its start
 * are pulled back to it when that was the next step on the track (the work was done); when the
 * revision was stopped (interrupted, skipped, ended by hand) they never came. A failure during the
 * status ends it at the first line of its failing step.
 */
function placed(script: readonly Entry[], phase: Phase, next: Phase | undefined, subject: LogSubject, failingStep: FailureStep | undefined) {
  const { track, speed } = subject.history
  const duration = nominalDuration(speed, phase.status)
  const completed = next !== undefined && track.includes(next.status)
  const out: { index: number; timestamp: number; entry: Entry }[] = []
  for (const [index, entry] of script.entries()) {
    if (entry.status !== phase.status) continue
    let timestamp = phase.start + Math.floor(entry.at * duration)
    if (next && timestamp > next.start) {
      if (!completed) continue
      timestamp = next.start
    }
    out.push({ index, timestamp, entry })
    if (failingStep !== undefined && entry.step === failingStep) break
  }
  return out
}
