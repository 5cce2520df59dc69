// The deployment rules the real service enforces beyond its schemas (its 400s), and what a create,
// a PATCH or a revision create changes. Pure functions: no SQL, no HTTP. A broken rule is a
// `RuleViolation` whose message is the `detail` the client receives (see RuleViolation).

import { randomBytes } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  RevisionCreateRequest,
  SourceConfig,
  SourceRevisionConfig,
  SourceRevisionConfigRequest,
} from '../schemas/deployments.js'
import { DELETING_STATUSES } from '../lifecycle/deletions.js'
import { withDefaults } from './deployment-defaults.js'
import { RuleViolation } from './errors.js'

export interface RevisionInput {
  source: string
  config: SourceRevisionConfig
}

type Secret = Deployment['secrets'][number]

/** Set once at creation; a PATCH may repeat the current value but not change it. */
const IMMUTABLE_SOURCE_CONFIG = ['integration_id', 'repo_url', 'deployment_type', 'listener_id', 'listener_config', 'template_id'] as const
/** source_config fields whose change needs a new revision. */
const REVISING_SOURCE_CONFIG = ['resource_spec', 'install_command', 'build_command']
const REVISION_FIELDS = ['repo_ref', 'langgraph_config_path', 'image_uri', 'source_tarball_path'] as const
/** Sources built from a `langgraph.json` in the code, which must say where it is. */
const CONFIG_PATH_SOURCES: readonly string[] = ['github', 'internal_source']
/** Sources that run an image: they have no `langgraph.json` of their own. */
const IMAGE_SOURCES: readonly string[] = ['external_docker', 'internal_docker']
/** Sources whose code or image `langgraph deploy` sends after the create, in a PATCH. */
const UPLOADED_SOURCES: readonly string[] = ['internal_source', 'internal_docker']
/** The hosted types that may scale to zero (a self-hosted deployment, on a listener, always may). */
const SCALES_TO_ZERO: readonly string[] = ['dev_zero', 'dev_free_zero']

/** A fresh commit SHA for revisions built from a repository; other sources have none. */
export const commitShaFor = (source: string) => (source === 'github' ? randomBytes(20).toString('hex') : null)

/** The request's revision config, with `graph_config_path` read as `langgraph_config_path`. */
export function revisionConfigOf(request: SourceRevisionConfigRequest, source: string): SourceRevisionConfig {
  return {
    repo_ref: request.repo_ref ?? null,
    langgraph_config_path: request.langgraph_config_path ?? request.graph_config_path ?? null,
    image_uri: request.image_uri ?? null,
    source_tarball_path: request.source_tarball_path ?? null,
    repo_commit_sha: commitShaFor(source),
    tracked_packages: null,
  }
}

/** Rules on a deployment's `source_config`, whether or not a revision is made. */
function checkSourceConfig(deploymentSource: string, config: SourceConfig, revision: SourceRevisionConfig) {
  if (config.custom_url != null && deploymentSource !== 'external_docker') {
    throw new RuleViolation('source_config.custom_url can only be set for external_docker source deployments.')
  }
  if (config.template_id != null && deploymentSource !== 'internal_template') {
    throw new RuleViolation('source_config.template_id can only be set for internal_template source deployments.')
  }
  if (config.build_on_push === true && revision.repo_ref?.startsWith('refs/tags/')) {
    throw new RuleViolation(
      'source_config.build_on_push cannot be enabled when source_revision_config.repo_ref specifies a tag.',
    )
  }
  const selfHosted = config.listener_id != null
  if (config.resource_spec?.min_scale === 0 && !selfHosted && !SCALES_TO_ZERO.includes(config.deployment_type ?? '')) {
    throw new RuleViolation(`source_config.resource_spec.min_scale can only be 0 for ${SCALES_TO_ZERO.join(' and ')} deployments, or self-hosted ones.`)
  }
}

/** Rules on what a revision of `source` is made from. */
function checkRevision(source: string, revision: SourceRevisionConfig) {
  if (source === 'internal_source' && !revision.source_tarball_path) {
    throw new RuleViolation('source_revision_config.source_tarball_path is required for internal_source source.')
  }
  if (IMAGE_SOURCES.includes(source) && !revision.image_uri) {
    throw new RuleViolation(`source_revision_config.image_uri is required for ${source} source.`)
  }
  if (CONFIG_PATH_SOURCES.includes(source) && !revision.langgraph_config_path) {
    throw new RuleViolation(`source_revision_config.langgraph_config_path is required for ${source} source.`)
  }
  if (IMAGE_SOURCES.includes(source) && revision.langgraph_config_path != null) {
    throw new RuleViolation(`source_revision_config.langgraph_config_path must be null for ${source} source.`)
  }
}

/** What the workspace already has, as far as a create's rules need to know. */
export interface KnownReferences {
  integration(id: string): boolean
  listener(id: string): boolean
}

/**
 * A create whose name a deployment of the workspace already has (names are unique per workspace).
 * The last of a create's checks: the store finds it as it writes (the unique index), after planCreate's.
 */
export const nameTaken = (name: string) => new RuleViolation(`A deployment named '${name}' already exists.`)

export interface CreatePlan {
  /** The request's `source_config` with the service's defaults filled in. */
  sourceConfig: SourceConfig
  /** The first revision; null for an uploaded source whose code arrives in a later PATCH. */
  revision: RevisionInput | null
  /** Without a first revision, what the request did say about it (a config path), kept for the PATCH that brings the code. */
  pendingConfig: SourceRevisionConfig | null
}

/** Checks a create request beyond its schema, but for its name (see nameTaken); returns what to store. */
export function planCreate(request: DeploymentCreateRequest, known: KnownReferences): CreatePlan {
  const { source } = request
  const sourceConfig = withDefaults(source, request.source_config)
  const config = revisionConfigOf(request.source_revision_config, source)
  // The code is a tarball (with, perhaps, where its langgraph.json is: a newer CLI may send that on
  // create) or an image; without it the deployment waits for the PATCH that brings it.
  const pending = source === 'internal_source'
    ? config.source_tarball_path == null
    : UPLOADED_SOURCES.includes(source) && REVISION_FIELDS.every((field) => config[field] == null)
  if (source === 'github') {
    if (!sourceConfig.integration_id) throw new RuleViolation('source_config.integration_id is required for github source.')
    if (!sourceConfig.repo_url) throw new RuleViolation('source_config.repo_url is required for github source.')
    if (!config.repo_ref) throw new RuleViolation('source_revision_config.repo_ref is required for github source.')
  }
  if (source === 'internal_template' && !sourceConfig.template_id) {
    throw new RuleViolation('source_config.template_id is required for internal_template source.')
  }
  if (sourceConfig.integration_id && !known.integration(sourceConfig.integration_id)) {
    throw new RuleViolation(`Integration ID ${sourceConfig.integration_id} not found.`)
  }
  if (sourceConfig.listener_id && !known.listener(sourceConfig.listener_id)) {
    throw new RuleViolation(`Listener ID ${sourceConfig.listener_id} not found.`)
  }
  if (!pending) checkRevision(source, config)
  checkSourceConfig(source, sourceConfig, config)
  return { sourceConfig, revision: pending ? null : { source, config }, pendingConfig: pending ? { ...config, repo_commit_sha: null } : null }
}

export interface PatchPlan {
  sourceConfig: SourceConfig
  secrets: Secret[]
  secretReferences: Deployment['secret_references']
  displayName: string | null
  /** The revision the patch creates, if any. */
  revision: RevisionInput | null
  /** Whether anything about the deployment changed. */
  changed: boolean
}

/** Upsert by name: an empty list changes nothing (the real service's rule). */
function mergeSecrets(current: Secret[], updates: Secret[]): Secret[] {
  const merged = new Map(current.map((s) => [s.name, s]))
  for (const s of updates) merged.set(s.name, s)
  return [...merged.values()]
}

/** A deployment being deleted takes no more changes. */
export function checkNotDeleting(deployment: Pick<Deployment, 'id' | 'status'>): void {
  if (DELETING_STATUSES.includes(deployment.status)) throw new RuleViolation(`Deployment ID ${deployment.id} is being deleted.`)
}

type Changes = DeploymentPatchRequest & NonNullable<RevisionCreateRequest>

/**
 * What a PATCH (or, with `always`, a revision create) does to `current`: non-null fields apply;
 * only some of them make a new revision. `display_name` never does, and null leaves it as it is.
 */
export function planPatch(current: Deployment, patch: Changes, options: { always?: boolean } = {}): PatchPlan {
  checkNotDeleting(current)
  const sourceConfig: SourceConfig = { ...current.source_config }
  let revise = options.always === true
  for (const [key, value] of Object.entries(patch.source_config ?? {})) {
    if (value == null) continue
    const field = key as keyof SourceConfig
    if ((IMMUTABLE_SOURCE_CONFIG as readonly string[]).includes(key)) {
      if (!isDeepStrictEqual(value, sourceConfig[field])) {
        throw new RuleViolation(`source_config.${key} cannot be changed once the deployment is created.`)
      }
      continue
    }
    if (REVISING_SOURCE_CONFIG.includes(key)) revise = true
    ;(sourceConfig as Record<string, unknown>)[field] = value
  }

  const source = patch.revision_source ?? current.source
  if (patch.revision_source != null) revise = true
  const config: SourceRevisionConfig = { ...current.source_revision_config, tracked_packages: null }
  if (patch.source_revision_config) {
    const requested = revisionConfigOf(patch.source_revision_config, source)
    for (const field of REVISION_FIELDS) {
      if (requested[field] == null) continue
      config[field] = requested[field]
      revise = true
    }
  }
  if (patch.tracked_packages != null) {
    config.tracked_packages = patch.tracked_packages
    revise = true
  }

  let secrets = current.secrets
  if (patch.secrets && patch.secrets.length > 0) {
    secrets = mergeSecrets(current.secrets, patch.secrets)
    revise = true
  }
  let secretReferences = current.secret_references ?? null
  if (patch.secret_references != null) {
    secretReferences = patch.secret_references
    revise = true
  }
  const displayName = patch.display_name ?? current.display_name ?? null

  checkSourceConfig(current.source, sourceConfig, config)
  if (revise) checkRevision(source, config)
  const changed = revise || displayName !== (current.display_name ?? null) || !isDeepStrictEqual(sourceConfig, current.source_config)
  return {
    sourceConfig,
    secrets,
    secretReferences,
    displayName,
    revision: revise ? { source, config: { ...config, repo_commit_sha: commitShaFor(source) } } : null,
    changed,
  }
}
