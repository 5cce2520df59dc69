import type { RevisionSnapshot } from '../lifecycle/revision-snapshot.js'
import type { RevisionSpeed, RevisionStatus } from '../lifecycle/revisions.js'
import type { Deployment, SourceRevisionConfig } from '../schemas/deployments.js'
import type { Db } from './db.js'

/** A revision as its logs need it: what it was made from, where it stands, and the status changes recorded for it. */
export interface RevisionRecord {
  id: string
  /** Its place among all revisions (creation order). */
  seq: number
  source: string
  config: SourceRevisionConfig
  snapshot: RevisionSnapshot | null
  speed: RevisionSpeed
  status: RevisionStatus
  statusAt: number
  createdAt: number
  steps: { status: RevisionStatus; at: number }[]
}

export interface DeploymentRecord {
  id: string
  name: string
  secrets: Deployment['secrets']
  sourceConfig: Deployment['source_config']
}

interface RevisionRow {
  seq: number
  id: string
  source: string
  source_revision_config: string
  snapshot: string | null
  speed: RevisionSpeed
  status: RevisionStatus
  status_at: number
  created_at: number
}

/** Deployments' revisions with the history of their statuses, read for their logs. */
export class RevisionHistoryRepository {
  readonly #sql

  constructor(db: Db) {
    this.#sql = {
      deployment: db.prepare<[string, string], { seq: number; id: string; name: string; secrets: string; source_config: string }>(
        'SELECT seq, id, name, secrets, source_config FROM deployments WHERE tenant_id = ? AND id = ?'),
      revisions: db.prepare<[number], RevisionRow>('SELECT * FROM revisions WHERE deployment_seq = ? ORDER BY seq'),
      steps: db.prepare<[number], { revision_seq: number; status: RevisionStatus; at: number }>(`SELECT s.revision_seq, s.status, s.at
        FROM revision_steps s JOIN revisions r ON r.seq = s.revision_seq WHERE r.deployment_seq = ? ORDER BY s.at, s.revision_seq`),
    }
  }

  /** A deployment of the workspace and its revisions, oldest first; undefined when there is no such deployment. */
  read(tenantId: string, deploymentId: string): { deployment: DeploymentRecord; revisions: RevisionRecord[] } | undefined {
    const row = this.#sql.deployment.get(tenantId, deploymentId)
    if (!row) return undefined
    const steps = new Map<number, { status: RevisionStatus; at: number }[]>()
    for (const { revision_seq: seq, status, at } of this.#sql.steps.all(row.seq)) steps.set(seq, [...steps.get(seq) ?? [], { status, at }])
    const revisions = this.#sql.revisions.all(row.seq).map((revision): RevisionRecord => ({
      id: revision.id,
      seq: revision.seq,
      source: revision.source,
      config: JSON.parse(revision.source_revision_config),
      snapshot: revision.snapshot === null ? null : JSON.parse(revision.snapshot),
      speed: revision.speed,
      status: revision.status,
      statusAt: revision.status_at,
      createdAt: revision.created_at,
      steps: steps.get(revision.seq) ?? [],
    }))
    return {
      deployment: { id: row.id, name: row.name, secrets: JSON.parse(row.secrets), sourceConfig: JSON.parse(row.source_config) },
      revisions,
    }
  }
}
