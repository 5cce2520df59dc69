// The deployment rules the real service enforces beyond its schemas (its 400s), and what a PATCH
// changes. Pure functions: no SQL, no HTTP. A broken rule is a `RuleViolation` whose message is the
// `detail` the client receives (see RuleViolation).

import { randomBytes } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentPatchRequest,
  SourceConfig,
  SourceRevisionConfig,
  SourceRevisionConfigRequest,
} from '../schemas/deployments.js'
import { BUILT_SOURCES } from '../lifecycle/revisions.js'
import { RuleViolation } from './errors.js'

export interface RevisionInput {
  source: string
  config: SourceRevisionConfig
}

type Secret = Deployment['secrets'][number]

/** Set once at creation; a PATCH may repeat the current value but not change it. */
const IMMUTABLE_SOURCE_CONFIG = ['integration_id', 'repo_url', 'deployment_type', 'listener_id', 'listener_config'] as const
/** source_config fields whose change needs a new revision. */
const REVISING_SOURCE_CONFIG = ['resource_spec', 'install_command', 'build_command']
const REVISION_FIELDS = ['repo_ref', 'langgraph_config_path', 'image_uri', 'source_tarball_path'] as const

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
  }
}

function checkState(deploymentSource: string, source: string, config: SourceConfig, revision: SourceRevisionConfig) {
  if (config.custom_url != null && deploymentSource !== 'external_docker') {
    throw new RuleViolation('source_config.custom_url can only be set for external_docker source deployments.')
  }
  if (config.build_on_push === true && revision.repo_ref?.startsWith('refs/tags/')) {
    throw new RuleViolation(
      'source_config.build_on_push cannot be enabled when source_revision_config.repo_ref specifies a tag.',
    )
  }
  if (BUILT_SOURCES.includes(source) && !revision.langgraph_config_path) {
    throw new RuleViolation(`source_revision_config.langgraph_config_path is required for ${source} source.`)
  }
  if (!BUILT_SOURCES.includes(source) && revision.langgraph_config_path != null) {
    throw new RuleViolation(`source_revision_config.langgraph_config_path must be null for ${source} source.`)
  }
}

/** What exists in the workspace, for the references a create request makes. */
/** What the workspace already has, as far as a create's rules need to know. */
export interface KnownReferences {
  integration(id: string): boolean
  listener(id: string): boolean
  /** Whether a deployment of the workspace already has this name (names are unique per workspace). */
  deploymentNamed(name: string): boolean
}

/** Checks a create request beyond its schema; returns the first revision to create. */
export function planCreate(request: DeploymentCreateRequest, known: KnownReferences): RevisionInput {
  const { source, source_config: sourceConfig } = request
  const config = revisionConfigOf(request.source_revision_config, source)
  if (source === 'github') {
    if (!sourceConfig.integration_id) throw new RuleViolation('source_config.integration_id is required for github source.')
    if (!sourceConfig.repo_url) throw new RuleViolation('source_config.repo_url is required for github source.')
    if (!config.repo_ref) throw new RuleViolation('source_revision_config.repo_ref is required for github source.')
  }
  if (sourceConfig.integration_id && !known.integration(sourceConfig.integration_id)) {
    throw new RuleViolation(`Integration ID ${sourceConfig.integration_id} not found.`)
  }
  if (sourceConfig.listener_id && !known.listener(sourceConfig.listener_id)) {
    throw new RuleViolation(`Listener ID ${sourceConfig.listener_id} not found.`)
  }
  if ((source === 'external_docker' || source === 'internal_docker') && !config.image_uri) {
    throw new RuleViolation(`source_revision_config.image_uri is required for ${source} source.`)
  }
  checkState(source, source, request.source_config, config)
  if (known.deploymentNamed(request.name)) throw new RuleViolation(`A deployment named '${request.name}' already exists.`)
  return { source, config }
}

export interface PatchPlan {
  sourceConfig: SourceConfig
  secrets: Secret[]
  secretReferences: Deployment['secret_references']
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

/** What a PATCH does to `current`: non-null fields apply; only some of them make a new revision. */
export function planPatch(current: Deployment, patch: DeploymentPatchRequest): PatchPlan {
  const sourceConfig: SourceConfig = { ...current.source_config }
  let revise = false
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
  const config: SourceRevisionConfig = { ...current.source_revision_config }
  if (patch.source_revision_config) {
    const requested = revisionConfigOf(patch.source_revision_config, source)
    for (const field of REVISION_FIELDS) {
      if (requested[field] == null) continue
      config[field] = requested[field]
      revise = true
    }
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

  checkState(current.source, source, sourceConfig, config)
  const changed = revise || !isDeepStrictEqual(sourceConfig, current.source_config)
  return {
    sourceConfig,
    secrets,
    secretReferences,
    revision: revise ? { source, config: { ...config, repo_commit_sha: commitShaFor(source) } } : null,
    changed,
  }
}
