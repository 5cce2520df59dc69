// Deployments on their way out: a DELETE writes a deletion anchor (src/lifecycle/deletions.ts), and
// the deployment's row goes, with its revisions, when the anchor reaches DELETED. SQL only; the
// caller (DeploymentRepository) decides when, and holds the transaction.

import { deletionAt, nextDeletionStep, type DeletionAnchor, type DeletionStep } from '../lifecycle/deletions.js'
import type { RevisionSpeed } from '../lifecycle/revisions.js'
import type { Db } from './db.js'

interface DeletionRow {
  deployment_seq: number
  step: DeletionStep
  speed: RevisionSpeed
  since: number
  next_at: number | null
}

/** A deletion that moved, and where to: DELETED means the deployment's row is gone. */
export interface DeletionMove {
  deploymentId: string
  tenantId: string
  step: DeletionStep
}

const anchorOf = (row: DeletionRow): DeletionAnchor => ({ step: row.step, since: row.since, speed: row.speed })

export class DeploymentDeletions {
  readonly #sql

  constructor(db: Db) {
    this.#sql = {
      get: db.prepare<[number], DeletionRow>('SELECT * FROM deployment_deletions WHERE deployment_seq = ?'),
      insert: db.prepare('INSERT INTO deployment_deletions (deployment_seq, step, speed, since, next_at) VALUES (@seq, @step, @speed, @since, @next_at)'),
      update: db.prepare('UPDATE deployment_deletions SET step = @step, speed = @speed, since = @since, next_at = @next_at WHERE deployment_seq = @seq'),
      remove: db.prepare('DELETE FROM deployments WHERE seq = ?'),
      due: db.prepare<[number], DeletionRow & { id: string; tenant_id: string }>(`SELECT x.*, d.id, d.tenant_id
        FROM deployment_deletions x JOIN deployments d ON d.seq = x.deployment_seq WHERE x.next_at <= ?`),
      nextDue: db.prepare<[], { next_at: number | null }>('SELECT min(next_at) AS next_at FROM deployment_deletions WHERE next_at IS NOT NULL'),
    }
  }

  /** Whether the deployment is being deleted. */
  has(deploymentSeq: number): boolean {
    return this.#sql.get.get(deploymentSeq) !== undefined
  }

  /** Starts deleting the deployment at `now`; returns the step it is at (DELETED: it is gone already). */
  start(deploymentSeq: number, speed: RevisionSpeed, now: number): DeletionStep {
    return this.#write(deploymentSeq, { step: 'AWAITING_DELETE', since: now, speed }, now, true)
  }

  /** Persists every deletion step that is due at `now`. */
  settle(now: number): DeletionMove[] {
    return this.#sql.due.all(now).map((row) => ({
      deploymentId: row.id,
      tenantId: row.tenant_id,
      step: this.#write(row.deployment_seq, anchorOf(row), now, false),
    }))
  }

  /** When the earliest timed step is due (epoch ms), or null when none is. */
  nextDue(): number | null {
    return this.#sql.nextDue.get()?.next_at ?? null
  }

  /**
   * Moves a deletion one step on by hand (a read at `poll` speed, an admin advance); returns the
   * step it moved to, or undefined when the deployment is not being deleted.
   */
  advance(deploymentSeq: number, now: number): DeletionStep | undefined {
    const row = this.#sql.get.get(deploymentSeq)
    if (!row) return undefined
    return this.#write(deploymentSeq, { ...anchorOf(row), step: nextDeletionStep(row.step) ?? 'DELETED', since: now }, now, false)
  }

  /** The deletion's speed from now on; its current step's timer restarts now. False when there is none. */
  setSpeed(deploymentSeq: number, speed: RevisionSpeed, now: number): boolean {
    const row = this.#sql.get.get(deploymentSeq)
    if (!row) return false
    this.#write(deploymentSeq, { step: row.step, since: now, speed }, now, false)
    return true
  }

  /** Where a deletion stands now and what comes next, or undefined when there is none. */
  position(deploymentSeq: number): { step: DeletionStep; speed: RevisionSpeed; nextAt: number | null } | undefined {
    const row = this.#sql.get.get(deploymentSeq)
    return row && { step: row.step, speed: row.speed, nextAt: row.next_at }
  }

  /** Writes where `anchor` stands at `now`: its row, or the deployment's removal once it is DELETED. */
  #write(deploymentSeq: number, anchor: DeletionAnchor, now: number, insert: boolean): DeletionStep {
    const position = deletionAt(anchor, now)
    if (position.status === 'DELETED') {
      this.#sql.remove.run(deploymentSeq)
      return 'DELETED'
    }
    const row = { seq: deploymentSeq, step: position.status, speed: anchor.speed, since: position.since, next_at: position.nextAt }
    ;(insert ? this.#sql.insert : this.#sql.update).run(row)
    return position.status
  }
}
