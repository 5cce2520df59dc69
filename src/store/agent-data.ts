import type { Db } from './db.js'
import { atomically } from './group-commit.js'

/**
 * The data of whole agent servers (scopes): their assistants, threads (with their checkpoints,
 * runs and run events, by cascade), the feedback tokens and feedback on their runs, the items
 * of their stores and their crons. Removed together when a deployment goes, or its workspace is reset.
 */
export class AgentDataRepository {
  readonly #db: Db
  readonly #deletes

  constructor(db: Db) {
    this.#db = db
    const scopes = 'SELECT value FROM json_each(?)'
    this.#deletes = [
      `DELETE FROM crons WHERE scope IN (${scopes})`,
      `DELETE FROM feedback WHERE scope IN (${scopes})`,
      `DELETE FROM feedback_tokens WHERE scope IN (${scopes})`,
      `DELETE FROM threads WHERE scope IN (${scopes})`,
      `DELETE FROM runs WHERE scope IN (${scopes})`,
      `DELETE FROM assistants WHERE scope IN (${scopes})`,
      `DELETE FROM store_items WHERE scope IN (${scopes})`,
    ].map((sql) => db.prepare<[string]>(sql))
  }

  /** Removes every row of these scopes, in one transaction. */
  deleteScopes(scopes: readonly string[]): void {
    if (scopes.length === 0) return
    const list = JSON.stringify(scopes)
    atomically(this.#db, () => {
      for (const statement of this.#deletes) statement.run(list)
    })
  }
}
