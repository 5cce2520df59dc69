// Group commit: the writes made by one piece of work (a request's handler, a timer, a clock move
// waking a thousand runs) and the promise chains it starts share SQLite transactions, two in most
// bursts of ticks and microtasks. The burst's first group commits as soon as a microtask passes
// without a write, so what the work writes first (a run step's first events) is sent at once; the
// writes after it commit together when the burst is over, before the event loop takes the next
// timer or I/O callback, or, in a long burst, every LONG_GROUP writes. A request that wrote is
// answered only after its commit (see `durable()` and the onSend hook in app.ts), so "acknowledged
// means on disk" holds as before, but a run pays for two or three commits, and a thousand run steps
// woken together for about a hundred.
//
// Not only at the first microtask without a write, as this did first: a run's outputs pass
// through async generators several levels deep, each item taking more than one microtask, so
// nearly every event a run logged was a transaction of its own (~24 per run). Not only at the end
// of the burst either: the first event of a clock move would wait for the whole run step (a
// hundred subscribers heard of it ~1.5 ms later).
//
// Not at the end of the event-loop turn (setImmediate) for all work, which would batch more: the
// commit, and so every answer and streamed event, would then come after timers and callbacks
// already queued, and a test that moves a manual clock one step per turn would see events one step
// late. Only a write request read from a socket holds its group to the turn's end (`untilTurnEnd()`):
// it runs in an I/O callback, so that setImmediate comes before the next timer, and the requests
// read in the same turn share its commit (each paid one of its own: a sixth of a create's CPU).
//
// How writes are found: after the migrations, the connection's `prepare` hands out statements
// (compiled at their first use) whose writing methods open the shared transaction first, and `transaction(fn)` does the same (a
// transaction inside the shared one becomes a savepoint: it still rolls back alone). `pragma` and
// closing commit first (a pragma such as `foreign_keys` does nothing inside a transaction).

import type { Database, Statement } from 'better-sqlite3'
import { LazyStatement } from './lazy-statement.js'

type Db = Database

/** One shared transaction, and the promise answers wait on (made only when somebody waits). */
class Batch {
  #waiting: { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } | undefined
  #outcome: Error | null | undefined

  get committed(): Promise<void> {
    if (this.#outcome !== undefined) return this.#outcome === null ? Promise.resolve() : Promise.reject(this.#outcome)
    if (!this.#waiting) {
      let resolve!: () => void
      let reject!: (error: Error) => void
      const promise = new Promise<void>((yes, no) => {
        resolve = yes
        reject = no
      })
      this.#waiting = { promise, resolve, reject }
    }
    return this.#waiting.promise
  }

  settle(outcome: Error | null): void {
    this.#outcome = outcome
    if (outcome === null) this.#waiting?.resolve()
    else this.#waiting?.reject(outcome)
  }
}

const GROUP_COMMIT = Symbol('the connection group commit')
const ATOMIC = Symbol('the connection transaction function')

/**
 * Runs `fn` in one transaction (a savepoint inside an open one: it still rolls back alone) and
 * returns what it returns. It uses one transaction function per connection, made at its first use:
 * better-sqlite3 takes ~4 µs to make a transaction function, more than the savepoint itself costs,
 * and an agent run used to make seven.
 */
export function atomically<T>(db: Db, fn: () => T): T {
  const holder = db as Db & { [ATOMIC]?: (body: () => unknown) => unknown }
  let run = holder[ATOMIC]
  if (run === undefined) holder[ATOMIC] = run = db.transaction((body: () => unknown) => body())
  return run(fn) as T
}

/**
 * Writes after which a group that goes on commits at the next microtask without a write, as a
 * burst's first group does: a clock move waking a thousand runs then sends the first runs' events
 * while the last ones still step (a run step writes 20-60 times). Held to the end of the burst, every
 * stream heard of its step only once the thousandth run was done.
 */
const LONG_GROUP = 256

export class GroupCommit {
  readonly #db: Db
  readonly #begin: () => void
  readonly #commit: () => void
  readonly #rollback: () => void
  #batch: Batch | undefined
  /** Writes so far (the first group of a burst commits once a microtask passes without one). */
  #writes = 0
  /** Whether the current burst of ticks and microtasks has committed its first group already. */
  #inBurst = false
  /** Whether a request read from a socket in this turn of the event loop: its group commits at the turn's end. */
  #untilTurnEnd = false
  /** `#writes` when the open group began. */
  #openedAt = 0
  readonly #settledListeners: (() => void)[] = []
  /** How many transaction functions are running (their savepoints must not be committed under them). */
  #depth = 0
  /** Statements handed out and never used yet (not compiled yet). */
  readonly #unused = new Set<LazyStatement>()

  private constructor(db: Db) {
    this.#db = db
    const begin = db.prepare('BEGIN')
    const commit = db.prepare('COMMIT')
    const rollback = db.prepare('ROLLBACK')
    this.#begin = () => begin.run()
    this.#commit = () => commit.run()
    this.#rollback = () => rollback.run()
  }

  /** Makes `db` commit in groups (from now on: statements prepared before keep committing alone). */
  static install(db: Db): GroupCommit {
    const group = new GroupCommit(db)
    const prepare = db.prepare.bind(db)
    const transaction = db.transaction.bind(db)
    const pragma = db.pragma.bind(db)
    const exec = db.exec.bind(db)
    const join = () => group.join()
    // Statements compile when first used (lazy-statement.ts); those not used yet are kept to be compiled by prepareAll().
    const unused = group.#unused
    const compiled = (statement: LazyStatement) => unused.delete(statement)
    db.prepare = ((source: string) => {
      const statement = new LazyStatement(source, () => writesJoin(prepare(source), join), compiled)
      unused.add(statement)
      return statement
    }) as unknown as Db['prepare']
    db.transaction = ((fn: (...args: never[]) => unknown) => {
      const inner = transaction(fn)
      const run = (body: (...args: never[]) => unknown, args: never[]) => {
        join()
        group.#depth++
        try {
          return body(...args)
        } finally {
          group.#depth--
        }
      }
      const outer = Object.assign((...args: never[]) => run(inner, args), inner)
      for (const mode of ['deferred', 'immediate', 'exclusive'] as const) {
        outer[mode] = Object.assign((...args: never[]) => run(inner[mode], args), inner[mode])
      }
      return outer
    }) as Db['transaction']
    db.exec = ((source: string) => {
      join()
      return exec(source)
    }) as Db['exec']
    db.pragma = ((source: string, options?: { simple?: boolean }) => {
      // Inside a transaction function the pragma belongs to it (a check such as foreign_key_check).
      if (group.#depth === 0) group.commit()
      return pragma(source, options)
    }) as Db['pragma']
    ;(db as Db & { [GROUP_COMMIT]?: GroupCommit })[GROUP_COMMIT] = group
    // A transaction function made before this one would not join the group.
    delete (db as Db & { [ATOMIC]?: unknown })[ATOMIC]
    return group
  }

  /**
   * Compiles every statement handed out and not used yet; throws SQLite's error for one whose SQL
   * does not compile. Returns how many it compiled.
   */
  prepareAll(): number {
    const pending = [...this.#unused]
    for (const statement of pending) void statement.statement
    return pending.length
  }

  /** The group commit installed on `db`, if any. */
  static of(db: Db): GroupCommit | undefined {
    return (db as Db & { [GROUP_COMMIT]?: GroupCommit })[GROUP_COMMIT]
  }

  /** Before a write: opens the shared transaction unless it is open. */
  join(): void {
    this.#writes++
    const batch = this.#batch
    if (batch) {
      if (this.#db.inTransaction) {
        if (this.#writes - this.#openedAt === LONG_GROUP) this.#commitWhenQuiet(batch)
        return
      }
      // SQLite ended the transaction itself (an I/O error, a full disk): what it held is gone.
      this.#batch = undefined
      this.#settled()
      batch.settle(new Error('the database rolled back a transaction (see the error before this one)'))
    }
    if (!this.#db.open || this.#db.inTransaction) return
    this.#begin()
    const opened = new Batch()
    this.#batch = opened
    this.#openedAt = this.#writes
    if (this.#untilTurnEnd) return
    if (this.#inBurst) return afterBurst(() => this.commit())
    // The burst's first group: committed as soon as a microtask passes without a write.
    this.#inBurst = true
    this.#commitWhenQuiet(opened)
    afterBurst(() => {
      this.#inBurst = false
      this.commit()
    })
  }

  /**
   * Called for a request that came in on a socket (an I/O callback): what is written until the
   * end of this turn of the event loop, by it and by the requests that come in with it, commits
   * together then (at setImmediate, before the next timer runs).
   */
  untilTurnEnd(): void {
    if (this.#untilTurnEnd) return
    this.#untilTurnEnd = true
    setImmediate(() => {
      this.#untilTurnEnd = false
      this.commit()
    })
  }

  /** Commits `batch` at the first microtask that finds no write since the one before it. */
  #commitWhenQuiet(batch: Batch): void {
    let seen = this.#writes
    const quiet = () => {
      if (this.#batch !== batch) return
      if (this.#writes === seen) return this.commit()
      seen = this.#writes
      queueMicrotask(quiet)
    }
    queueMicrotask(quiet)
  }

  /**
   * How many writes were begun on this connection so far: it moves whenever anything may have been
   * written (a statement that writes, `exec`, a transaction function), even if nothing changed.
   */
  get writes(): number {
    return this.#writes
  }

  /** Commits the open transaction now (before a pragma, at close; otherwise once writing stops). */
  commit(): void {
    const batch = this.#batch
    if (!batch) return
    this.#batch = undefined
    if (!this.#db.open || !this.#db.inTransaction) {
      this.#settled()
      batch.settle(new Error('the database rolled back a transaction (see the error before this one)'))
      return
    }
    try {
      this.#commit()
      this.#settled()
      batch.settle(null)
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback()
      this.#settled()
      batch.settle(error as Error)
    }
  }

  /** Calls `listener` each time a group ends (committed, or lost), before its waiters hear of it. */
  onSettled(listener: () => void): void {
    this.#settledListeners.push(listener)
  }

  #settled(): void {
    for (const listener of this.#settledListeners) listener()
  }

  /**
   * Null when nothing written is waiting for its commit; else a promise that resolves once it is
   * committed (rejects if the commit failed: the writes are gone).
   */
  durable(): Promise<void> | null {
    return this.#batch ? this.#batch.committed : null
  }
}

/**
 * Calls `fn` once the current burst is over. Node runs every queued tick, then every microtask
 * (those they queue too), and again while either queue holds one, before it takes a timer or an I/O
 * callback. The microtask queued here by a tick goes behind those the current work already queued,
 * and the tick it queues runs only once the microtask queue is empty.
 */
function afterBurst(fn: () => void): void {
  process.nextTick(() => queueMicrotask(() => process.nextTick(fn)))
}

/** `statement`, whose writing methods (when it writes) first call `join`. */
function writesJoin<S extends Statement<unknown[], unknown>>(statement: S, join: () => void): S {
  if (statement.readonly) return statement
  for (const method of ['run', 'get', 'all', 'iterate'] as const) {
    const original = statement[method] as (...args: unknown[]) => unknown
    Object.defineProperty(statement, method, {
      value: function (this: S, ...args: unknown[]) {
        join()
        return original.apply(this, args)
      },
      configurable: true,
      writable: true,
    })
  }
  return statement
}
