// Bad input on the session protocol, and clients that go away: every frame gets its answer, no
// frame crashes the server, and a stream or socket that closes leaves no listener behind — while
// the run it watched goes on and stays readable from the thread's log.

import t from 'tap'
import { WebSocket } from 'ws'
import { API_KEY, runClockUntil, serveApp, until } from './helpers.js'
import { ALL_CHANNELS, command, readEvents, rootEnded } from './protocol-helpers.js'

const THREAD = '2b1f2e4c-8f4e-4c55-9d2e-1c3b5a7d9e01'

/** A socket on the thread with the API key in the query, and the frames it receives. */
async function socket(base: string, threadId = THREAD) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/threads/${threadId}/stream/events?api_key=${API_KEY}`)
  const frames: string[] = []
  ws.on('message', (data: Buffer) => frames.push(data.toString()))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return { ws, frames }
}

t.test('garbage frames each get the real answer; the socket and the server stay up', async (t) => {
  const { base } = await serveApp(t)
  const { ws, frames } = await socket(base)
  t.teardown(() => ws.close())
  const sent = ['not json', '[1,2]', 'null', '{"id":1}', '{"method":"x"}', '{"id":"1","method":"x"}', '']
  for (const frame of sent) ws.send(frame)
  ws.send(Buffer.from('binary, not json'), { binary: true })
  await until(() => frames.length === sent.length + 1, 'every frame answered')
  const invalidJson = '{"type":"error","id":null,"error":"invalid_argument","message":"Protocol commands must be valid JSON."}'
  const noIdMethod = '{"type":"error","id":null,"error":"invalid_argument","message":"Protocol commands must include an integer id and string method."}'
  t.same(frames, [invalidJson, noIdMethod, noIdMethod, noIdMethod, noIdMethod, noIdMethod, invalidJson, invalidJson])

  ws.send('{"id":2.5,"method":"run.start","params":5}')
  ws.send('{"id":3,"method":"state.get"}')
  await until(() => frames.length === sent.length + 3, 'the typed commands answered')
  t.same(JSON.parse(frames.at(-2)!), { type: 'error', id: 2.5, error: 'invalid_argument', message: 'run.start requires an assistant_id.' })
  t.match(JSON.parse(frames.at(-1)!), { type: 'error', id: 3, message: `Thread with ID ${THREAD} not found` })

  const health = await fetch(`${base}/ok`)
  t.equal(health.status, 200)
})

t.test('a frame over the size limit closes that socket with 1009; others are not affected', async (t) => {
  const { base } = await serveApp(t)
  const { ws } = await socket(base)
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)))
  ws.send(`{"id":1,"method":"x","params":{"pad":"${'x'.repeat(1024 * 1024)}"}}`)
  t.equal(await closed, 1009)
  const other = await socket(base)
  other.ws.send('{"id":1,"method":"agent.getTree"}')
  await until(() => other.frames.length === 1, 'the other socket answers')
  other.ws.close()
})

t.test('a socket closed mid-run leaves no listener; the run ends and a later stream reads all of it', async (t) => {
  const { base, clock, app } = await serveApp(t)
  const followers = () => app.emulator.threadLog.followers
  const before = followers()
  const { ws, frames } = await socket(base)
  ws.send(JSON.stringify({ id: 1, method: 'run.start', params: { assistant_id: 'pipeline', input: { messages: [{ type: 'human', content: 'go' }] } } }))
  ws.send(JSON.stringify({ id: 2, method: 'subscription.subscribe', params: { channels: ['lifecycle', 'custom'] } }))
  await until(() => frames.some((f) => f.includes('"id":2')), 'the subscribe is answered')
  t.equal(followers(), before + 1, 'the socket follows the thread')
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()))
  ws.close()
  await closed
  await until(() => followers() === before, 'the socket stopped following the thread')

  // The run did not depend on the socket: it goes on, and its events stay in the thread's log.
  await runClockUntil(clock, async () => (await command(base, THREAD, { id: 3, method: 'agent.getTree' })).body.result?.tree.status === 'completed', 'the run completes')
  const { events } = await readEvents(base, THREAD, { channels: ALL_CHANNELS }, rootEnded(1))
  t.same(events.filter((e) => e.method === 'custom').map((e) => (e.params.data.payload as { node: string }).node), ['research', 'draft', 'review'])
  t.same(events.map((e) => e.seq), Array.from({ length: events.length }, (_, i) => i + 1), 'the whole run, from seq 1')
  await until(() => followers() === before, 'the reading stream stopped following once closed')
})

t.test('an SSE stream the client aborts leaves no listener', async (t) => {
  const { base, app } = await serveApp(t)
  const before = app.emulator.threadLog.followers
  const controller = new AbortController()
  const res = await fetch(`${base}/threads/${THREAD}/stream/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY }, body: '{"channels":["values"]}', signal: controller.signal })
  t.equal(res.status, 200)
  await until(() => app.emulator.threadLog.followers === before + 1, 'the stream follows the thread (which does not exist yet)')
  controller.abort()
  await until(() => app.emulator.threadLog.followers === before, 'the aborted stream stopped following')
})
