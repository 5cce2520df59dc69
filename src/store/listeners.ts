import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Listener, ListenerComputeConfig } from '../schemas/listeners.js'
import { iso, pageBound, type Db } from './db.js'

interface ListenerRow {
  seq: number
  id: string
  tenant_id: string
  compute_type: string
  compute_id: string
  compute_config: string
  version: string | null
  created_at: number
  updated_at: number
}

export interface NewListener {
  tenantId: string
  computeType: Listener['compute_type']
  computeId: string
  computeConfig: ListenerComputeConfig
  version: string | null
}

/** What a patch changes; a field left undefined keeps its value. */
export interface ListenerChanges {
  version?: string
  computeConfig?: ListenerComputeConfig
}


function toListener(row: ListenerRow): Listener {
  return {
    version: row.version,
    compute_type: row.compute_type as Listener['compute_type'],
    compute_id: row.compute_id,
    compute_config: JSON.parse(row.compute_config),
    id: row.id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  }
}

/** Listeners, per workspace; a compute id is unique within a workspace. */
export class ListenerRepository {
  readonly #clock: Clock
  readonly #sql

  constructor(db: Db, clock: Clock) {
    this.#clock = clock
    this.#sql = {
      exists: db.prepare<[string, string], { seq: number }>('SELECT seq FROM listeners WHERE tenant_id = ? AND id = ?'),
      get: db.prepare<[string, string], ListenerRow>('SELECT * FROM listeners WHERE tenant_id = ? AND id = ?'),
      computeIdTaken: db.prepare<[string, string], { seq: number }>('SELECT seq FROM listeners WHERE tenant_id = ? AND compute_id = ?'),
      list: db.prepare<[string, number, number], ListenerRow>(
        'SELECT * FROM listeners WHERE tenant_id = ? ORDER BY seq DESC LIMIT CAST(? AS INTEGER) OFFSET ?',
      ),
      insert: db.prepare(`INSERT INTO listeners
        (id, tenant_id, compute_type, compute_id, compute_config, version, created_at, updated_at)
        VALUES (@id, @tenant_id, @compute_type, @compute_id, @compute_config, @version, @now, @now)`),
      update: db.prepare(`UPDATE listeners
        SET version = coalesce(@version, version), compute_config = coalesce(@compute_config, compute_config), updated_at = @now
        WHERE tenant_id = @tenant_id AND id = @id`),
      delete: db.prepare('DELETE FROM listeners WHERE tenant_id = ? AND id = ?'),
    }
  }

  exists(tenantId: string, id: string): boolean {
    return this.#sql.exists.get(tenantId, id) !== undefined
  }

  computeIdTaken(tenantId: string, computeId: string): boolean {
    return this.#sql.computeIdTaken.get(tenantId, computeId) !== undefined
  }

  create(input: NewListener): Listener {
    const id = randomUUID()
    this.#sql.insert.run({
      id,
      tenant_id: input.tenantId,
      compute_type: input.computeType,
      compute_id: input.computeId,
      compute_config: JSON.stringify(input.computeConfig),
      version: input.version,
      now: this.#clock.now(),
    })
    return this.get(input.tenantId, id)!
  }

  get(tenantId: string, id: string): Listener | undefined {
    const row = this.#sql.get.get(tenantId, id)
    return row && toListener(row)
  }

  /** Newest first. */
  list(tenantId: string, limit: number, offset: number): Listener[] {
    return this.#sql.list.all(tenantId, pageBound(limit), pageBound(offset)).map(toListener)
  }

  /** Applies a patch (and moves `updated_at`); undefined when the listener does not exist in the workspace. */
  update(tenantId: string, id: string, changes: ListenerChanges): Listener | undefined {
    const { changes: count } = this.#sql.update.run({
      tenant_id: tenantId,
      id,
      version: changes.version ?? null,
      compute_config: changes.computeConfig ? JSON.stringify(changes.computeConfig) : null,
      now: this.#clock.now(),
    })
    return count > 0 ? this.get(tenantId, id) : undefined
  }

  delete(tenantId: string, id: string): boolean {
    return this.#sql.delete.run(tenantId, id).changes > 0
  }
}
