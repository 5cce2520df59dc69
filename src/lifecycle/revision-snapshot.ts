// What a revision was made from beyond its own `source_revision_config`: taken once, when the
// revision is created, and kept with it, so its outcome and its logs never change when the
// deployment or an upload changes later. Secret values are never part of it, only their names.

/** A step of a build or a deploy at which a revision can fail. */
export type FailureStep = 'create' | 'fetch' | 'unpack' | 'config' | 'install' | 'health'

/** Why an uploaded source cannot be built: the step that fails, and the sentence that says why. */
export interface SourceProblem {
  step: FailureStep
  cause: string
}

/** The tarball an `internal_source` revision builds from, as it was when the revision was created. */
export interface TarballFacts {
  /** null when the revision names none. */
  object_path: string | null
  /** Its size in bytes; null when nothing was uploaded to that path. */
  size: number | null
  sha256: string | null
  /** How many files it unpacks to; null when it does not unpack. */
  files: number | null
  problem: SourceProblem | null
}

export interface RevisionSnapshot {
  deployment_name: string
  /** The names of the deployment's secrets (never their values). */
  secret_names: string[]
  repo_url: string | null
  install_command: string | null
  build_command: string | null
  /** Only for a revision built from an uploaded tarball. */
  tarball: TarballFacts | null
}

/** The bucket uploaded sources go to (what the logs show; the upload URLs name it too). */
export const SOURCE_BUCKET = 'hangar-source-uploads'
