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
import { START, turns } from './helpers.js'

const ALL: EventFilter = { channels: ['values', 'custom', 'lifecycle'] }

function setUp(t: Test) {
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
  const log = new ThreadLog({ events, threads, clock })
  const thread = threads.create('', '00000000-0000-4000-8000-000000000001', {})
  const append = (method: string, data: unknown, namespace: string[] = []) => log.append('', thread, null, { method, namespace, data })
  return { log, thread, append, reads: () => reads }
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
