import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { PatchPlan, RevisionInput } from '../domain/deployments.js'
import type { DeletionStep } from '../lifecycle/deletions.js'
import { failureStatus } from '../lifecycle/revision-failures.js'
import type { RevisionSnapshot } from '../lifecycle/revision-snapshot.js'
import {
  isTerminal,
  nextStatus,
  placeAt,
  statusAt,
  stepsAfter,
  TERMINAL_STATUSES,
  trackFor,
  type RevisionSpeed,
  type RevisionStatus,
} from '../lifecycle/revisions.js'
import type { Deployment, Revision, SourceConfig, SourceRevisionConfig } from '../schemas/deployments.js'
import type { Statement } from 'better-sqlite3'
import { isUniqueViolation, pageBound, type Db } from './db.js'
import { DeploymentDeletions } from './deployment-deletions.js'
import { anchorOf, toDeployment, toRevision, type DeploymentRow, type RevisionRow } from './deployment-rows.js'
import { atomically } from './group-commit.js'

/** What a revision's snapshot reads of its deployment. */
export type SnapshotSource = Pick<Deployment, 'id' | 'name' | 'secrets' | 'source_config'>

/** What a new revision of a deployment is made from beyond its config (taken as it is created). */
export type RevisionSnapshotter = (deployment: SnapshotSource, revision: RevisionInput) => RevisionSnapshot

/** A deployment was written, or one of its revisions changed status (`revision_id`, `status`). */
export interface DeploymentChange {
  workspace: string
  deployment_id: string
  revision_id: string | null
  status: RevisionStatus | null
}

/** A revision just written: its seq and id, its config as stored (JSON), where it stands, when its first step is due (null: it does not move on its own). */
interface InsertedRevision {
  seq: number
  id: string
  config: string
  status: RevisionStatus
  nextAt: number | null
}

/** Where a revision stands now and what comes next (`next_at`: when, by time alone; null when it does not move by itself). */
export interface RevisionStep {
  id: string
  status: RevisionStatus
  speed: RevisionSpeed
  next_status: RevisionStatus | null
  next_at: number | null
}

export interface NewDeployment {
  tenantId: string
  name: string
  source: Deployment['source']
  sourceConfig: SourceConfig
  secrets: Deployment['secrets']
  secretReferences: Deployment['secret_references']
  /** What a deployment without a revision yet was told about its code (see CreatePlan.pendingConfig). */
  pendingConfig?: SourceRevisionConfig | null
}

export interface DeploymentFilter {
  nameContains?: string | null
  status?: string | null
  deploymentType?: string | null
  ids?: string[] | null
  remoteReconciled?: boolean | null
  imageVersion?: string | null
  tagValueIds?: string[] | null
}

/** The list's filters: a parameter and the condition it adds when given (at most 2^7 statements). */
const LIST_FILTERS: readonly [string, string][] = [
  ['name', 'instr(casefold(name), casefold(@name)) > 0'],
  ['status', 'status = @status'],
  ['type', "json_extract(source_config, '$.deployment_type') = @type"],
  ['ids', 'id IN (SELECT value FROM json_each(@ids))'],
  ['remote', "(json_extract(source_config, '$.listener_id') IS NOT NULL) = @remote"],
  ['imageVersion', 'image_version = @imageVersion'],
  // No deployment carries tags: any tag filter matches none.
  ['tags', '@tags IS NULL'],
]

/**
 * A deployment's or a revision's id: a random UUID (v4), as the real service's are (a deployment's page in
 * the real UI, linked from a public repository, shows one). Time-ordered ids (v7) would keep each id's
 * unique index growing at its end and cost a create ~12% less CPU with a file database (problem 25 in
 * docs/benchmarks.md), but users would see ids unlike the real ones.
 */
const newId = (): string => randomUUID()

/** The columns of `deployments_name`, the unique index that keeps names unique per workspace, as SQLite names them. */
const NAME_UNIQUE = 'deployments.tenant_id, deployments.name'

const bool = (value: boolean | null | undefined) => (value == null ? null : value ? 1 : 0)
const TERMINAL_SQL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')
/** The deployment types that count as free (`GET /v2/deployments/free-count`). */
const FREE_TYPES_SQL = ['dev_free', 'dev_free_zero'].map((s) => `'${s}'`).join(', ')

/**
 * Deployments and their revisions, per workspace. Every read first persists the revision
 * transitions that are due at the clock's "now" (`settle`), so what is read never depends on the
 * ticker having run; the ticker only makes stored state move while nobody reads (see `tick`).
 */
export class DeploymentRepository {
  readonly #db: Db
  readonly #clock: Clock
  readonly #defaultSpeed: RevisionSpeed
  readonly #sql
  readonly #deletions: DeploymentDeletions
  /** When the earliest scheduled transition is due (epoch ms); -Infinity: unknown, look. */
  #nextDue = Number.NEGATIVE_INFINITY
  /** The same for deletions alone (what a name check needs). */
  #nextDeletionDue = Number.NEGATIVE_INFINITY
  /** When the earliest revision reaches the end of its track by time (what the ticker writes while nobody follows). */
  #nextEnd = Number.NEGATIVE_INFINITY
  readonly #listStatements = new Map<string, Statement<Record<string, unknown>, DeploymentRow>>()
  readonly #onChange: ((change: DeploymentChange) => void) | undefined
  readonly #snapshot: RevisionSnapshotter | undefined

  /**
   * `onChange` hears of every deployment written and every revision status change (the inspector's
   * live view); `snapshot` says what each new revision is made from beyond its config.
   */
  constructor(db: Db, clock: Clock, defaultSpeed: RevisionSpeed, onChange?: (change: DeploymentChange) => void, snapshot?: RevisionSnapshotter) {
    this.#db = db
    this.#clock = clock
    this.#defaultSpeed = defaultSpeed
    this.#onChange = onChange
    this.#snapshot = snapshot
    db.function('casefold', { deterministic: true }, (text) => (typeof text === 'string' ? text.toLowerCase() : text))
    this.#deletions = new DeploymentDeletions(db)
    const view = 'SELECT * FROM deployment_view'
    this.#sql = {
      due: db.prepare<[number], RevisionRow & { deployment_id: string; tenant_id: string }>(`SELECT r.*, d.id AS deployment_id, d.tenant_id
        FROM revisions r JOIN deployments d ON d.seq = r.deployment_seq WHERE r.next_at <= ?`),
      nextDue: db.prepare<[], { next_at: number | null }>('SELECT min(next_at) AS next_at FROM revisions WHERE next_at IS NOT NULL'),
      ended: db.prepare<[number], RevisionRow & { deployment_id: string; tenant_id: string }>(`SELECT r.*, d.id AS deployment_id, d.tenant_id
        FROM revisions r JOIN deployments d ON d.seq = r.deployment_seq WHERE r.ends_at <= ?`),
      nextEnd: db.prepare<[], { ends_at: number | null }>('SELECT min(ends_at) AS ends_at FROM revisions WHERE ends_at IS NOT NULL'),
      setStatus: db.prepare('UPDATE revisions SET status = ?, status_at = ?, next_at = ?, ends_at = ? WHERE seq = ?'),
      recordStep: db.prepare('INSERT OR IGNORE INTO revision_steps (revision_seq, status, at) VALUES (?, ?, ?)'),
      get: db.prepare<[string, string], DeploymentRow>(`${view} WHERE tenant_id = ? AND id = ?`),
      insertDeployment: db.prepare(`INSERT INTO deployments
        (id, tenant_id, name, source, source_config, secrets, secret_references, image_version, speed, created_at, updated_at, pending_revision_config)
        VALUES (@id, @tenant_id, @name, @source, @source_config, @secrets, @secret_references, NULL, NULL, @now, @now, @pending)`),
      updateDeployment: db.prepare(`UPDATE deployments
        SET source_config = @source_config, secrets = @secrets, secret_references = @secret_references,
            display_name = @display_name, updated_at = @now
        WHERE seq = @seq`),
      freeCount: db.prepare<[string], number>(`SELECT count(*) FROM deployments
        WHERE tenant_id = ? AND json_extract(source_config, '$.deployment_type') IN (${FREE_TYPES_SQL})`).pluck(),
      insertRevision: db.prepare(`INSERT INTO revisions
        (id, deployment_seq, source, source_revision_config, speed, status, status_at, next_at, ends_at, created_at, snapshot)
        VALUES (@id, @deployment_seq, @source, @config, @speed, @status, @status_at, @next_at, @ends_at, @now, @snapshot)`),
      deploymentBySeq: db.prepare<[number], DeploymentRow>(`${view} WHERE seq = ?`),
      skipInProgress: db.prepare(`UPDATE revisions SET status = 'SKIPPED', status_at = ?, next_at = NULL, ends_at = NULL
        WHERE deployment_seq = ? AND status NOT IN (${TERMINAL_SQL})`),
      revision: db.prepare<[number, string], RevisionRow>('SELECT * FROM revisions WHERE deployment_seq = ? AND id = ?'),
      revisionBySeq: db.prepare<[number], RevisionRow>('SELECT * FROM revisions WHERE seq = ?'),
      anyTenant: db.prepare<[string], DeploymentRow>(`${view} WHERE id = ?`),
      idsOf: db.prepare<[string], string>('SELECT id FROM deployments WHERE tenant_id = ?').pluck(),
      setDeploymentSpeed: db.prepare('UPDATE deployments SET speed = ? WHERE seq = ?'),
      inProgress: db.prepare<[number], RevisionRow>(`SELECT * FROM revisions WHERE deployment_seq = ? AND status NOT IN (${TERMINAL_SQL})`),
      setRevisionSpeed: db.prepare('UPDATE revisions SET speed = ?, status = ?, status_at = ?, next_at = ?, ends_at = ? WHERE seq = ?'),
      revisions: db.prepare<Record<string, unknown>, RevisionRow>(`SELECT * FROM revisions
        WHERE deployment_seq = @seq AND @match
          AND (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
        ORDER BY seq DESC LIMIT CAST(@limit AS INTEGER) OFFSET @offset`),
    }
  }

  /**
   * Persists every revision transition that is due now. Returns how many revisions moved. The
   * earliest transition still to come is remembered, so a read before it costs no query at all.
   */
  settle(): number {
    const now = this.#clock.now()
    if (now < this.#nextDue) return 0
    const moved = this.#persist(this.#sql.due.all(now), now)
    const deletions = this.#settleDeletions(now)
    this.#nextDue = Math.min(this.#sql.nextDue.get()?.next_at ?? Number.POSITIVE_INFINITY, this.#nextDeletionDue)
    return moved + deletions
  }

  /**
   * The ticker's work; returns how many things moved. While someone follows the event bus
   * (`followed`), everything due (`settle`): each step is written, and announced, as it happens.
   * While nobody does, the revisions that reached the end of their track (DEPLOYED or failed: what a
   * deployment's status, active revision and `updated_at` follow) and the deletions: a revision is
   * then written once, at its end, instead of at every step. The steps between are written by the
   * next read (each one settles first), or follow from the revision's speed (see revision-timeline).
   */
  tick(followed: boolean): number {
    if (followed) return this.settle()
    const now = this.#clock.now()
    let moved = 0
    if (now >= this.#nextEnd) {
      moved = this.#persist(this.#sql.ended.all(now), now)
      this.#nextEnd = this.#sql.nextEnd.get()?.ends_at ?? Number.POSITIVE_INFINITY
    }
    return moved + this.#settleDeletions(now)
  }

  /** Writes where each revision stands at `now` (one transaction), then announces it; returns how many. */
  #persist(rows: Array<RevisionRow & { deployment_id: string; tenant_id: string }>, now: number): number {
    const moved = atomically(this.#db, () => rows.map((row) => {
      const position = placeAt(anchorOf(row), now)
      this.#sql.setStatus.run(position.status, position.since, position.nextAt, position.endsAt, row.seq)
      return { row, status: position.status }
    }))
    for (const { row, status } of moved) this.#changed(row.tenant_id, row.deployment_id, { id: row.id, status })
    return rows.length
  }

  /**
   * Persists the deletion steps that are due now, not the revisions': what decides whether a name
   * is free (a deletion that is done frees its name). Returns how many moved. Revision steps wait
   * for the next read that shows a status, or the ticker, and are written many at a time there.
   */
  #settleDeletions(now = this.#clock.now()): number {
    if (now < this.#nextDeletionDue) return 0
    const deletions = atomically(this.#db, () => this.#deletions.settle(now))
    for (const deletion of deletions) this.#changed(deletion.tenantId, deletion.deploymentId)
    this.#nextDeletionDue = this.#deletions.nextDue() ?? Number.POSITIVE_INFINITY
    return deletions.length
  }

  /** Forgets when the next transition is due (revisions were written elsewhere: a state import). */
  invalidate(): void {
    this.#nextDue = Number.NEGATIVE_INFINITY
    this.#nextDeletionDue = Number.NEGATIVE_INFINITY
    this.#nextEnd = Number.NEGATIVE_INFINITY
  }

  /**
   * A new deployment with its first revision, or with none yet (`revision` null: its code comes in a PATCH);
   * undefined, with nothing written, when a deployment of the workspace has its name already.
   */
  create(input: NewDeployment, revision: RevisionInput | null): Deployment | undefined {
    const id = newId()
    const now = this.#clock.now()
    // A deletion that is done frees its name: settled first, so that the unique index sees it gone.
    this.#settleDeletions(now)
    const values = {
      id,
      tenant_id: input.tenantId,
      name: input.name,
      source: input.source,
      source_config: JSON.stringify(input.sourceConfig),
      secrets: JSON.stringify(input.secrets),
      secret_references: input.secretReferences == null ? null : JSON.stringify(input.secretReferences),
      pending: input.pendingConfig == null ? null : JSON.stringify(input.pendingConfig),
      now,
    }
    const inserted = atomically(this.#db, () => {
      const seq = this.#insertDeployment(values)
      if (seq === undefined) return undefined
      const created = { id, name: input.name, secrets: input.secrets, source_config: input.sourceConfig }
      return { seq, first: revision && this.#insertRevision(seq, this.#defaultSpeed, revision, now, created) }
    })
    if (inserted === undefined) return undefined
    const { seq, first } = inserted
    this.#changed(input.tenantId, id)
    // Settled only if a step is due at once; else it reads as deployment_view shows a deployment with
    // this one revision (or none): the latest, and the active one once DEPLOYED (instant speed); changed now.
    if (first && first.nextAt !== null && first.nextAt <= now) return this.get(input.tenantId, id)!
    const deployed = first?.status === 'DEPLOYED'
    return toDeployment({
      seq,
      id,
      tenant_id: values.tenant_id,
      name: values.name,
      source: values.source,
      source_config: values.source_config,
      secrets: values.secrets,
      secret_references: values.secret_references,
      pending_revision_config: values.pending,
      image_version: null,
      display_name: null,
      speed: null,
      created_at: now,
      latest_revision_id: first?.id ?? null,
      latest_config: first?.config ?? null,
      active_revision_id: deployed ? first.id : null,
      status: deployed ? 'READY' : 'AWAITING_DATABASE',
      changed_at: now,
    })
  }

  get(tenantId: string, id: string): Deployment | undefined {
    this.settle()
    const row = this.#sql.get.get(tenantId, id)
    return row && toDeployment(row)
  }

  /**
   * A deployment as a client reads it by id. One being deleted at `poll` speed shows its current
   * status and then takes one step, so successive reads walk it to 404.
   */
  read(tenantId: string, id: string): Deployment | undefined {
    const row = this.#row(tenantId, id)
    if (!row) return undefined
    if (this.#deletions.position(row.seq)?.speed === 'poll') {
      this.#deletions.advance(row.seq, this.#clock.now())
      this.#changed(tenantId, id)
    }
    return toDeployment(row)
  }

  /** How many of the workspace's deployments are of a free type (`dev_free`, `dev_free_zero`), those being deleted included. */
  freeCount(tenantId: string): number {
    this.settle()
    return this.#sql.freeCount.get(tenantId)!
  }

  list(tenantId: string, filter: DeploymentFilter, limit: number, offset: number): Deployment[] {
    this.settle()
    const params: Record<string, unknown> = {
      tenant: tenantId,
      name: filter.nameContains ?? null,
      status: filter.status ?? null,
      type: filter.deploymentType ?? null,
      ids: filter.ids ? JSON.stringify(filter.ids) : null,
      remote: bool(filter.remoteReconciled),
      imageVersion: filter.imageVersion ?? null,
      tags: filter.tagValueIds && filter.tagValueIds.length > 0 ? JSON.stringify(filter.tagValueIds) : null,
    }
    // Only the filters given are in the query (an unused `@x IS NULL OR …` still costs per row).
    const given = LIST_FILTERS.filter(([name]) => params[name] !== null)
    const key = given.map(([name]) => name).join(',')
    let statement = this.#listStatements.get(key)
    if (!statement) {
      statement = this.#db.prepare<Record<string, unknown>, DeploymentRow>(`SELECT * FROM deployment_view WHERE tenant_id = @tenant
        ${given.map(([, condition]) => `AND ${condition}`).join(' ')} ORDER BY seq DESC LIMIT CAST(@limit AS INTEGER) OFFSET @offset`)
      this.#listStatements.set(key, statement)
    }
    const bound = Object.fromEntries([['tenant', tenantId], ...given.map(([name]) => [name, params[name]]), ['limit', pageBound(limit)], ['offset', pageBound(offset)]])
    return statement.all(bound).map(toDeployment)
  }

  /** Applies a planned PATCH (and its new revision, if any) in one transaction. */
  update(tenantId: string, id: string, plan: PatchPlan): Deployment {
    this.settle()
    const row = this.#sql.get.get(tenantId, id)
    if (!row) throw new Error(`deployment ${id} vanished during an update`)
    if (plan.changed) {
      const now = this.#clock.now()
      atomically(this.#db, () => {
        this.#sql.updateDeployment.run({
          seq: row.seq,
          source_config: JSON.stringify(plan.sourceConfig),
          secrets: JSON.stringify(plan.secrets),
          secret_references: plan.secretReferences == null ? null : JSON.stringify(plan.secretReferences),
          display_name: plan.displayName,
          now,
        })
        if (plan.revision) this.#insertRevision(row.seq, row.speed ?? this.#defaultSpeed, plan.revision, now)
      })
      this.#changed(tenantId, id)
    }
    return this.get(tenantId, id)!
  }

  /**
   * Starts deleting every listed deployment of the workspace (in one transaction): each walks
   * AWAITING_DELETE → AWAITING_FINAL_DELETE → gone at its speed. One already being deleted counts as
   * deleted and keeps its pace; `started` are those whose deletion began now.
   */
  startDeleting(tenantId: string, ids: string[]): { deleted: string[]; missing: string[]; started: string[] } {
    this.settle()
    const result = { deleted: [] as string[], missing: [] as string[], started: [] as string[] }
    const now = this.#clock.now()
    atomically(this.#db, () => {
      for (const id of new Set(ids)) {
        const row = this.#sql.get.get(tenantId, id)
        if (!row) {
          result.missing.push(id)
          continue
        }
        result.deleted.push(id)
        if (this.#deletions.has(row.seq)) continue
        this.#deletions.start(row.seq, row.speed ?? this.#defaultSpeed, now)
        result.started.push(id)
      }
    })
    this.invalidate()
    for (const id of result.started) this.#changed(tenantId, id)
    return result
  }

  /** Moves a deployment's deletion one step on by hand; why not, when it cannot. */
  advanceDeletion(deploymentId: string): DeletionStep | 'not_found' | 'not_deleting' {
    this.settle()
    const row = this.#sql.anyTenant.get(deploymentId)
    if (!row) return 'not_found'
    const step = this.#deletions.advance(row.seq, this.#clock.now())
    if (!step) return 'not_deleting'
    this.invalidate()
    this.#changed(row.tenant_id, deploymentId)
    return step
  }

  /** Newest first; undefined when the deployment does not exist in the workspace. */
  listRevisions(
    tenantId: string,
    deploymentId: string,
    filter: { statuses: string[] | null; remoteReconciled: boolean | null },
    limit: number,
    offset: number,
  ): Revision[] | undefined {
    this.settle()
    const row = this.#sql.get.get(tenantId, deploymentId)
    if (!row) return undefined
    const remote = JSON.parse(row.source_config).listener_id != null
    return this.#sql.revisions
      .all({
        seq: row.seq,
        match: filter.remoteReconciled == null || filter.remoteReconciled === remote ? 1 : 0,
        statuses: filter.statuses ? JSON.stringify(filter.statuses) : null,
        limit: pageBound(limit),
        offset: pageBound(offset),
      })
      .map(toRevision)
  }

  /** One revision, without counting as a read. */
  revision(tenantId: string, deploymentId: string, revisionId: string): Revision | undefined {
    const row = this.#revisionRow(tenantId, deploymentId, revisionId)
    return row && toRevision(row)
  }

  /**
   * One revision as a client reads it. A revision at `poll` speed shows its current status and
   * then takes one step, so successive reads walk it through every status.
   */
  readRevision(tenantId: string, deploymentId: string, revisionId: string): Revision | undefined {
    const row = this.#revisionRow(tenantId, deploymentId, revisionId)
    if (!row) return undefined
    if (row.speed === 'poll') {
      const next = nextStatus(anchorOf(row))
      if (next) {
        this.#sql.setStatus.run(next, this.#clock.now(), null, null, row.seq)
        this.#changed(tenantId, deploymentId, { id: row.id, status: next })
      }
    }
    return toRevision(row)
  }

  /** A new revision of the deployment (older in-progress ones become SKIPPED). */
  addRevision(tenantId: string, deploymentId: string, revision: RevisionInput): Revision | undefined {
    this.settle()
    const row = this.#sql.get.get(tenantId, deploymentId)
    if (!row) return undefined
    const now = this.#clock.now()
    const seq = atomically(this.#db, () => {
      this.#sql.updateDeployment.run({
        seq: row.seq,
        source_config: row.source_config,
        secrets: row.secrets,
        secret_references: row.secret_references,
        display_name: row.display_name,
        now,
      })
      return this.#insertRevision(row.seq, row.speed ?? this.#defaultSpeed, revision, now).seq
    })
    const added = toRevision(this.#sql.revisionBySeq.get(seq)!)
    this.#changed(tenantId, deploymentId, added)
    return added
  }

  /** Stops an in-progress revision; reports the status of one that had already finished. */
  interruptRevision(
    tenantId: string,
    deploymentId: string,
    revisionId: string,
  ): Revision | { finished: RevisionStatus } | undefined {
    const row = this.#revisionRow(tenantId, deploymentId, revisionId)
    if (!row) return undefined
    if (isTerminal(row.status)) return { finished: row.status }
    this.#sql.setStatus.run('INTERRUPTED', this.#clock.now(), null, null, row.seq)
    this.#changed(tenantId, deploymentId, { id: row.id, status: 'INTERRUPTED' })
    return toRevision(this.#sql.revisionBySeq.get(row.seq)!)
  }

  /** A deployment of any workspace, as it is now (its agent server is addressed by deployment id alone). */
  serving(deploymentId: string): Deployment | undefined {
    this.settle()
    const row = this.#sql.anyTenant.get(deploymentId)
    return row && toDeployment(row)
  }

  /** The ids of a workspace's deployments (each is the scope of its agent server's data). */
  idsOf(tenantId: string): string[] {
    return this.#sql.idsOf.all(tenantId)
  }

  /** The workspace a deployment belongs to (the admin API addresses deployments by id alone). */
  tenantOf(deploymentId: string): string | undefined {
    return this.#sql.anyTenant.get(deploymentId)?.tenant_id
  }

  /**
   * Sets the speed of a deployment's future revisions, of its in-progress ones and of its deletion,
   * which go on from the status they are in: that status's timer restarts now, at the new speed.
   */
  setSpeed(deploymentId: string, speed: RevisionSpeed): boolean {
    const row = this.#sql.anyTenant.get(deploymentId)
    if (!row) return false
    // The steps taken so far at the old speed are kept before the new speed re-anchors them.
    this.#recordSteps(row.seq)
    this.settle()
    atomically(this.#db, () => {
      this.#sql.setDeploymentSpeed.run(speed, row.seq)
      const now = this.#clock.now()
      for (const revision of this.#sql.inProgress.all(row.seq)) {
        const position = placeAt({ ...anchorOf(revision), speed, since: now }, now)
        this.#sql.setRevisionSpeed.run(speed, position.status, position.since, position.nextAt, position.endsAt, revision.seq)
      }
      this.#deletions.setSpeed(row.seq, speed, now)
    })
    this.invalidate()
    this.#changed(row.tenant_id, deploymentId)
    return true
  }

  /**
   * Moves a revision on by hand: one step along its track (`next`), or straight to a terminal
   * status. Returns the revision, or a reason it could not.
   */
  force(deploymentId: string, revisionId: string, to: 'next' | RevisionStatus): Revision | 'not_found' | 'finished' {
    this.settle()
    const deployment = this.#sql.anyTenant.get(deploymentId)
    const row = deployment && this.#sql.revision.get(deployment.seq, revisionId)
    if (!row) return 'not_found'
    const status = to === 'next' ? nextStatus(anchorOf(row)) : to
    if (status === null || isTerminal(row.status)) return 'finished'
    const now = this.#clock.now()
    const position = placeAt({ ...anchorOf(row), status, since: now }, now)
    this.#sql.setStatus.run(position.status, position.since, position.nextAt, position.endsAt, row.seq)
    this.invalidate()
    this.#changed(deployment.tenant_id, deploymentId, { id: row.id, status: position.status })
    return toRevision(this.#sql.revisionBySeq.get(row.seq)!)
  }

  /**
   * Where each revision of a deployment (of any workspace) stands now, newest first, and what comes
   * next; with the deployment's workspace and the speed its new revisions get. Undefined when there
   * is no such deployment.
   */
  schedule(deploymentId: string): {
    workspace: string
    speed: RevisionSpeed
    revisions: RevisionStep[]
    deletion: { status: DeletionStep; speed: RevisionSpeed; next_at: number | null } | null
  } | undefined {
    this.settle()
    const row = this.#sql.anyTenant.get(deploymentId)
    if (!row) return undefined
    const now = this.#clock.now()
    const revisions = this.#sql.revisions.all({ seq: row.seq, match: 1, statuses: null, limit: -1, offset: 0 }).map((revision) => {
      const anchor = anchorOf(revision)
      const position = statusAt(anchor, now)
      const next = nextStatus({ status: position.status, track: anchor.track })
      return { id: revision.id, status: position.status, speed: revision.speed, next_status: next, next_at: position.nextAt }
    })
    const deletion = this.#deletions.position(row.seq)
    return {
      workspace: row.tenant_id,
      speed: row.speed ?? this.#defaultSpeed,
      revisions,
      deletion: deletion ? { status: deletion.step, speed: deletion.speed, next_at: deletion.nextAt } : null,
    }
  }

  /**
   * Records every step the deployment's revisions in progress took by time since they were last
   * written, when each happened at the speed they had: the steps a single write jumps over are
   * otherwise placed where the revision's speed puts them, which is wrong once the speed changes.
   */
  #recordSteps(deploymentSeq: number): void {
    const now = this.#clock.now()
    atomically(this.#db, () => {
      for (const revision of this.#sql.inProgress.all(deploymentSeq)) {
        for (const step of stepsAfter(anchorOf(revision), now)) this.#sql.recordStep.run(revision.seq, step.status, step.since)
      }
    })
  }

  #changed(workspace: string, deploymentId: string, revision?: { id: string; status: RevisionStatus }): void {
    this.#onChange?.({ workspace, deployment_id: deploymentId, revision_id: revision?.id ?? null, status: revision?.status ?? null })
  }

  #row(tenantId: string, id: string): DeploymentRow | undefined {
    this.settle()
    return this.#sql.get.get(tenantId, id)
  }

  #revisionRow(tenantId: string, deploymentId: string, revisionId: string): RevisionRow | undefined {
    this.settle()
    const deployment = this.#sql.get.get(tenantId, deploymentId)
    return deployment && this.#sql.revision.get(deployment.seq, revisionId)
  }

  /** Inserts a deployment's row; its seq, or undefined when the workspace has a deployment of that name (its unique index). */
  #insertDeployment(values: Record<string, unknown>): number | undefined {
    try {
      return Number(this.#sql.insertDeployment.run(values).lastInsertRowid)
    } catch (error) {
      if (isUniqueViolation(error, NAME_UNIQUE)) return undefined
      throw error
    }
  }

  /**
   * Writes a revision; returns what a caller needs of it (InsertedRevision).
   * `created`: the deployment was made in this transaction, with these facts (it has no revision to
   * skip, and its row need not be read back for the snapshot).
   */
  #insertRevision(deploymentSeq: number, speed: RevisionSpeed, revision: RevisionInput, now: number, created?: SnapshotSource): InsertedRevision {
    // The revisions it skips leave nothing due; the new one is due at its first step.
    if (!created) this.#sql.skipInProgress.run(now, deploymentSeq)
    const snapshot = this.#snapshot?.(created ?? toDeployment(this.#sql.deploymentBySeq.get(deploymentSeq)!), revision) ?? null
    const track = trackFor(revision.source, failureStatus(revision.config, snapshot))
    const position = placeAt({ status: track[0], since: now, speed, track }, now)
    const id = newId()
    const config = JSON.stringify(revision.config)
    const { lastInsertRowid } = this.#sql.insertRevision.run({
      id,
      deployment_seq: deploymentSeq,
      source: revision.source,
      config,
      speed,
      status: position.status,
      status_at: position.since,
      next_at: position.nextAt,
      ends_at: position.endsAt,
      now,
      snapshot: snapshot === null ? null : JSON.stringify(snapshot),
    })
    if (position.nextAt !== null) this.#nextDue = Math.min(this.#nextDue, position.nextAt)
    if (position.endsAt !== null) this.#nextEnd = Math.min(this.#nextEnd, position.endsAt)
    return { seq: Number(lastInsertRowid), id, config, status: position.status, nextAt: position.nextAt }
  }
}
