// The parity report (docs/parity.md, written by `npm run parity` from test/parity/report.ts) is
// true: the page is what the generator makes of today's documents, routes and tests; every
// operation of the real documents that hangar serves is exercised by some test file; every one it
// does not serve says why.

import { readFileSync } from 'node:fs'
import t from 'tap'
import { NOTES, parity, PARITY_PAGE, render } from './parity/report.js'

const operations = await parity()

t.test('docs/parity.md is current (run npm run parity after changing routes, tests or the documents)', async (t) => {
  t.equal(readFileSync(PARITY_PAGE, 'utf8'), render(operations))
})

t.test('every served operation of the real documents is exercised by a test', async (t) => {
  const untested = operations.filter((o) => o.served && o.tests.length === 0).map((o) => `${o.document}: ${o.method} ${o.path}`)
  t.same(untested, [])
})

t.test('every operation hangar does not serve says why', async (t) => {
  const silent = operations.filter((o) => !o.served && o.note === '').map((o) => `${o.document}: ${o.method} ${o.path}`)
  t.same(silent, [])
  t.ok(operations.length >= 100, `the three documents' operations are all read (${operations.length})`)
  const known = new Set(operations.map((o) => `${o.method} ${o.path}`))
  t.same(Object.keys(NOTES).filter((key) => !known.has(key)), [], 'every note is about an operation of the documents')
})
