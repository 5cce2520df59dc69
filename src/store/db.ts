import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { migrate } from './migrations.js'

export type Db = Database.Database

/**
 * Opens (creating when needed) hangar's SQLite database and brings its schema up to date.
 * WAL with synchronous=NORMAL: a committed transaction survives a crash of the process (the
 * durability hangar promises — "nothing acknowledged is lost"); only a power cut could lose the
 * last commits, which an emulator does not need to guard against at the cost of an fsync per write.
 */
export function openDatabase(path: string): Db {
  const memory = path === ':memory:'
  if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true })
  const db = new Database(path)
  if (!memory) db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  migrate(db)
  return db
}

/** The store keeps instants as epoch milliseconds; the API shows them as ISO 8601 (UTC). */
export const iso = (ms: number) => new Date(ms).toISOString()

/** Checkpoints the WAL into the main file and closes the connection. */
export function closeDatabase(db: Db) {
  if (!db.open) return
  if (!db.memory) db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
}
