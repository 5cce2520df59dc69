// Preloaded into hangar by the memory benchmark (`node --expose-gc --import bench/gc-on-signal.mjs`):
// on SIGWINCH (a signal hangar does not stop on), a full garbage collection, then one line on
// stderr with what V8's heap holds after it: the live data, not the garbage awaiting collection.
// `beforeKiB` is the heap's size just before that collection, as the RSS reading taken a moment
// earlier found it.
process.on('SIGWINCH', () => {
  const gc = /** @type {() => void} */ (globalThis.gc)
  const beforeKiB = Math.round(process.memoryUsage().heapTotal / 1024)
  gc()
  const { heapUsed, heapTotal } = process.memoryUsage()
  process.stderr.write(`${JSON.stringify({ benchHeap: { usedKiB: Math.round(heapUsed / 1024), totalKiB: Math.round(heapTotal / 1024), beforeKiB } })}\n`)
})
