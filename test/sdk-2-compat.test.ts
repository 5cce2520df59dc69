// The deprecated @langchain/langgraph-sdk 2.0.0 (installed as `langgraph-sdk-2`), against a real
// listening hangar. The tests use the SDK's `latest` line (1.x); 2.0.0 is kept for the users who
// installed it while it was the newest release: a `^2.0.0` range never moves to 1.x, so those
// projects stay on 2.0.0 until someone edits their package.json. Its streaming code differs from
// 1.x (no idle watchdog, no run-status check before reconnecting), so the core flows are checked
// with it too: a stream, a wait, a background run joined live and replayed, a cut stream resumed,
// and feedback URLs read back with the tracing SDK.

import t, { type Test } from 'tap'
import { Client } from 'langgraph-sdk-2'
import { Client as LangSmith } from 'langsmith'
import { runClockUntil, serveApp, someoneWaitsOn } from './helpers.js'

type Part = { event: string; data: any; id?: string }

async function serve(t: Test) {
  const { app, clock, base } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  return { app, clock, base, client }
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of stream) out.push(item)
  return out
}

const say = (content: string) => ({ messages: [{ role: 'user', content }] })

t.test('2.0.0: runs.stream yields metadata, values, updates and token chunks, with ids from 0', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const parts = await collect(client.runs.stream(thread.thread_id, 'agent', {
    input: say('hello old friend'), streamMode: ['updates', 'values', 'messages-tuple'],
  })) as Part[]
  t.equal(parts[0].event, 'metadata')
  t.same(parts.map((p) => p.id), parts.map((_, i) => String(i)), 'ids count from 0')
  t.same([...new Set(parts.map((p) => p.event))], ['metadata', 'values', 'messages', 'updates'])
  t.equal(parts.filter((p) => p.event === 'messages').map((p) => p.data[0].content).join(''), 'hello old friend', 'the chunks concatenate to the reply')
  const state = await client.threads.getState(thread.thread_id)
  t.same(state.values, parts.at(-1)!.data, 'the last event is the final state')
})

t.test('2.0.0: runs.wait answers the final values, and throws the error a failing graph reports', async (t) => {
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const values = await client.runs.wait(thread.thread_id, 'agent', { input: say('ping') }) as any
  t.equal(values.messages.at(-1).content, 'ping')
  await t.rejects(client.runs.wait(thread.thread_id, 'flaky', { input: say('please fail now') }), {
    message: 'FlakyError: The flaky graph failed on request: please fail now',
  })
})

t.test('2.0.0: a background run is joined live and waited on; joinStream replays after a last event id', async (t) => {
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const waiting = someoneWaitsOn(clock)
  const run = await client.runs.create(thread.thread_id, 'pipeline', { input: say('topic'), streamMode: ['custom', 'values'] })
  await waiting
  const joined = collect(client.runs.joinStream(thread.thread_id, run.run_id)) as Promise<Part[]>
  const result = client.runs.join(thread.thread_id, run.run_id)
  await runClockUntil(clock, async () => (await client.runs.get(thread.thread_id, run.run_id)).status === 'success', 'the background run succeeds')
  const parts = await joined
  t.equal(parts[0].event, 'metadata', 'joined from the start')
  t.equal(parts.filter((p) => p.event === 'custom').length, 3, 'one progress event per node')
  t.same(await result, parts.at(-1)!.data, 'join answers the final values')
  const replayed = await collect(client.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: '1' })) as Part[]
  t.same(replayed, parts.slice(2), 'the events after id 1, the same as live')
})

t.test('2.0.0: a stream cut after 2 events is resumed from its last event id, every event once', async (t) => {
  const { base, client } = await serve(t)
  const fault = await fetch(`${base}/_hangar/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'POST', path: '/threads/*/runs/stream', drop_after_events: 2, times: 1 }),
  })
  t.equal(fault.status, 201)
  const thread = await client.threads.create()
  const parts = await collect(client.runs.stream(thread.thread_id, 'agent', { input: say('one two three four five'), streamMode: ['values', 'messages-tuple'] })) as Part[]
  t.same(parts.map((p) => p.id), parts.map((_, i) => String(i)), 'ids 0.. without a gap or a repeat')
  t.equal(parts.filter((p) => p.event === 'metadata').length, 1)
  const journal = await (await fetch(`${base}/_hangar/requests?path=**/stream`)).json() as any
  t.same(journal.requests.map((r: any) => [r.method, r.request_headers['last-event-id']]).reverse(), [['POST', undefined], ['GET', '1']],
    'the cut stream, then a reconnection that says where it stopped')
  t.same((await client.threads.getState(thread.thread_id)).values, parts.at(-1)!.data)
})

t.test('2.0.0: feedback keys hand out URLs; feedback sent to them reads back through the tracing SDK', async (t) => {
  const { base, client } = await serve(t)
  const thread = await client.threads.create()
  const parts = await collect(client.runs.stream(thread.thread_id, 'agent', { input: say('rate me'), feedbackKeys: ['thumbs'] })) as Part[]
  t.equal(parts.at(-1)!.event, 'feedback', 'the feedback event comes last')
  const url = parts.at(-1)!.data.thumbs as string
  t.ok(url.startsWith(`${base}/api/v1/feedback/tokens/`))
  const sent = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ score: 1, comment: 'still works' }) })
  t.equal(sent.status, 200)
  const tracing = new LangSmith({ apiUrl: base, apiKey: 'k' })
  const listed = []
  for await (const feedback of tracing.listFeedback({ runIds: [parts[0].data.run_id] })) listed.push([feedback.key, feedback.score, feedback.comment])
  t.same(listed, [['thumbs', 1, 'still works']])
})
