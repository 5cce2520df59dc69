import type { Clock } from '../clock.js'
import { contains } from './threads.js'
import { iso, type Db } from './db.js'
import { atomically } from './group-commit.js'

interface AssistantRow {
  seq: number
  scope: string
  assistant_id: string
  graph_id: string
  name: string
  description: string | null
  config: string
  context: string
  metadata: string
  version: number
  created_at: number
  updated_at: number
}

export interface Assistant {
  assistant_id: string
  graph_id: string
  config: Record<string, unknown>
  context: unknown
  created_at: string
  updated_at: string
  metadata: Record<string, unknown>
  version: number
  name: string
  description: string | null
}

export interface AssistantFields {
  graph_id: string
  name: string
  description: string | null
  config: Record<string, unknown>
  context: unknown
  metadata: Record<string, unknown>
}

function toAssistant(row: AssistantRow): Assistant {
  return {
    assistant_id: row.assistant_id,
    graph_id: row.graph_id,
    config: JSON.parse(row.config),
    context: JSON.parse(row.context),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    metadata: JSON.parse(row.metadata),
    version: row.version,
    name: row.name,
    description: row.description,
  }
}

/** Assistants of a scope; every change is also kept as a numbered version. */
export class AssistantRepository {
  readonly #db: Db
  readonly #clock: Clock
  readonly #sql

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#sql = {
      get: db.prepare<[string, string], AssistantRow>('SELECT * FROM assistants WHERE scope = ? AND assistant_id = ?'),
      all: db.prepare<[string], AssistantRow>('SELECT * FROM assistants WHERE scope = ? ORDER BY seq'),
      insert: db.prepare(`INSERT INTO assistants
        (scope, assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at)
        VALUES (@scope, @assistant_id, @graph_id, @name, @description, @config, @context, @metadata, 1, @now, @now)`),
      update: db.prepare(`UPDATE assistants SET graph_id = @graph_id, name = @name, description = @description,
        config = @config, context = @context, metadata = @metadata, version = @version, updated_at = @now WHERE seq = @seq`),
      delete: db.prepare('DELETE FROM assistants WHERE scope = ? AND assistant_id = ?'),
      insertVersion: db.prepare(`INSERT INTO assistant_versions
        (assistant_seq, version, graph_id, name, description, config, context, metadata, created_at)
        VALUES (@seq, @version, @graph_id, @name, @description, @config, @context, @metadata, @now)`),
      versions: db.prepare<[number], AssistantRow & { assistant_seq: number }>(
        'SELECT * FROM assistant_versions WHERE assistant_seq = ? ORDER BY version DESC'),
      version: db.prepare<[number, number], AssistantRow>('SELECT * FROM assistant_versions WHERE assistant_seq = ? AND version = ?'),
      maxVersion: db.prepare<[number], { v: number }>('SELECT max(version) AS v FROM assistant_versions WHERE assistant_seq = ?'),
    }
  }

  get(scope: string, assistantId: string): Assistant | undefined {
    const row = this.#sql.get.get(scope, assistantId)
    return row && toAssistant(row)
  }

  list(scope: string, filter: { graph_id?: string | null; name?: string | null; metadata?: Record<string, unknown> | null }): Assistant[] {
    return this.#sql.all
      .all(scope)
      .map(toAssistant)
      .filter((a) =>
        (!filter.graph_id || a.graph_id === filter.graph_id) &&
        (!filter.name || a.name.toLowerCase().includes(filter.name.toLowerCase())) &&
        (!filter.metadata || contains(a.metadata, filter.metadata)),
      )
  }

  create(scope: string, assistantId: string, fields: AssistantFields): Assistant {
    const now = this.#clock.now()
    const row = {
      scope,
      assistant_id: assistantId,
      ...this.#encode(fields),
      now,
    }
    return atomically(this.#db, () => {
      this.#sql.insert.run(row)
      const seq = this.#sql.get.get(scope, assistantId)!.seq
      this.#sql.insertVersion.run({ seq, version: 1, ...this.#encode(fields), now })
      return this.get(scope, assistantId)!
    })
  }

  /** Applies changes as a new version, which becomes the current one. */
  update(scope: string, assistantId: string, fields: AssistantFields): Assistant | undefined {
    const row = this.#sql.get.get(scope, assistantId)
    if (!row) return undefined
    const now = this.#clock.now()
    return atomically(this.#db, () => {
      const version = (this.#sql.maxVersion.get(row.seq)?.v ?? row.version) + 1
      this.#sql.insertVersion.run({ seq: row.seq, version, ...this.#encode(fields), now })
      this.#sql.update.run({ seq: row.seq, version, ...this.#encode(fields), now })
      return this.get(scope, assistantId)!
    })
  }

  /** Makes an earlier version current again; undefined when there is no such version. */
  setLatest(scope: string, assistantId: string, version: number): Assistant | undefined {
    const row = this.#sql.get.get(scope, assistantId)
    const chosen = row && this.#sql.version.get(row.seq, version)
    if (!row || !chosen) return undefined
    this.#sql.update.run({ ...chosen, seq: row.seq, version, now: this.#clock.now() })
    return this.get(scope, assistantId)
  }

  versions(scope: string, assistantId: string): Assistant[] | undefined {
    const row = this.#sql.get.get(scope, assistantId)
    if (!row) return undefined
    return this.#sql.versions.all(row.seq).map((v) => ({ ...toAssistant({ ...v, scope, assistant_id: assistantId, updated_at: v.created_at }) }))
  }

  delete(scope: string, assistantId: string): boolean {
    return this.#sql.delete.run(scope, assistantId).changes > 0
  }

  #encode(fields: AssistantFields) {
    return {
      graph_id: fields.graph_id,
      name: fields.name,
      description: fields.description,
      config: JSON.stringify(fields.config),
      context: JSON.stringify(fields.context ?? {}),
      metadata: JSON.stringify(fields.metadata),
    }
  }
}
