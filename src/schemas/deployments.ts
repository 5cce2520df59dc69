// Deployments (v2): request and response schemas, field for field as in the real service's OpenAPI
// document (`test/reference/control-plane-openapi.json`), in the same property order, plus what the
// official tools send and read beyond it (docs/control-plane-tools: `display_name`,
// `tracked_packages`, `template_id`, the newer enum values, the revision create body).

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { RevisionStatus } from '../lifecycle/revisions.js'
import { AnyDict, DateTime, Dict, Nullable, StringEnum, Uuid } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))

export const Source = StringEnum(['github', 'external_docker', 'internal_docker', 'internal_source', 'internal_template'])
export const DeploymentType = StringEnum(['dev_free', 'dev', 'prod', 'dev_zero', 'dev_free_zero'])
export const DeploymentStatus = StringEnum(['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'AWAITING_FINAL_DELETE', 'UNKNOWN'])
export const RevisionStatusSchema = StringEnum(RevisionStatus)

export const Secret = Type.Object({ name: Type.String(), value: Type.String() }, { title: 'Secret' })
export const SecretReference = Type.Object(
  { name: Type.String(), secret_name: Type.String(), secret_key: Type.String() },
  { title: 'SecretReference' },
)

const LocalObjectReference = Type.Object({ name: Type.String() }, { title: 'LocalObjectReference' })
const EnvVar = Type.Object(
  { name: Type.String(), value: opt(Type.String()), valueFrom: opt(AnyDict()) },
  { title: 'EnvVar' },
)
const ResourceRequirements = Type.Object(
  { limits: opt(Dict(Type.String())), requests: opt(Dict(Type.String())) },
  { title: 'ResourceRequirements' },
)
const VolumeMount = Type.Object(
  {
    name: Type.Optional(Type.String()),
    mountPath: Type.Optional(Type.String()),
    subPath: opt(Type.String()),
    mountPropagation: opt(Type.String()),
    readOnly: opt(Type.Boolean()),
    subPathExpr: opt(Type.String()),
  },
  { title: 'VolumeMount' },
)
const Volume = Type.Object(
  {
    name: Type.Optional(Type.String()),
    configMap: opt(AnyDict()),
    secret: opt(AnyDict()),
    emptyDir: opt(AnyDict()),
    persistentVolumeClaim: opt(AnyDict()),
    nfs: opt(AnyDict()),
    projected: opt(AnyDict()),
    downwardAPI: opt(AnyDict()),
    csi: opt(AnyDict()),
  },
  { title: 'Volume' },
)
const Container = Type.Object(
  {
    name: Type.String(),
    image: Type.String(),
    imagePullPolicy: opt(Type.String()),
    command: opt(Type.Array(Type.String())),
    args: opt(Type.Array(Type.String())),
    workingDir: opt(Type.String()),
    env: opt(Type.Array(EnvVar)),
    envFrom: opt(Type.Array(AnyDict())),
    resources: opt(ResourceRequirements),
    volumeMounts: opt(Type.Array(VolumeMount)),
    securityContext: opt(AnyDict()),
    restartPolicy: opt(Type.String()),
  },
  { title: 'Container' },
)

const cpu = (maximum: number) => opt(Type.Number({ minimum: 0.1, maximum }))
const int = () => opt(Type.Integer())
const num = () => opt(Type.Number())

export const ResourceSpec = Type.Object(
  {
    min_scale: int(),
    max_scale: int(),
    cpu: cpu(8),
    cpu_limit: cpu(16),
    memory_mb: int(),
    memory_limit_mb: int(),
    queue_min_scale: int(),
    queue_max_scale: int(),
    queue_cpu: cpu(8),
    queue_cpu_limit: cpu(16),
    queue_memory_mb: int(),
    queue_memory_limit_mb: int(),
    orchestrator_cpu: num(),
    orchestrator_cpu_limit: num(),
    orchestrator_memory_mb: int(),
    orchestrator_memory_limit_mb: int(),
    orchestrator_min_scale: int(),
    orchestrator_max_scale: int(),
    executor_cpu: num(),
    executor_cpu_limit: num(),
    executor_memory_mb: int(),
    executor_memory_limit_mb: int(),
    redis_cpu: cpu(8),
    redis_cpu_limit: cpu(16),
    redis_memory_mb: int(),
    redis_memory_limit_mb: int(),
    labels: opt(Dict(Type.String())),
    annotations: opt(Dict(Type.String())),
    service_account_name: opt(Type.String()),
    image_pull_secrets: opt(Type.Array(LocalObjectReference)),
    volumes: opt(Type.Array(Volume)),
    volume_mounts: opt(Type.Array(VolumeMount)),
    init_containers: opt(Type.Array(Container)),
    sidecars: opt(Type.Array(Container)),
    db_cpu: num(),
    db_cpu_limit: num(),
    db_memory_mb: int(),
    db_memory_limit_mb: int(),
    db_storage_gi: int(),
    db_max_connections: int(),
  },
  { title: 'ResourceSpec' },
)

const ListenerConfig = Type.Object({ k8s_namespace: opt(Type.String()) }, { title: 'ListenerConfig' })

/** Used for requests and responses alike (SourceConfigRequest and SourceConfig have the same fields). */
export const SourceConfig = Type.Object(
  {
    integration_id: opt(Uuid()),
    repo_url: opt(Type.String()),
    deployment_type: opt(DeploymentType),
    build_on_push: opt(Type.Boolean()),
    custom_url: opt(Type.String()),
    resource_spec: opt(ResourceSpec),
    listener_id: opt(Uuid()),
    listener_config: opt(ListenerConfig),
    install_command: opt(Type.String()),
    build_command: opt(Type.String()),
    template_id: opt(Type.String({ description: 'The template an `internal_template` deployment is made from (only for that source).' })),
  },
  { title: 'SourceConfig' },
)
export type SourceConfig = Static<typeof SourceConfig>

/** The fields of a revision's configuration that requests set. */
const revisionFields = {
  repo_ref: opt(Type.String()),
  langgraph_config_path: opt(Type.String()),
  image_uri: opt(Type.String()),
  source_tarball_path: opt(Type.String()),
}

/** `graph_config_path` is accepted as another name for `langgraph_config_path` (see FACTS.md). */
export const SourceRevisionConfigRequest = Type.Object(
  {
    ...revisionFields,
    graph_config_path: opt(Type.String({ description: 'Accepted as another name for `langgraph_config_path`.' })),
  },
  { title: 'SourceRevisionConfigRequest' },
)
export type SourceRevisionConfigRequest = Static<typeof SourceRevisionConfigRequest>

export const SourceRevisionConfig = Type.Object(
  {
    ...revisionFields,
    repo_commit_sha: opt(Type.String()),
    tracked_packages: opt(Type.Array(Type.String(), { description: 'The packages the request that made the revision named (`tracked_packages`).' })),
  },
  { title: 'SourceRevisionConfig' },
)
export type SourceRevisionConfig = Static<typeof SourceRevisionConfig>

export const DeploymentCreateRequest = Type.Object(
  {
    name: Type.String(),
    source: Source,
    source_config: SourceConfig,
    source_revision_config: SourceRevisionConfigRequest,
    secrets: Type.Array(Secret),
    secret_references: opt(Type.Array(SecretReference)),
  },
  { title: 'DeploymentCreateRequest' },
)
export type DeploymentCreateRequest = Static<typeof DeploymentCreateRequest>

const TrackedPackages = Type.Array(Type.String(), { description: 'Packages to record on the new revision (`source_revision_config.tracked_packages`), e.g. `google-adk:1.0.0`.' })

/** What a PATCH and a revision create both carry; each makes a new revision when non-null. */
const revisionInputs = {
  source_config: opt(SourceConfig),
  source_revision_config: opt(SourceRevisionConfigRequest),
  secrets: opt(Type.Array(Secret)),
  secret_references: opt(Type.Array(SecretReference)),
  tracked_packages: opt(TrackedPackages),
}

export const DeploymentPatchRequest = Type.Object(
  {
    revision_source: opt(StringEnum(['github', 'internal_docker', 'internal_source'])),
    ...revisionInputs,
    display_name: opt(Type.String({ minLength: 1, description: 'Set only here; null leaves it as it is (it cannot be cleared).' })),
  },
  { title: 'DeploymentPatchRequest' },
)
export type DeploymentPatchRequest = Static<typeof DeploymentPatchRequest>

/**
 * Every field is always sent (null when empty), so all are required here: the serializer writes
 * required keys before optional ones, and this keeps pydantic's field order.
 */
export const Deployment = Type.Object(
  {
    name: Type.String(),
    source: Source,
    source_config: SourceConfig,
    source_revision_config: SourceRevisionConfig,
    secrets: Type.Array(Secret),
    secret_references: Nullable(Type.Array(SecretReference)),
    id: Uuid(),
    tenant_id: Uuid(),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: DeploymentStatus,
    latest_revision_id: Nullable(Uuid()),
    active_revision_id: Nullable(Uuid()),
    image_version: Nullable(Type.String()),
    display_name: Nullable(Type.String()),
    is_managed_deep_agent: Type.Boolean(),
    url: Type.Optional(Type.String({ description: 'Where the deployment\'s agent server answers (hangar serves it once a revision is DEPLOYED).' })),
  },
  { title: 'Deployment' },
)
export type Deployment = Static<typeof Deployment>

export const Revision = Type.Object(
  {
    id: Uuid(),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: RevisionStatusSchema,
    source: Source,
    source_revision_config: SourceRevisionConfig,
    status_message: Nullable(Type.String(), {
      description: 'Why the revision failed, was skipped or was interrupted; null while all is well (newer responses carry it).',
    }),
  },
  { title: 'Revision' },
)
export type Revision = Static<typeof Revision>

const page = <T extends TSchema>(item: T, title: string) =>
  Type.Object({ resources: Type.Array(item), offset: Type.Integer() }, { title })
export const DeploymentsList = page(Deployment, 'DeploymentsList')
export const FreeCount = Type.Object({ count: Type.Integer() }, { title: 'FreeDeploymentCount' })
export const RevisionsList = page(Revision, 'RevisionsList')

const limit = Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Maximum number of resources to return.' })
const offset = Type.Integer({ minimum: 0, default: 0, description: 'Pagination offset.' })

export const DeploymentListQuery = Type.Object({
  limit: Type.Optional(limit),
  offset: Type.Optional(offset),
  name_contains: opt(Type.String()),
  status: opt(Type.String()),
  remote_reconciled: opt(Type.Boolean()),
  tag_value_ids: opt(Type.String()),
  image_version: opt(Type.String()),
  deployment_type: opt(DeploymentType),
  deployment_ids: opt(Type.String()),
})
export type DeploymentListQuery = Static<typeof DeploymentListQuery>

export const RevisionListQuery = Type.Object({
  limit: Type.Optional(limit),
  offset: Type.Optional(offset),
  status: opt(Type.String({ description: 'Comma separated list of revision statuses.' })),
  remote_reconciled: opt(Type.Boolean()),
})
export type RevisionListQuery = Static<typeof RevisionListQuery>

export const BulkDeleteQuery = Type.Object({ deployment_ids: Type.Array(Uuid(), { maxItems: 100 }) })

export const BulkDeleteResult = Type.Object(
  {
    deleted_ids: Type.Array(Uuid()),
    failed: Type.Array(Type.Object({ deployment_id: Uuid(), detail: Type.String() })),
  },
  { title: 'BulkDeleteResult' },
)
export type BulkDeleteResult = Static<typeof BulkDeleteResult>

export const DeploymentParams = Type.Object({ deployment_id: Uuid({ title: 'Deployment ID' }) })
export const RevisionParams = Type.Object({
  deployment_id: Uuid({ title: 'Deployment ID' }),
  revision_id: Uuid({ title: 'Revision ID' }),
})
export const DeleteDeploymentQuery = Type.Object({
  delete_tracing_project: Type.Optional(Type.Boolean({ default: false })),
})

/**
 * `POST …/revisions`: what a PATCH carries that makes a revision, and no other field (the
 * provider's own fake refuses `display_name` here). `shareable` and `route_through_gateway`, which
 * one provider version sends, are accepted and not modelled. No body at all is a revision from the
 * current configuration.
 */
export const RevisionCreateRequest = Nullable(Type.Object(
  {
    ...revisionInputs,
    shareable: opt(Type.Boolean({ description: 'Accepted; not modelled.' })),
    route_through_gateway: opt(Type.Boolean({ description: 'Accepted; not modelled.' })),
  },
  { title: 'RevisionCreateRequest', additionalProperties: false },
))
export type RevisionCreateRequest = Static<typeof RevisionCreateRequest>
