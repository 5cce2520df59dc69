// The emulator's own controls over its state: reset (everything, or one workspace) and re-seed,
// export all state as JSON, and import it back. The stateful services hear of each (their runs stop
// before the data goes; their caches forget it after), and the same seeding code as at boot runs.

import type { StatefulServices } from '../stateful.js'
import type { Db } from '../store/db.js'
import { clearState, exportState, importState, type StateDocument } from '../store/state.js'
import type { WorkspaceRepository } from '../store/workspaces.js'

export interface ControlsOptions {
  db: Db
  workspaces: WorkspaceRepository
  stateful: StatefulServices
  /** Seeds what boot seeds (workspaces from fixtures, providers, system assistants). */
  seed: () => void
  /** Writes what is due by the clock (revision steps), so an export shows where everything stands. */
  settle: () => void
  /** Hears of every reset and import once it is done (the inspector's live view). */
  onChange?: (change: { action: 'reset' | 'import'; workspace: string | null }) => void
}

export class EmulatorControls {
  readonly #o: ControlsOptions

  constructor(options: ControlsOptions) {
    this.#o = options
  }

  /** Everything back to a fresh start (runs stopped, all data gone, fixtures seeded again). */
  async resetAll(): Promise<void> {
    const { stateful } = this.#o
    await stateful.beforeReset(undefined)
    clearState(this.#o.db)
    stateful.afterReset(undefined, 'reset')
    this.#o.seed()
    this.#o.onChange?.({ action: 'reset', workspace: null })
  }

  /** One workspace back to a fresh start (its deployments' runs stopped first); other workspaces are untouched. */
  async resetWorkspace(tenantId: string): Promise<void> {
    const { stateful } = this.#o
    await stateful.beforeReset(tenantId)
    this.#o.workspaces.purge(tenantId)
    stateful.afterReset(tenantId, 'reset')
    this.#o.seed()
    this.#o.onChange?.({ action: 'reset', workspace: tenantId })
  }

  export(): StateDocument {
    this.#o.settle()
    return exportState(this.#o.db)
  }

  /** Replaces all state (nothing changes when the document is refused); runs it had in flight end interrupted. */
  async import(document: unknown): Promise<void> {
    const { stateful } = this.#o
    await stateful.beforeReset(undefined)
    importState(this.#o.db, document)
    stateful.afterReset(undefined, 'import')
    this.#o.onChange?.({ action: 'import', workspace: null })
  }
}
