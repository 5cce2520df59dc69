import { mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { takeDatabaseLock, type DatabaseLock } from './database-lock.js'
import { GroupCommit } from './group-commit.js'
import { migrate } from './migrations.js'

export type Db = Database.Database

/** A database file hangar cannot use; the message is one line naming the file and why. */
export class DatabaseError extends Error {
  override name = 'DatabaseError'
}

const LOCK = Symbol('the lock held while this database is open')
/** How many WAL pages a commit may leave before it copies them into the database (see openDatabase). */
export const WAL_PAGES_PER_CHECKPOINT = 4000
type LockedDb = Db & { [LOCK]?: DatabaseLock }

/**
 * Opens (creating when needed) hangar's SQLite database and brings its schema up to date.
 * WAL with synchronous=NORMAL: a committed transaction survives a crash of the process (the
 * durability hangar promises — "nothing acknowledged is lost"); only a power cut could lose the
 * last commits, which an emulator does not need to guard against at the cost of an fsync per write.
 * A file another hangar has open is refused (database-lock.ts), as is one that is not a SQLite
 * database or was written by a newer hangar: each throws a DatabaseError.
 */
export function openDatabase(path: string): Db {
  if (path === ':memory:') return prepare(new Database(SchemaImage.get()))
  createDirectories(path)
  let lock: DatabaseLock | undefined
  let db: Db | undefined
  try {
    db = new Database(path)
    // Reads the file's header: a file that is not a database fails here, before a lock file is made beside it.
    db.pragma('schema_version')
    const taken = takeDatabaseLock(path)
    if ('heldBy' in taken) throw new DatabaseError(`the database ${path} is in use by ${holder(taken.heldBy)}`)
    lock = taken
    db.pragma('journal_mode = WAL')
    // A checkpoint copies the WAL into the database and syncs both files, on the thread that
    // commits. Every 1,000 pages (SQLite's default), a commit of ~30 creates took ~3.5 ms on
    // average; every 4,000 (a WAL of up to 16 MiB), ~2.7 ms: a page written again between two
    // checkpoints is copied once, and there are a quarter as many syncs (bench/sql-time.mjs creates).
    db.pragma(`wal_autocheckpoint = ${WAL_PAGES_PER_CHECKPOINT}`)
    const ready = prepare(db) as LockedDb
    ready[LOCK] = lock
    return ready
  } catch (error) {
    db?.close()
    lock?.release()
    throw error instanceof DatabaseError ? error : new DatabaseError(problem(path, error))
  }
}

/**
 * An empty in-memory database with the schema already made, as an image: each in-memory hangar
 * starts from a copy of it instead of running the migrations again (most of what a test suite
 * paid per hangar for its database). Made once per process.
 */
class SchemaImage {
  static #image: Buffer | undefined

  static get(): Buffer {
    if (SchemaImage.#image === undefined) {
      const db = new Database(':memory:')
      migrate(db)
      SchemaImage.#image = db.serialize()
      db.close()
    }
    return SchemaImage.#image
  }
}

const holder = (pid: number | undefined): string =>
  pid === undefined ? 'another hangar'
    : pid === process.pid ? `another hangar in this process (pid ${pid}): close that one first`
      : `another hangar (pid ${pid})`

function prepare(db: Db): Db {
  db.pragma('synchronous = NORMAL')
  // A request's writes are a savepoint inside its commit group's transaction (group-commit.ts), and
  // a savepoint keeps the pages it changes in a sub-journal, for its own rollback only (never read
  // after a crash: the WAL is). By default that journal spills to a temporary file past 64 KiB, and
  // a group of ~30 creates did: a file made and deleted per commit and 14 of a create's 21 writes
  // (strace). In memory it is freed at each commit. Temporary tables and sorts too large for the
  // cache go to memory as well; an emulator's data is small enough for that.
  db.pragma('temp_store = MEMORY')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  migrate(db)
  GroupCommit.install(db)
  return db
}

/** One line on why the database at `path` cannot be used. */
function problem(path: string, error: unknown): string {
  if ((error as { code?: string }).code === 'SQLITE_NOTADB') {
    return `the database ${path} is not a SQLite database (give a new file name to start an empty one)`
  }
  const message = (error as Error).message.split('\n')[0]
  // migrate()'s refusal: "the database was written by a newer hangar (schema N; this one knows M)"
  if (message.startsWith('the database ')) return `the database ${path}${message.slice('the database'.length)}: start that hangar, or give this one another file`
  return `the database ${path}: ${message}`
}

/**
 * Creates the directories the database file needs, one at a time. Not `mkdirSync(…, {recursive})`:
 * where a parent exists but cannot hold the child (a path under /proc, a dangling symlink), it
 * answers ENOENT forever and node's recursive walk retries without end, at full CPU.
 */
function createDirectories(path: string): void {
  const missing: string[] = []
  let dir = dirname(resolve(path))
  for (;;) {
    const stat = statOf(dir)
    if (stat?.isDirectory()) break
    if (stat) throw new DatabaseError(`the database ${path}: ${dir} is not a directory`)
    if (dirname(dir) === dir) break
    missing.unshift(dir)
    dir = dirname(dir)
  }
  for (const each of missing) {
    try {
      mkdirSync(each)
    } catch (error) {
      throw new DatabaseError(`the database ${path}: cannot create the directory ${each} (${reason(error)})`)
    }
  }
  if (statOf(resolve(path))?.isDirectory()) throw new DatabaseError(`the database ${path}: it is a directory, not a file`)
}

/** The stat of `path`, or undefined when there is nothing there (or a parent is not a directory). */
function statOf(path: string) {
  try {
    return statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new DatabaseError(`cannot read ${path} (${reason(error)})`)
  }
}

/** "no such file or directory" out of node's "ENOENT: no such file or directory, mkdir '/x'". */
const reason = (error: unknown): string => /^[A-Z]+: (.*?), \w+ '/.exec((error as Error).message)?.[1] ?? (error as Error).message

/** The store keeps instants as epoch milliseconds; the API shows them as ISO 8601 (UTC). */
export const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Whether `error` is SQLite refusing a write because a unique index already has its key: `columns` as
 * SQLite names them, "table.column, table.column" (so a clash on another unique column is not taken for it).
 */
export const isUniqueViolation = (error: unknown, columns: string): boolean =>
  (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && (error as Error).message === `UNIQUE constraint failed: ${columns}`

/**
 * A page's `limit` or `offset` as SQLite can bind it. pydantic takes integers of any size, but
 * SQLite's are 64-bit (a larger one binds as a float: "datatype mismatch"); past the largest safe
 * integer no table has rows anyway, so the page is the same.
 */
export const pageBound = (n: number) => Math.min(n, Number.MAX_SAFE_INTEGER)

/** The `offset` a list answers (the one to ask for next): exact up to 2^53, as JSON can hold it beyond. */
export const nextOffset = (offset: number, returned: number) => pageBound(offset) + returned

/** Checkpoints the WAL into the main file, closes the connection and lets another hangar open the file. */
export function closeDatabase(db: Db) {
  if (!db.open) return
  GroupCommit.of(db)?.commit()
  if (!db.memory) db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  ;(db as LockedDb)[LOCK]?.release()
}
