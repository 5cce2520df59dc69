// A run's streams read its events a page at a time (RunExecutor.pages) from the run's log, on the
// connection that writes it. What a user relies on: a stream is never handed an event before it is
// on disk, and it gets every event, in order. A second connection on the database file is the
// disk's witness.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { Clock } from '../src/clock.js'
import { defaultConfig } from '../src/config.js'
import { buildServices } from '../src/services.js'
import { START } from './helpers.js'

t.test('a stream is handed only events on disk, every one in order, though the run writes on while it reads', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-run-pages-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'h.db')
  const services = buildServices({ ...defaultConfig(), db: path, logLevel: 'silent' }, Clock.manual(START))
  const witness = new Database(path, { readonly: true })
  t.teardown(async () => {
    witness.close()
    await services.stateful.shutdown()
    services.stateful.close()
  })
  const onDisk = witness.prepare<[number], number>('SELECT idx FROM run_events WHERE run_seq = ? ORDER BY idx').pluck()
  const context = { scope: '', headers: {}, publicBase: 'http://hangar.test' }
  for (const [i, graph] of ['agent', 'tools_agent', 'supervisor'].entries()) {
    const thread = services.threads.create('', `00000000-0000-4000-8000-00000000000${i}`, {})
    const run = services.runRequests.create(context, thread.thread_id, {
      assistant_id: graph,
      input: { messages: [{ type: 'human', content: 'weather in Paris?' }] },
      stream_mode: ['values', 'updates', 'messages-tuple', 'debug', 'tasks', 'checkpoints'],
    } as never)
    const handed: number[] = []
    const early: number[] = []
    for await (const page of services.executor.pages(run, -1, new AbortController().signal)) {
      const stored = new Set(onDisk.all(run.seq))
      for (const event of page) {
        handed.push(Number(event.id))
        if (!stored.has(Number(event.id))) early.push(Number(event.id))
      }
    }
    t.same(early, [], `${graph}: no event was handed out before it was on disk`)
    t.ok(handed.length > 5, `${graph}: ${handed.length} events`)
    t.same(handed, onDisk.all(run.seq), `${graph}: every event the run logged, in order`)
  }
})
