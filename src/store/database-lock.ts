// One hangar per database file. Two would each recover the other's runs as interrupted at start-up
// and keep their own caches of data the other changes, so the second is refused.
//
// The lock is a small SQLite file beside the database (`<db>-lock`) holding the holder's pid. The
// holder writes its pid, then keeps a read transaction open for as long as it runs: SQLite's file
// lock (taken by the operating system) then lets anyone read the pid but nobody write it. Whoever
// comes next tries to write its own pid and is refused while the holder lives; when the holder
// ends, however it ends (SIGKILL included), the operating system drops the lock, so a stale lock
// can never block a restart. The main database stays readable by other tools (sqlite3, a test's
// read-only connection) throughout. The file is left in place on close: deleting it would let a
// starting hangar lock a file that a third one no longer sees.

import Database from 'better-sqlite3'

export interface DatabaseLock {
  release(): void
}

/**
 * Takes the lock of the database at `path`; when another hangar holds it, answers who does (its pid,
 * when the lock file names it). Other failures (the lock file cannot be created) throw SQLite's error.
 */
export function takeDatabaseLock(path: string): DatabaseLock | { heldBy: number | undefined } {
  // No busy timeout: a held lock is refused at once rather than waited for.
  const lock = new Database(`${path}-lock`, { timeout: 0 })
  try {
    lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL) STRICT')
    lock.transaction(() => {
      lock.exec('DELETE FROM holder')
      lock.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid)
    })()
    // From this read on, the holder's shared lock keeps every other writer out. Should another
    // hangar have written its pid between our write and this read, the last writer holds the lock.
    lock.exec('BEGIN')
    const last = holderOf(lock)
    if (last !== process.pid) {
      lock.close()
      return { heldBy: last }
    }
    return { release: () => lock.close() }
  } catch (error) {
    const busy = (error as { code?: string }).code === 'SQLITE_BUSY'
    const heldBy = busy ? holderOf(lock) : undefined
    lock.close()
    if (!busy) throw error
    return { heldBy }
  }
}

function holderOf(lock: Database.Database): number | undefined {
  try {
    return (lock.prepare('SELECT pid FROM holder').get() as { pid: number } | undefined)?.pid
  } catch {
    return undefined
  }
}
