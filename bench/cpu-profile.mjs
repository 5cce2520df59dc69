// Reads a V8 .cpuprofile (written by `node --cpu-prof`) and sums self time by package or source
// file, or by function: where a process spent its CPU.
//   node bench/cpu-profile.mjs <file.cpuprofile> [--by package|file|function|caller] [--top 20] [--skip-ms 0]

import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

/**
 * What this reads of a V8 CPU profile (the Profiler domain's Profile): the call tree's nodes, and
 * the node each sample fell in with the time since the previous sample (µs).
 * @typedef {{ nodes: ProfileNode[], samples: number[], timeDeltas: number[] }} Profile
 * @typedef {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }} ProfileNode
 */

/**
 * Where a frame's code lives: an npm package, one of hangar's files (dist/…), node's own, or V8.
 * @param {string} url
 */
export function ownerOf(url) {
  if (!url) return '(V8 / native)'
  if (url.startsWith('node:')) return 'node: core'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]
  const own = /\/(dist|src|bench)\/(.+)$/.exec(url)
  if (own) return `hangar ${own[1]}/${own[2]}`
  return url
}

/**
 * [{ name, ms, share }] sorted by self time, largest first. `by`: 'package' (npm package, hangar
 * file, node core), 'file', 'function', or 'caller': like 'package', but time spent in node's own
 * code (module loading, streams) counts for the nearest package or hangar file up the stack.
 * @param {Profile} profile
 * @param {string} [by]
 * @param {{ skipMs?: number }} [options] leave out the first `skipMs` of the profile
 * @returns {{ name: string, ms: number, share: number }[]}
 */
export function summarize(profile, by = 'package', { skipMs = 0 } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  /** @type {Map<number, ProfileNode>} */
  const parent = new Map()
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n)
  /** @param {ProfileNode} node */
  const callerOf = (node) => {
    for (let /** @type {ProfileNode | undefined} */ n = node; n; n = parent.get(n.id)) {
      const { url } = n.callFrame
      if (url && !url.startsWith('node:')) return ownerOf(url)
    }
    return node.callFrame.url ? 'node: core (no package on the stack)' : `(${node.callFrame.functionName})`
  }
  /** @type {Map<string, number>} */
  const self = new Map()
  const { samples, timeDeltas } = profile
  let total = 0
  let elapsed = 0
  for (let i = 0; i < samples.length; i++) {
    const node = byId.get(samples[i])
    const dt = (timeDeltas[i + 1] ?? 0) / 1000
    elapsed += timeDeltas[i] / 1000
    if (!node || elapsed < skipMs) continue
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)') continue
    const key = by === 'function'
      ? `${functionName || '(anonymous)'} ${ownerOf(url)}${url ? `:${lineNumber + 1}` : ''}`
      : by === 'file' ? (url || `(${functionName})`)
      : by === 'caller' ? callerOf(node)
      : (url ? ownerOf(url) : `(${functionName})`)
    self.set(key, (self.get(key) ?? 0) + dt)
    total += dt
  }
  return [...self].map(([name, ms]) => ({ name, ms, share: ms / total })).sort((a, b) => b.ms - a.ms)
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { by: { type: 'string', default: 'package' }, top: { type: 'string', default: '20' }, 'skip-ms': { type: 'string', default: '0' } } })
  const rows = summarize(JSON.parse(readFileSync(positionals[0], 'utf8')), values.by, { skipMs: Number(values['skip-ms']) })
  for (const row of rows.slice(0, Number(values.top))) console.log(`${row.ms.toFixed(1).padStart(9)} ms ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.name}`)
}
