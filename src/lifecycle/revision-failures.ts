// Why a revision fails, where in its build or deploy, and the sentence its `status_message` shows.
// Pure functions of what the revision was made from: no clock, no SQL, no HTTP.

import type { SourceRevisionConfig } from '../schemas/deployments.js'
import { FAILURE_REFS, failureFor, type Failure, type RevisionStatus } from './revisions.js'
import type { FailureStep, RevisionSnapshot } from './revision-snapshot.js'

export interface RevisionFailure {
  status: Failure
  step: FailureStep
  cause: string
}

/** The magic reference that asks for each failure (`hangar/fail-build` …). */
const MAGIC_REF: Readonly<Record<Failure, string>> = Object.fromEntries(
  Object.entries(FAILURE_REFS).map(([ref, failure]) => [failure, ref]),
) as Record<Failure, string>

/** Where each failure a magic reference asks for happens, and what it says. */
const MAGIC: Readonly<Record<Failure, { step: FailureStep; cause: string }>> = {
  CREATE_FAILED: { step: 'create', cause: 'Creating the revision failed' },
  BUILD_FAILED: { step: 'install', cause: 'The image build failed: installing the dependencies exited with code 1' },
  DEPLOY_FAILED: { step: 'health', cause: 'The deployment failed: the Agent Server did not answer GET /ok within 300 seconds' },
}

/**
 * How the revision will fail, if it will: a magic reference in its config first (see FAILURE_REFS),
 * else a source it cannot build (an uploaded tarball that is missing or does not unpack).
 */
export function revisionFailure(config: Pick<SourceRevisionConfig, 'repo_ref' | 'image_uri'>, snapshot: RevisionSnapshot | null): RevisionFailure | null {
  const magic = failureFor(config)
  if (magic) return { status: magic, step: MAGIC[magic].step, cause: `${MAGIC[magic].cause} (the reference ${MAGIC_REF[magic]} asks for this failure).` }
  const problem = snapshot?.tarball?.problem
  return problem ? { status: 'BUILD_FAILED', ...problem } : null
}

/** The failure a revision's track ends in, if any. */
export const failureStatus = (config: Pick<SourceRevisionConfig, 'repo_ref' | 'image_uri'>, snapshot: RevisionSnapshot | null): Failure | null =>
  revisionFailure(config, snapshot)?.status ?? null

/**
 * A revision's `status_message`: null while all is well; why it failed once it has; what stopped it
 * when it was skipped, interrupted, or ended by hand through hangar's admin API.
 */
export function statusMessage(status: RevisionStatus, failure: RevisionFailure | null): string | null {
  if (status === 'SKIPPED') return 'Skipped: a newer revision of the deployment was created before this one finished.'
  if (status === 'INTERRUPTED') return 'Interrupted on request before it finished.'
  if (status !== 'CREATE_FAILED' && status !== 'BUILD_FAILED' && status !== 'DEPLOY_FAILED') return null
  return failure?.status === status ? failure.cause : `Set to ${status} through hangar's admin API.`
}
