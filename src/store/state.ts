// All of hangar's stored state as one JSON document, and back: every table's rows, exactly, with
// the schema version they belong to. Generic over the tables, so a new migration is covered
// without touching this file. Bytes (a BLOB column) are written as `{"base64": "…"}`.

import type { Db } from './db.js'
import { MIGRATIONS } from './migrations.js'
import { atomically } from './group-commit.js'

export interface StateDocument {
  hangar_state: 1
  schema_version: number
  tables: Record<string, Record<string, unknown>[]>
}

export class StateError extends Error {}

function tableNames(db: Db): string[] {
  return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[])
    .map((row) => row.name)
}

function columnsOf(db: Db, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((row) => row.name)
}

/** A BLOB as JSON can hold it, and back; any other value as it is (an object that is not one is refused by SQLite). */
const toJson = (value: unknown) => (Buffer.isBuffer(value) ? { base64: value.toString('base64') } : value)
function fromJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  const keys = Object.keys(value)
  const encoded = (value as { base64?: unknown }).base64
  return keys.length === 1 && typeof encoded === 'string' ? Buffer.from(encoded, 'base64') : value
}

/** Every row of every table, in a stable order (by primary key / insertion). */
export function exportState(db: Db): StateDocument {
  const tables: StateDocument['tables'] = {}
  for (const table of tableNames(db)) {
    const order = columnsOf(db, table).includes('seq') ? 'seq' : columnsOf(db, table).join(', ')
    const rows = db.prepare(`SELECT * FROM "${table}" ORDER BY ${order}`).all() as Record<string, unknown>[]
    tables[table] = rows.map((row) => Object.fromEntries(Object.entries(row).map(([column, value]) => [column, toJson(value)])))
  }
  return { hangar_state: 1, schema_version: MIGRATIONS.length, tables }
}

/** Removes every row of every table. */
export function clearState(db: Db): void {
  db.pragma('foreign_keys = OFF')
  try {
    atomically(db, () => {
      for (const table of tableNames(db)) db.prepare(`DELETE FROM "${table}"`).run()
    })
  } finally {
    db.pragma('foreign_keys = ON')
  }
}

/**
 * Replaces all state with a document `exportState` wrote (same schema version), in one
 * transaction: on any problem nothing changes.
 */
export function importState(db: Db, document: unknown): void {
  const doc = document as Partial<StateDocument>
  if (!doc || doc.hangar_state !== 1 || typeof doc.tables !== 'object' || doc.tables === null) {
    throw new StateError('Not a hangar state document (expected hangar_state: 1 and tables).')
  }
  if (doc.schema_version !== MIGRATIONS.length) {
    throw new StateError(`The document has schema version ${doc.schema_version}; this hangar has ${MIGRATIONS.length}.`)
  }
  const known = tableNames(db)
  for (const [table, rows] of Object.entries(doc.tables)) {
    if (!known.includes(table)) throw new StateError(`Unknown table '${table}'.`)
    if (!Array.isArray(rows)) throw new StateError(`Table '${table}' must be a list of rows.`)
    const columns = columnsOf(db, table)
    for (const row of rows) {
      const extra = Object.keys(row ?? {}).find((c) => !columns.includes(c))
      if (typeof row !== 'object' || row === null || extra) throw new StateError(`A row of '${table}' has an unknown column '${extra}'.`)
    }
  }
  db.pragma('foreign_keys = OFF')
  try {
    atomically(db, () => {
      for (const table of known) db.prepare(`DELETE FROM "${table}"`).run()
      for (const [table, rows] of Object.entries(doc.tables!)) {
        for (const row of rows) {
          const columns = Object.keys(row)
          db.prepare(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
            .run(...columns.map((c) => fromJson(row[c]) as never))
        }
      }
      const broken = db.pragma('foreign_key_check') as unknown[]
      if (broken.length > 0) throw new StateError(`The document breaks ${broken.length} reference(s) between tables.`)
    })
  } catch (error) {
    if (error instanceof StateError) throw error
    throw new StateError(`The document could not be stored: ${(error as Error).message}`)
  } finally {
    db.pragma('foreign_keys = ON')
  }
}
