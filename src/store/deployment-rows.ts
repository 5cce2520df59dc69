// How deployment and revision rows read as the API's records. No SQL, no HTTP.

import { failureStatus, revisionFailure, statusMessage } from '../lifecycle/revision-failures.js'
import type { RevisionSnapshot } from '../lifecycle/revision-snapshot.js'
import { trackFor, type Anchor, type RevisionSpeed, type RevisionStatus } from '../lifecycle/revisions.js'
import type { Deployment, Revision, SourceRevisionConfig } from '../schemas/deployments.js'
import { iso } from './db.js'

/** A deployment whose code has not arrived yet has no revision: its revision config is all null. */
const EMPTY_REVISION_CONFIG: Readonly<SourceRevisionConfig> = {
  repo_ref: null,
  langgraph_config_path: null,
  image_uri: null,
  source_tarball_path: null,
  repo_commit_sha: null,
  tracked_packages: null,
}

export interface DeploymentRow {
  seq: number
  id: string
  tenant_id: string
  name: string
  source: string
  source_config: string
  secrets: string
  secret_references: string | null
  image_version: string | null
  display_name: string | null
  /** What a deployment without a revision yet was told about its code (JSON); null once it has one, or if nothing. */
  pending_revision_config: string | null
  speed: RevisionSpeed | null
  created_at: number
  latest_revision_id: string | null
  latest_config: string | null
  active_revision_id: string | null
  status: Deployment['status']
  changed_at: number
}

export interface RevisionRow {
  seq: number
  id: string
  deployment_seq: number
  source: string
  source_revision_config: string
  speed: RevisionSpeed
  status: RevisionStatus
  status_at: number
  next_at: number | null
  ends_at: number | null
  created_at: number
  snapshot: string | null
}

/** What the revision was made from (see RevisionSnapshot); null for one stored before snapshots were kept. */
const snapshotOf = (row: RevisionRow): RevisionSnapshot | null => (row.snapshot === null ? null : JSON.parse(row.snapshot))

/** A revision as the API shows it. */
export function toRevision(row: RevisionRow): Revision {
  const config = JSON.parse(row.source_revision_config) as SourceRevisionConfig
  return {
    id: row.id,
    created_at: iso(row.created_at),
    updated_at: iso(row.status_at),
    status: row.status,
    source: row.source as Revision['source'],
    source_revision_config: config,
    status_message: statusMessage(row.status, revisionFailure(config, snapshotOf(row))),
  }
}

/**
 * A deployment as the API shows it: with no revision yet (code still to come), its revision config
 * is all null; no secret references read as `[]`; hangar serves no managed deep agents.
 */
export function toDeployment(row: DeploymentRow): Deployment {
  return {
    name: row.name,
    source: row.source as Deployment['source'],
    source_config: JSON.parse(row.source_config),
    source_revision_config: JSON.parse(row.latest_config ?? row.pending_revision_config ?? JSON.stringify(EMPTY_REVISION_CONFIG)),
    secrets: JSON.parse(row.secrets),
    secret_references: row.secret_references === null ? [] : JSON.parse(row.secret_references),
    id: row.id,
    tenant_id: row.tenant_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.changed_at),
    status: row.status,
    latest_revision_id: row.latest_revision_id,
    active_revision_id: row.active_revision_id,
    image_version: row.image_version,
    display_name: row.display_name,
    is_managed_deep_agent: false,
  }
}

/** Where a revision row stands, as the lifecycle reads it. */
export function anchorOf(row: RevisionRow): Anchor {
  const config = JSON.parse(row.source_revision_config) as SourceRevisionConfig
  return { status: row.status, since: row.status_at, speed: row.speed, track: trackFor(row.source, failureStatus(config, snapshotOf(row))) }
}
