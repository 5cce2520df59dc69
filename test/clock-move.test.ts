// POST /_hangar/clock answers once what the move woke has taken its first steps: a client that awaits
// the move over HTTP finds, on the streams it has open, the events the move caused. The answer is
// written after them, so it cannot arrive first (before, it was written first and each of those
// events came ~0.3 ms after it). Over a real socket with the official SDK; nothing sleeps.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { serveApp, until } from './helpers.js'

type Part = { event: string; data: any }

const moveClock = async (t: Test, base: string, ms: number) => {
  const response = await fetch(`${base}/_hangar/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'advance', ms }) })
  t.equal(response.status, 200, 'the clock moved')
  return response.json()
}

t.test('when the clock move answers, the streams of the runs it woke have their next events', async (t) => {
  const { base } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  const { thread_id } = await client.threads.create()
  const parts: Part[] = []
  const controller = new AbortController()
  const reading = (async () => {
    const stream = client.runs.stream(thread_id, 'pipeline', {
      input: { messages: [{ role: 'user', content: 'tides' }] },
      streamMode: ['custom', 'values'],
      signal: controller.signal,
    })
    for await (const part of stream) parts.push(part as Part)
  })().catch((error: Error) => {
    if (!controller.signal.aborted) throw error
  })
  t.teardown(() => controller.abort())

  // The run waits in its first node (`research`, one second on the clock) once its input is in.
  await until(() => parts.some((p) => p.event === 'values'), 'the run reached its first node')
  const before = parts.length
  t.notOk(parts.some((p) => p.event === 'custom'), 'nothing of the node yet')

  await moveClock(t, base, 1000)
  // No waiting here: what the move caused has arrived by the time its answer has.
  const after = parts.slice(before)
  t.same(after.find((p) => p.event === 'custom')?.data, { node: 'research', progress: 33, status: 'Researching: tides' }, 'the node\'s progress event')
  t.same(after.find((p) => p.event === 'values')?.data?.stages, ['research'], 'and the state after the node')

  await moveClock(t, base, 1000)
  t.ok(parts.slice(before).some((p) => p.event === 'custom' && p.data.node === 'draft'), 'the next move: the next node\'s event, there with its answer')
  controller.abort()
  await reading
})
