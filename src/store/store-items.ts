import type { Db } from './db.js'
import { atomically } from './group-commit.js'

/** One item of an agent server's store, as kept: its namespace as the labels joined by '.'. */
export interface StoreItemRecord {
  seq: number
  /** The labels joined by '.' (no label holds one). */
  namespace: string
  key: string
  /** The JSON text of the value (an object). */
  value: string
  /** The JSON text of the item's `index`: null (the whole value), `false`, or a list of field paths. */
  indexFields: string | null
  ttlMinutes: number | null
  /** Epoch ms after which the item is gone; null: never. */
  expiresAt: number | null
  createdAt: number
  updatedAt: number
}

interface Row {
  seq: number
  namespace: string
  key: string
  value: string
  index_fields: string | null
  ttl_minutes: number | null
  expires_at: number | null
  created_at: number
  updated_at: number
}

/** What a write is made of: a record but for what the store adds (seq and the times). */
export type StoreItemWrite = Omit<StoreItemRecord, 'seq' | 'createdAt' | 'updatedAt'>

const toRecord = (row: Row): StoreItemRecord => ({
  seq: row.seq,
  namespace: row.namespace,
  key: row.key,
  value: row.value,
  indexFields: row.index_fields,
  ttlMinutes: row.ttl_minutes,
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

/** A row's COLUMNS, in their order. */
type Columns = [Row['seq'], Row['namespace'], Row['key'], Row['value'], Row['index_fields'], Row['ttl_minutes'], Row['expires_at'], Row['created_at'], Row['updated_at']]

const fromColumns = (c: Columns): StoreItemRecord => ({
  seq: c[0],
  namespace: c[1],
  key: c[2],
  value: c[3],
  indexFields: c[4],
  ttlMinutes: c[5],
  expiresAt: c[6],
  createdAt: c[7],
  updatedAt: c[8],
})

const COLUMNS = 'seq, namespace, key, value, index_fields, ttl_minutes, expires_at, created_at, updated_at'
/** Rows still alive at @now. */
const ALIVE = '(expires_at IS NULL OR expires_at > @now)'
/** Live rows whose namespace is @prefix or lies under it ('' for all), most recently written first. */
const UNDER_PREFIX = `WHERE scope = @scope AND ${ALIVE}
  AND (@prefix = '' OR namespace = @prefix OR substr(namespace, 1, length(@prefix) + 1) = @prefix || '.')
  ORDER BY updated_at DESC, seq DESC`

/** What a query ranks an item by: its seq, the JSON text of its value, and of its index fields. */
export type RankedColumns = [seq: number, value: string, indexFields: string | null]

/**
 * The agent servers' stores (long-term memory), one per scope. Items past their expiry are never
 * read; they are removed on the next write. "Not found" is undefined.
 */
export class StoreItemRepository {
  readonly #db: Db
  readonly #sql

  constructor(db: Db) {
    this.#db = db
    this.#sql = {
      get: db.prepare<{ scope: string; namespace: string; key: string; now: number }, Row>(
        `SELECT ${COLUMNS} FROM store_items WHERE scope = @scope AND namespace = @namespace AND key = @key AND ${ALIVE}`,
      ),
      createdAt: db.prepare<{ scope: string; namespace: string; key: string; now: number }, number>(
        `SELECT created_at FROM store_items WHERE scope = @scope AND namespace = @namespace AND key = @key AND ${ALIVE}`,
      ).pluck(),
      remove: db.prepare<{ scope: string; namespace: string; key: string }>('DELETE FROM store_items WHERE scope = @scope AND namespace = @namespace AND key = @key'),
      insert: db.prepare(
        `INSERT INTO store_items (scope, namespace, key, value, index_fields, ttl_minutes, expires_at, created_at, updated_at)
         VALUES (@scope, @namespace, @key, @value, @indexFields, @ttlMinutes, @expiresAt, @createdAt, @now)`,
      ),
      expire: db.prepare<{ now: number }>('DELETE FROM store_items WHERE expires_at <= @now'),
      setExpiry: db.prepare<{ seq: number; expiresAt: number }>('UPDATE store_items SET expires_at = @expiresAt WHERE seq = @seq'),
      // Under a prefix of labels ('' is every namespace), the most recently written first.
      // Rows as arrays (`raw`): better-sqlite3 makes an object a property at a time, which was half
      // of reading a thousand items; `fromColumns` makes the records in JavaScript.
      under: db.prepare<{ scope: string; prefix: string; now: number }, Columns>(`SELECT ${COLUMNS} FROM store_items ${UNDER_PREFIX}`).raw(),
      // A query ranks every item: only the columns it reads (better-sqlite3 makes a string of each
      // column of each row, and the rest are read for the page alone).
      ranked: db.prepare<{ scope: string; prefix: string; now: number }, RankedColumns>(
        `SELECT seq, value, index_fields FROM store_items ${UNDER_PREFIX}`,
      ).raw(),
      bySeq: db.prepare<[number], Row>(`SELECT ${COLUMNS} FROM store_items WHERE seq = ?`),
      namespaces: db.prepare<{ scope: string; now: number }, string>(
        `SELECT DISTINCT namespace FROM store_items WHERE scope = @scope AND ${ALIVE}`,
      ).pluck(),
    }
  }

  /** The live item at this namespace and key, if any. */
  get(scope: string, namespace: string, key: string, now: number): StoreItemRecord | undefined {
    const row = this.#sql.get.get({ scope, namespace, key, now })
    return row && toRecord(row)
  }

  /**
   * Writes an item (created, or replaced keeping its `created_at`), after removing every expired
   * item of every scope, in one transaction. An item that had expired is created anew.
   */
  put(scope: string, item: StoreItemWrite, now: number): void {
    atomically(this.#db, () => {
      const createdAt = this.#sql.createdAt.get({ scope, namespace: item.namespace, key: item.key, now }) ?? now
      this.#sql.expire.run({ now })
      this.#sql.remove.run({ scope, namespace: item.namespace, key: item.key })
      this.#sql.insert.run({ scope, ...item, createdAt, now })
    })
  }

  /** Removes the item; nothing happens when there is none. */
  delete(scope: string, namespace: string, key: string): void {
    this.#sql.remove.run({ scope, namespace, key })
  }

  /** Moves the expiry of these items (one transaction). */
  setExpiry(expiries: readonly { seq: number; expiresAt: number }[]): void {
    if (expiries.length === 0) return
    atomically(this.#db, () => {
      for (const each of expiries) this.#sql.setExpiry.run(each)
    })
  }

  /**
   * The live items whose namespace is `prefix` or lies under it ('' for all), most recently written
   * first, one at a time: a caller that stops early reads no more rows. Nothing else may use the
   * connection until the iteration ends (better-sqlite3 refuses it).
   */
  *scan(scope: string, prefix: string, now: number): Generator<StoreItemRecord, void, undefined> {
    for (const columns of this.#sql.under.iterate({ scope, prefix, now }) as IterableIterator<Columns>) yield fromColumns(columns)
  }

  /** Of every live item under the prefix (as `scan` orders them), what a query ranks it by, all at once. */
  rankable(scope: string, prefix: string, now: number): RankedColumns[] {
    return this.#sql.ranked.all({ scope, prefix, now })
  }

  /** The item with this seq (read in the same turn as `rankable`, so still there). */
  bySeq(seq: number): StoreItemRecord | undefined {
    const row = this.#sql.bySeq.get(seq)
    return row && toRecord(row)
  }

  /** Every namespace that holds a live item, in no particular order. */
  namespaces(scope: string, now: number): string[] {
    return this.#sql.namespaces.all({ scope, now })
  }
}
