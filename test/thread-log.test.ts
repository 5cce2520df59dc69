// A thread's protocol log followed by many streams at once (a dashboard with several tabs, a chat
// page's two hooks): the followers one append wakes share one read of the log, and each still gets
// exactly the events after its own place, in order, whatever its filter.

import t, { type Test } from 'tap'
import { LogCursor, matches, ThreadLog, type EventFilter } from '../src/agent/thread-log.js'
import { Clock } from '../src/clock.js'
import { openDatabase } from '../src/store/db.js'
import { migrate } from '../src/store/migrations.js'
import { ThreadEventRepository } from '../src/store/thread-events.js'
import { ThreadRepository } from '../src/store/threads.js'
import { GroupCommit } from '../src/store/group-commit.js'
import { START, turns } from './helpers.js'

const ALL: EventFilter = { channels: ['values', 'custom', 'lifecycle'] }

/** `grouped`: the log knows of the connection's group commit, as the server's does (Services). */
function setUp(t: Test, { grouped = false } = {}) {
  const db = openDatabase(':memory:')
  migrate(db)
  t.teardown(() => db.close())
  const clock = Clock.manual(START)
  const threads = new ThreadRepository(db, clock)
  const events = new ThreadEventRepository(db)
  // Counts the log's page reads, the one query a follower makes when woken.
  let reads = 0
  const after = events.after.bind(events)
  events.after = (...args: Parameters<typeof events.after>) => (reads++, after(...args))
  const group = GroupCommit.of(db)!
  const commits = grouped ? { durable: () => group.durable(), onCommitted: (listener: () => void) => group.onSettled(listener) } : undefined
  const log = new ThreadLog({ events, threads, clock, commits })
  const thread = threads.create('', '00000000-0000-4000-8000-000000000001', {})
  const append = (method: string, data: unknown, namespace: string[] = []) => log.append('', thread, null, { method, namespace, data })
  return { log, thread, append, reads: () => reads, group }
}

/**
 * Follows the thread from `since` as the protocol's streams and sockets do (a LogCursor woken by
 * each append, one row per turn), collecting `[seq, method]` of what passes the filter until stopped.
 */
function follower(log: ThreadLog, threadId: string, filter: EventFilter, since: number) {
  const seen: Array<[number, string]> = []
  const cursor = new LogCursor(log, '', threadId, since)
  // One row per microtask, as they take turns: followers woken together stay at the same place.
  let queued = false
  const step = () => {
    queued = false
    if (cursor.waitForCommit(wake)) return
    const row = cursor.next()
    if (!row) return
    if (matches(filter, row.method, log.namespaceOf(row))) seen.push([row.seq, row.method])
    wake()
  }
  const wake = () => {
    if (queued) return
    queued = true
    queueMicrotask(step)
  }
  const unwatch = log.watch('', threadId, wake)
  wake()
  return { seen, stop: async () => unwatch() }
}

t.test('followers woken by one append share one read, and each gets what is after its own place', async (t) => {
  const { log, thread, append, reads } = setUp(t)
  const first = append('values', { n: 1 })
  append('custom', { n: 2 }, ['child:1'])

  const fromStart = Array.from({ length: 20 }, () => follower(log, thread.thread_id, ALL, 0))
  const fromSecond = follower(log, thread.thread_id, ALL, first)
  const valuesOnly = follower(log, thread.thread_id, { channels: ['values'] }, 0)
  const rootOnly = follower(log, thread.thread_id, { channels: ['values', 'custom'], namespaces: [[]], depth: 0 }, 0)
  await turns(20)
  t.same(fromStart[0].seen.map(([, m]) => m), ['values', 'custom'], 'what was logged before it came')
  t.same(fromSecond.seen.map(([, m]) => m), ['custom'], 'from its own place')

  const before = reads()
  const third = append('values', { n: 3 })
  await turns(20)
  t.equal(reads() - before, 2, '23 followers at the same place woke for the append: one read of the new page and one finding nothing after it served them all')
  for (const f of fromStart) t.same(f.seen.map(([seq]) => seq), [first, first + 1, third], 'each of them got every event once, in order')
  t.same(valuesOnly.seen.map(([seq]) => seq), [first, third], 'a filter still applies to a shared page')
  t.same(rootOnly.seen.map(([seq]) => seq), [first, third], 'and a namespace filter')

  // A follower that joins later, at an older place, reads its own page, not the shared one.
  const late = follower(log, thread.thread_id, ALL, 0)
  await turns(20)
  t.same(late.seen.map(([seq]) => seq), [first, first + 1, third], 'a late follower from the start gets the whole log')
  append('lifecycle', { event: 'completed' })
  await turns(20)
  t.same(late.seen.at(-1)?.[1], 'lifecycle', 'and the next append too')
  t.same(fromStart[7].seen.at(-1)?.[1], 'lifecycle')

  for (const f of [...fromStart, fromSecond, valuesOnly, rootOnly, late]) await f.stop()
  t.equal(log.followers, 0, 'nobody is left following')
})

t.test('a follower alone reads for itself; the shared page goes when the last follower does', async (t) => {
  const { log, thread, append, reads } = setUp(t)
  const one = follower(log, thread.thread_id, ALL, 0)
  await turns(10)
  append('values', { n: 1 })
  await turns(10)
  append('values', { n: 2 })
  await turns(10)
  t.same(one.seen.map(([, m]) => m), ['values', 'values'])
  await one.stop()
  const before = reads()
  const again = follower(log, thread.thread_id, ALL, 0)
  await turns(10)
  t.equal(reads() - before, 2, 'a new follower reads the log itself (its page, then nothing after it)')
  t.equal(again.seen.length, 2, 'and gets everything: nothing stale was kept for it')
  await again.stop()
})

t.test('followers of a thread a run is writing to wait for its writes to commit, then read them in one page together', async (t) => {
  const { log, thread, append, reads, group } = setUp(t, { grouped: true })
  append('values', { n: 0 })
  await turns(2)
  const followers = Array.from({ length: 20 }, () => follower(log, thread.thread_id, ALL, 0))
  await turns(10)
  t.same(followers[0].seen.map(([, m]) => m), ['values'], 'what was committed before they came')

  let woken = 0
  const unwatch = log.watch('', thread.thread_id, () => woken++)
  let before = { reads: 0, woken: 0 }

  // A run step woken by a clock move: its first write (committed at once, as a burst's first group
  // is), then its outputs a microtask or more apart, as they come through its generators.
  const step = async (from: number, onAppend: (n: number) => void = () => {}) => {
    await new Promise(setImmediate)
    const first = append('lifecycle', { event: 'running' })
    for (let i = 0; i < 20; i++) await Promise.resolve()
    before = { reads: reads(), woken }
    const seqs: number[] = []
    for (let n = from; n < from + 5; n++) {
      seqs.push(append('values', { n }))
      for (let i = 0; i < 3; i++) await Promise.resolve()
      onAppend(n)
    }
    return [first, ...seqs]
  }
  const seqs = await step(1)
  t.same(followers[0].seen.map(([seq]) => seq), [seqs[0] - 1, seqs[0]], 'the step\'s first write went out at once')
  t.ok(group.durable(), 'the writes after it are not committed yet')
  t.equal(woken - before.woken, 0, 'followers are not woken while the run writes')
  t.equal(followers[0].seen.length, 2, 'nobody is handed a row that is not on disk')
  t.equal(reads() - before.reads, 0, 'nobody reads the log while the run writes')
  await group.durable()
  await turns(10)
  t.equal(woken - before.woken, 1, 'they are woken once, when the writes committed')
  t.equal(reads() - before.reads, 2, 'then one read of the new page and one finding nothing after it serve all 20')
  for (const f of followers) t.same(f.seen.slice(1).map(([seq]) => seq), seqs, 'each got every row once, in order')
  unwatch()

  // One that starts following while the run writes gets what is committed, and the rest once it is.
  let latecomer: ReturnType<typeof follower> | undefined
  const next = await step(6, (n) => {
    if (n === 7) latecomer = follower(log, thread.thread_id, ALL, 0)
  })
  await Promise.resolve()
  const committed = [seqs[0] - 1, ...seqs, next[0]]
  t.same(latecomer!.seen.map(([seq]) => seq), committed, 'a follower that starts meanwhile gets only what is committed')
  await group.durable()
  await turns(10)
  t.same(latecomer!.seen.map(([seq]) => seq), [...committed, ...next.slice(1)], 'and the rest after the commit')
  t.same(followers[0].seen.map(([seq]) => seq), latecomer!.seen.map(([seq]) => seq))
  for (const f of [...followers, latecomer!]) await f.stop()
})
