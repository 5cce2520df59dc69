// A prepared statement that SQLite compiles when it is first used, not when a repository is built:
// hangar prepares ~165 statements per app, most of which a test (or a short-lived hangar) never
// runs, and compiling them was the largest part of building an app. The statements' SQL is still
// checked: `GroupCommit.prepareAll()` compiles every one not used yet (a test does it for a whole app).

import type { ColumnDefinition, Database, Statement } from 'better-sqlite3'

type Toggle = 'pluck' | 'raw' | 'expand' | 'safeIntegers'

/** What a connection hands out for `db.prepare(source)`: a Statement compiled on first use. */
export class LazyStatement {
  readonly #make: () => Statement
  readonly #compiled: (statement: LazyStatement) => void
  #real: Statement | undefined
  /** Modes set before the statement was compiled, applied to it in order when it is. */
  readonly #modes: [Toggle, boolean | undefined][] = []
  #bound: unknown[] | undefined
  readonly source: string

  /** `make` compiles the statement; `compiled` hears of it once it has. */
  constructor(source: string, make: () => Statement, compiled: (statement: LazyStatement) => void) {
    this.source = source
    this.#make = make
    this.#compiled = compiled
  }

  /** The compiled statement (compiling it now if it is not yet). */
  get statement(): Statement {
    if (this.#real === undefined) {
      const real = this.#make()
      for (const [mode, on] of this.#modes) setMode(real, mode, on)
      if (this.#bound !== undefined) real.bind(...this.#bound)
      this.#modes.length = 0
      this.#bound = undefined
      this.#real = real
      this.#compiled(this)
    }
    return this.#real
  }

  get reader(): boolean { return this.statement.reader }
  get readonly(): boolean { return this.statement.readonly }
  get busy(): boolean { return this.statement.busy }
  get database(): Database { return this.statement.database }

  run(...params: unknown[]) { return this.statement.run(...params) }
  get(...params: unknown[]) { return this.statement.get(...params) }
  all(...params: unknown[]) { return this.statement.all(...params) }
  iterate(...params: unknown[]) { return this.statement.iterate(...params) }
  columns(): ColumnDefinition[] { return this.statement.columns() }

  bind(...params: unknown[]): this {
    if (this.#real !== undefined) this.#real.bind(...params)
    else this.#bound = params
    return this
  }

  pluck(on?: boolean): this { return this.#toggle('pluck', on) }
  raw(on?: boolean): this { return this.#toggle('raw', on) }
  expand(on?: boolean): this { return this.#toggle('expand', on) }
  safeIntegers(on?: boolean): this { return this.#toggle('safeIntegers', on) }

  #toggle(mode: Toggle, on: boolean | undefined): this {
    if (this.#real !== undefined) setMode(this.#real, mode, on)
    else this.#modes.push([mode, on])
    return this
  }
}

/** `statement.pluck()` or `statement.pluck(on)`: better-sqlite3 refuses an explicit undefined. */
function setMode(statement: Statement, mode: Toggle, on: boolean | undefined): void {
  if (on === undefined) statement[mode]()
  else statement[mode](on)
}
