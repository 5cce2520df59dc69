// The shipped slow_agent, as a UI's loading state meets it: nothing for 2 s of hangar's clock,
// then a word every 150 ms.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, runClockUntil, serveApp, someoneWaitsOn } from './helpers.js'

t.test('slow_agent waits 2 s, then streams a word every 150 ms on hangar\'s clock', async (t) => {
  const { base, clock } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = await client.threads.create()
  const started = clock.now()
  const chunks: { at: number; text: string }[] = []
  const waiting = someoneWaitsOn(clock)
  const reading = (async () => {
    for await (const part of client.runs.stream(thread.thread_id, 'slow_agent', { input: { messages: [{ type: 'human', content: 'tea' }] }, streamMode: 'messages-tuple' })) {
      if (part.event === 'messages') chunks.push({ at: clock.now() - started, text: (part.data as unknown as [{ content: string }])[0].content })
    }
  })()
  await waiting
  let done = false
  void reading.finally(() => (done = true))
  await runClockUntil(clock, () => done, 'the answer ends', { stepMs: 50 })
  t.equal(chunks[0].at, 2000, 'the first word comes after the 2 s delay')
  t.equal(chunks[1].at - chunks[0].at, 150, 'then one every 150 ms')
  t.match(chunks.map((c) => c.text).join(''), /^Let me think about tea carefully\. .* That is all I have on tea for now\.$/)
  t.ok(chunks.length > 60, `a long answer (${chunks.length} chunks)`)
})
