// Loaded into a hangar process by bench/sql-time.mjs (`node --import ./bench/sql-time-preload.mjs`):
// times every call of a better-sqlite3 statement's `run`, `get` and `all`, by its SQL text. On
// SIGWINCH (ignored by a process without it; hangar closes on SIGUSR2) it writes what it has summed
// since the last SIGWINCH to stderr as one line of JSON, `SQL-TIME [{ sql, method, calls, ns }]`,
// then starts again from zero. The time of a call is SQLite's work and the binding's (its parameters
// bound, its rows made into objects). `iterate` is not timed: it reads its rows lazily, after the call
// returns (hangar uses it only for a store search's items, which neither workload runs).

import { createRequire } from 'node:module'
import { join } from 'node:path'

// hangar's own copy of the driver (the bundle leaves it external): the one it loads.
const require = createRequire(join(process.cwd(), 'package.json'))
const Database = require('better-sqlite3')
const probe = new Database(':memory:')
const Statement = Object.getPrototypeOf(probe.prepare('SELECT 1'))
probe.close()

/** @type {Map<string, { sql: string, method: string, calls: number, ns: number }>} */
const sums = new Map()

for (const method of ['run', 'get', 'all']) {
  const original = Statement[method]
  /** @this {{ source: string }} @param {unknown[]} args */
  Statement[method] = function timed(...args) {
    const start = process.hrtime.bigint()
    try {
      return original.apply(this, args)
    } finally {
      const ns = Number(process.hrtime.bigint() - start)
      const key = `${method} ${this.source}`
      const sum = sums.get(key)
      if (sum) {
        sum.calls++
        sum.ns += ns
      } else sums.set(key, { sql: this.source.replace(/\s+/g, ' ').trim(), method, calls: 1, ns })
    }
  }
}

process.on('SIGWINCH', () => {
  process.stderr.write(`SQL-TIME ${JSON.stringify([...sums.values()])}\n`)
  sums.clear()
})
