// The shape of the house, checked on the source (CONVENTIONS.md): each layer speaks only its own
// language, domain errors depend on nothing, no module keeps mutable state at its top level, and
// app.ts stays the route table while services.ts builds what the routes use.

import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const SRC = fileURLToPath(new URL('../src', import.meta.url))

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : []
  })
}
const files = sources().map((path) => ({ name: relative(SRC, path), text: readFileSync(path, 'utf8') }))
const inLayer = (...layers: string[]) => files.filter((f) => layers.some((layer) => f.name.startsWith(`${layer}/`)))

/** The modules a file imports at run time (type-only imports left out), as written. */
function runtimeImports(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(/^import\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gms)) if (!match[1]) found.push(match[2])
  for (const match of text.matchAll(/^import\s+'([^']+)'/gm)) found.push(match[1])
  return found
}
const allImports = (text: string) => [...text.matchAll(/^import\s[^'"]*?'([^']+)'/gms)].map((m) => m[1])

t.test('the domain errors module depends on nothing', async (t) => {
  const module = files.find((f) => f.name === 'domain/errors.ts')
  t.ok(module, 'src/domain/errors.ts exists')
  t.same(allImports(module!.text), [])
})

t.test('below the routes nothing speaks HTTP: no Fastify, no ApiError, no route module', async (t) => {
  for (const file of inLayer('domain', 'agent', 'store', 'lifecycle')) {
    // `../errors.js` is the HTTP error exit; the domain's own errors are `domain/errors.js`.
    const http = allImports(file.text).filter((m) => m === 'fastify' || m.startsWith('@fastify/') || m === '../errors.js' || m.includes('/routes/'))
    t.same(http, [], `${file.name} imports nothing of the HTTP layer`)
    t.notMatch(file.text, /\bApiError\b|statusCode/, `${file.name} names no HTTP error or status`)
  }
})

t.test('SQL lives in the store only', async (t) => {
  for (const file of files.filter((f) => !f.name.startsWith('store/'))) {
    t.notMatch(file.text, /\.prepare\(|from 'better-sqlite3'/, `${file.name} prepares no SQL`)
  }
  for (const file of inLayer('store')) {
    const upward = runtimeImports(file.text).filter((m) => /\/(domain|agent|routes|admin)\//.test(m))
    t.same(upward, [], `${file.name} calls nothing above the store`)
  }
})

// SQLite (3.53, as better-sqlite3 12 bundles it) lets its planner use the value bound to a bare
// `LIMIT ?`, and so compiles the statement again each time a value is bound to it: ~2–4 µs per
// run of a page read that otherwise takes well under one (a follower reads its thread's log a page
// at a time). A LIMIT written as an expression is compiled once; the rows are the same.
t.test('a bound LIMIT is written as an expression, so its statement is compiled once', async (t) => {
  for (const file of inLayer('store')) {
    t.notMatch(file.text, /\bLIMIT\s+[?@:$]/, `${file.name} binds no bare LIMIT (write LIMIT CAST(? AS INTEGER))`)
  }
  t.ok(inLayer('store').some((f) => f.text.includes('LIMIT CAST(')), 'the store pages with bound limits')
})

// better-sqlite3 takes ~4 µs to make a transaction function, more than the savepoint it opens
// costs; `db.transaction(fn)()` made one per call (seven per agent run). `atomically(db, fn)`
// reuses the connection's one. Only the migrations (before group commit) and the lock file's own
// connection make theirs.
t.test('transaction functions are made once per connection, not per call', async (t) => {
  const allowed = new Set(['store/group-commit.ts', 'store/migrations.ts', 'store/database-lock.ts'])
  for (const file of files.filter((f) => !allowed.has(f.name))) {
    t.notMatch(file.text, /\b(db|#db|lock)\.transaction\(/, `${file.name} makes no transaction function (use atomically(db, fn))`)
  }
  t.ok(files.some((f) => f.text.includes('atomically(')), 'the store runs transactions through atomically()')
})

t.test('routes build no error bodies by hand and hold no rules of the runs, feedback or OAuth flow', async (t) => {
  for (const file of inLayer('routes')) {
    t.notMatch(file.text, /send\(\{\s*detail/, `${file.name} leaves error bodies to the error handler`)
    t.notMatch(file.text, /\.createToken\(|feedback_keys|uuid7|randomUUID\(\)\s*,\s*\{\}/, `${file.name} creates no tokens or runs itself`)
  }
})

t.test('no module keeps mutable state at its top level', async (t) => {
  for (const file of files.filter((f) => f.name !== 'server.ts')) {
    const lets = [...file.text.matchAll(/^let\s+(\w+)/gm)].map((m) => m[1])
    t.same(lets, [], `${file.name} has no top-level let`)
    const collections = [...file.text.matchAll(/^(?:export\s+)?const\s+(\w+)\s*=\s*new\s+(Map|Set|WeakMap|WeakSet)\b/gm)].map((m) => m[1])
    t.same(collections, [], `${file.name}: a top-level Map or Set is a constant table, typed ReadonlyMap/ReadonlySet`)
  }
})

t.test('app.ts is the route table and services.ts builds the services', async (t) => {
  const app = files.find((f) => f.name === 'app.ts')!.text
  t.notMatch(app, /new [A-Z]\w*(Repository|Executor|Injector|Journal|Bus)\b|openDatabase/, 'app.ts constructs no service')
  t.notMatch(app, /throw /, 'app.ts decides nothing')
  const services = files.find((f) => f.name === 'services.ts')!.text
  t.notMatch(services, /\.(get|post|patch|put|delete)\(['"]\//, 'services.ts registers no route')
})
