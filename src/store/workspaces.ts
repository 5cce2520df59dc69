import type { AgentDataRepository } from './agent-data.js'
import type { Db } from './db.js'
import { atomically } from './group-commit.js'

/** Workspaces hangar has seen and seeded, with their plan flag. */
export class WorkspaceRepository {
  readonly #db: Db
  readonly #agentData: AgentDataRepository
  readonly #sql
  readonly #purge

  constructor(db: Db, agentData: AgentDataRepository) {
    this.#db = db
    this.#agentData = agentData
    // Everything that belongs to a workspace, besides its deployments' agent servers: feedback it
    // wrote, its deployments (with their revisions), listeners, OAuth providers (with their
    // tokens, flows and agent connections), and the workspace itself.
    this.#purge = [
      'DELETE FROM feedback WHERE tenant_id = @tenant',
      'DELETE FROM deployments WHERE tenant_id = @tenant',
      'DELETE FROM listeners WHERE tenant_id = @tenant',
      'DELETE FROM agent_connections WHERE tenant_id = @tenant',
      'DELETE FROM oauth_providers WHERE tenant_id = @tenant',
      'DELETE FROM workspaces WHERE id = @tenant',
    ].map((sql) => db.prepare(sql))
    this.#sql = {
      scopes: db.prepare<[string], string>('SELECT id FROM deployments WHERE tenant_id = ?').pluck(),
      get: db.prepare<[string], { self_hosted_enterprise: number }>('SELECT self_hosted_enterprise FROM workspaces WHERE id = ?'),
      insert: db.prepare('INSERT OR IGNORE INTO workspaces (id, self_hosted_enterprise, seeded_at) VALUES (?, ?, ?)'),
      list: db.prepare<[], { id: string; self_hosted_enterprise: number }>('SELECT id, self_hosted_enterprise FROM workspaces ORDER BY seeded_at, id'),
    }
  }

  /** Every workspace seen, in the order they were first seen. */
  list(): { id: string; selfHostedEnterprise: boolean }[] {
    return this.#sql.list.all().map((row) => ({ id: row.id, selfHostedEnterprise: row.self_hosted_enterprise === 1 }))
  }

  /** Whether the workspace has a self-hosted enterprise plan; undefined for a workspace never seen. */
  selfHostedEnterprise(id: string): boolean | undefined {
    const row = this.#sql.get.get(id)
    return row && row.self_hosted_enterprise === 1
  }

  /** Records a workspace; false when it was already known. */
  insert(id: string, selfHostedEnterprise: boolean, now: number): boolean {
    return this.#sql.insert.run(id, selfHostedEnterprise ? 1 : 0, now).changes > 0
  }

  /** Removes every row that belongs to the workspace, its deployments' agent servers included, in one transaction. */
  purge(id: string): void {
    atomically(this.#db, () => {
      this.#agentData.deleteScopes(this.#sql.scopes.all(id))
      for (const statement of this.#purge) statement.run({ tenant: id })
    })
  }
}
