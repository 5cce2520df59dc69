// Reads tap's TAP output and prints "N passed, N failed[, N skipped]". A test is a subtest with no
// subtests of its own (the `t.test(...)` leaves, or a whole file that has none); a subtest that fails
// although none of its children did (a crash, a timeout) counts as one more failure. Exits 1 when
// anything failed or nothing ran.
import { readFileSync } from 'node:fs'

const lines = readFileSync(process.argv[2], 'utf8').split('\n')
const POINT = /^(\s*)(not )?ok \d+(?: - ([^#]*?))?\s*(?:#\s*(SKIP|TODO)\b.*?|#.*)?$/i
const SUBTEST = /^(\s*)# Subtest: /

let passed = 0
let failed = 0
let skipped = 0
// One frame per open subtest: its indentation and what its children did.
const stack = []
for (const line of lines) {
  const sub = SUBTEST.exec(line)
  if (sub) {
    if (stack.length) stack[stack.length - 1].hasSubtests = true
    stack.push({ indent: sub[1].length, hasSubtests: false, childFailed: false })
    continue
  }
  const point = POINT.exec(line)
  if (!point) continue
  const indent = point[1].length
  const frame = stack.length ? stack[stack.length - 1] : undefined
  // The result line of a subtest is at its "# Subtest:" line's indentation.
  if (!frame || indent !== frame.indent) continue
  stack.pop()
  const ok = !point[2]
  const skip = (point[4] ?? '').toUpperCase() === 'SKIP'
  const parent = stack.length ? stack[stack.length - 1] : undefined
  if (!ok && parent) parent.childFailed = true
  if (!frame.hasSubtests) {
    if (skip) skipped++
    else if (ok) passed++
    else failed++
  } else if (!ok && !frame.childFailed) {
    failed++
  }
}

const summary = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`
process.stdout.write(`${summary}\n`)
process.exit(failed > 0 || passed + failed === 0 ? 1 : 0)
