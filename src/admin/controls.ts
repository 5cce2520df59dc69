// The emulator's own controls over its state: reset (everything, or one workspace) and re-seed,
// export all state as JSON, and import it back. The same seeding code as at boot runs after each.

import type { RunManager } from '../agent/runs.js'
import type { Db } from '../store/db.js'
import { clearState, exportState, importState, type StateDocument } from '../store/state.js'

export interface ControlsOptions {
  db: Db
  manager: RunManager
  /** Seeds what boot seeds (workspaces from fixtures, providers, system assistants). */
  seed: () => void
  /** Forgets seeded workspaces (one, or all) so they are seeded again when next seen. */
  forget: (tenantId?: string) => void
  /** Clears what lives outside the database (faults, the request journal) on a full reset. */
  onFullReset?: () => void
  /** Hears of every reset and import once it is done (the inspector's live view). */
  onChange?: (change: { action: 'reset' | 'import'; workspace: string | null }) => void
}

export class EmulatorControls {
  readonly #o: ControlsOptions
  readonly #workspaceSql
  readonly #deploymentsOf

  constructor(options: ControlsOptions) {
    this.#o = options
    const { db } = options
    // What belongs to a workspace: its deployments (and their agent servers' data), listeners,
    // OAuth providers (with their tokens, flows and agent connections), and the workspace itself.
    this.#deploymentsOf = db.prepare<[string], { id: string }>('SELECT id FROM deployments WHERE tenant_id = ?')
    this.#workspaceSql = [
      `DELETE FROM runs WHERE scope IN (SELECT id FROM deployments WHERE tenant_id = @tenant)`,
      `DELETE FROM threads WHERE scope IN (SELECT id FROM deployments WHERE tenant_id = @tenant)`,
      `DELETE FROM assistants WHERE scope IN (SELECT id FROM deployments WHERE tenant_id = @tenant)`,
      `DELETE FROM deployments WHERE tenant_id = @tenant`,
      `DELETE FROM listeners WHERE tenant_id = @tenant`,
      `DELETE FROM agent_connections WHERE tenant_id = @tenant`,
      `DELETE FROM oauth_providers WHERE tenant_id = @tenant`,
      `DELETE FROM workspaces WHERE id = @tenant`,
    ].map((sql) => db.prepare(sql))
  }

  /** Everything back to a fresh start (runs stopped, all data gone, fixtures seeded again). */
  async resetAll(): Promise<void> {
    await this.#o.manager.stopAll()
    clearState(this.#o.db)
    this.#o.forget()
    this.#o.onFullReset?.()
    this.#o.seed()
    this.#o.onChange?.({ action: 'reset', workspace: null })
  }

  /** One workspace back to a fresh start (its deployments' runs stopped first); other workspaces are untouched. */
  async resetWorkspace(tenantId: string): Promise<void> {
    await this.#o.manager.stopAll(new Set(this.#deploymentsOf.all(tenantId).map((row) => row.id)))
    this.#o.db.transaction(() => {
      for (const statement of this.#workspaceSql) statement.run({ tenant: tenantId })
    })()
    this.#o.forget(tenantId)
    this.#o.seed()
    this.#o.onChange?.({ action: 'reset', workspace: tenantId })
  }

  export(): StateDocument {
    return exportState(this.#o.db)
  }

  /** Replaces all state (nothing changes when the document is refused); runs it had in flight end interrupted. */
  async import(document: unknown): Promise<void> {
    await this.#o.manager.stopAll()
    importState(this.#o.db, document)
    this.#o.forget()
    this.#o.manager.recover()
    this.#o.onChange?.({ action: 'import', workspace: null })
  }
}
