import type { Db } from './db.js'
import { GroupCommit } from './group-commit.js'

/**
 * Answers computed from the database, kept until anything is written. The connection's group
 * commit counts every write begun on it (`GroupCommit.writes`; without one, SQLite's count of rows
 * changed, `total_changes()`, which costs a query); while that count stands still, an answer
 * computed from the database is still the answer. A count that moved (anything written, in any
 * table, even a rolled-back write) drops every entry, so nothing stale is ever served.
 *
 * Dashboards and CI scripts poll the same few reads; this spares each poll the query, the row
 * decoding and the serialization.
 */
export class ReadCache<V> {
  readonly #changes: () => number
  readonly #capacity: number
  readonly #entries = new Map<string, V>()
  #version = -1

  constructor(db: Db, capacity = 256) {
    const group = GroupCommit.of(db)
    if (group) {
      this.#changes = () => group.writes
    } else {
      const statement = db.prepare<[], number>('SELECT total_changes()').pluck()
      this.#changes = () => statement.get()!
    }
    this.#capacity = capacity
  }

  /** The answer kept under `key`, or `compute()`'s (kept if computing it wrote nothing). */
  get(key: string, compute: () => V): V {
    const version = this.#changes()
    if (version !== this.#version) {
      this.#entries.clear()
      this.#version = version
    }
    const kept = this.#entries.get(key)
    if (kept !== undefined) return kept
    const value = compute()
    if (this.#changes() === version) {
      if (this.#entries.size >= this.#capacity) this.#entries.clear()
      this.#entries.set(key, value)
    }
    return value
  }
}
