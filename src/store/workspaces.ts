import type { Db } from './db.js'

/** Workspaces hangar has seen and seeded, with their plan flag. */
export class WorkspaceRepository {
  readonly #sql

  constructor(db: Db) {
    this.#sql = {
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
}
