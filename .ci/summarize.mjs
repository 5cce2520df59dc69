// Reads tap's TAP output from one or more logs (the suite's, the rehearsals') and prints one line
// per log, then the closing line over all of them: "N passed, N failed[, N skipped]". A test is a
// subtest with no subtests of its own (the `t.test(...)` leaves, or a whole file that has none); a
// subtest that fails although none of its children did (a crash, a timeout) counts as one more
// failure. Exits 1 when anything failed, or when any log ran no test at all (a step that silently
// ran nothing must not pass).
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'

const POINT = /^(\s*)(not )?ok \d+(?: - ([^#]*?))?\s*(?:#\s*(SKIP|TODO)\b.*?|#.*)?$/i
const SUBTEST = /^(\s*)# Subtest: /

/** @typedef {{ passed: number, failed: number, skipped: number }} Counts */

/**
 * Counts the tests of one TAP log.
 * @param {string} text
 * @returns {Counts}
 */
function count(text) {
  const counts = { passed: 0, failed: 0, skipped: 0 }
  // One frame per open subtest: its indentation and what its children did.
  /** @type {{ indent: number, hasSubtests: boolean, childFailed: boolean }[]} */
  const stack = []
  for (const line of text.split('\n')) {
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
      if (skip) counts.skipped++
      else if (ok) counts.passed++
      else counts.failed++
    } else if (!ok && !frame.childFailed) {
      counts.failed++
    }
  }
  return counts
}

/** @param {Counts} counts */
const line = ({ passed, failed, skipped }) => `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`

const logs = process.argv.slice(2)
if (logs.length === 0) {
  process.stderr.write('usage: node .ci/summarize.mjs <tap log>...\n')
  process.exit(2)
}
/** @type {Counts} */
const total = { passed: 0, failed: 0, skipped: 0 }
let empty = false
for (const log of logs) {
  const counts = count(readFileSync(log, 'utf8'))
  for (const key of /** @type {(keyof Counts)[]} */ (Object.keys(total))) total[key] += counts[key]
  const ran = counts.passed + counts.failed
  if (ran === 0) empty = true
  process.stdout.write(`ci: ${basename(log, '.log')} counted ${line(counts)}${ran === 0 ? ' (no test ran)' : ''}\n`)
}
process.stdout.write(`${line(total)}\n`)
process.exit(total.failed > 0 || empty ? 1 : 0)
