// The exact bytes and headers of a run stream, read with a raw HTTP client.

import { request as httpRequest, type IncomingMessage } from 'node:http'
import { mock } from 'node:test'
import t, { type Test } from 'tap'
import type { Config } from '../src/config.js'
import { frame, HEARTBEAT } from '../src/sse/writer.js'
import { runClockUntil, serveApp, turns, until, waitsOnClock } from './helpers.js'

const serve = (t: Test, config: Partial<Config> = {}) => serveApp(t, config)

/** POSTs JSON and collects the raw response: status, headers, body text, and the chunks as they came. */
function post(port: number, path: string, body: unknown, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const req = httpRequest({ port, path, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k', ...headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }))
    })
    req.on('error', reject).end(JSON.stringify(body))
  })
}

t.test('a run stream is event, one compact data line and id per event, blank-line separated, with the run\'s locations', async (t) => {
  const { port } = await serve(t)
  const thread = JSON.parse((await post(port, '/threads', {})).text)
  const res = await post(port, `/threads/${thread.thread_id}/runs/stream`, {
    assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi you', id: 'msg-1' }] }, stream_mode: ['updates'],
  })
  t.equal(res.status, 200)
  t.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(res.headers['cache-control'], 'no-cache')
  const blocks = res.text.split('\n\n')
  t.equal(blocks.pop(), '', 'the stream ends after a blank line')
  const runId = JSON.parse(blocks[0].split('\n')[1].slice('data: '.length)).run_id
  t.equal(res.headers['content-location'], `/threads/${thread.thread_id}/runs/${runId}`)
  t.equal(res.headers.location, `/threads/${thread.thread_id}/runs/${runId}/stream`)
  t.equal(blocks[0], `event: metadata\ndata: {"run_id":"${runId}","attempt":1}\nid: 0`)
  for (const [i, block] of blocks.entries()) {
    const lines = block.split('\n')
    t.equal(lines.length, 3, `event ${i} has three lines`)
    t.match(lines[0], /^event: [a-z|/]+$/)
    t.match(lines[1], /^data: [^\n]+$/)
    t.equal(lines[2], `id: ${i}`)
    t.doesNotThrow(() => JSON.parse(lines[1].slice(6)))
  }
  const update = JSON.parse(blocks[1].split('\n')[1].slice(6))
  t.equal(blocks[1].split('\n')[0], 'event: updates')
  t.same(update.agent.messages.map((m: any) => m.content), ['hi you'])
  t.equal(blocks.length, 2, 'metadata and one update: nothing else was asked for')
})

t.test('frame() writes the fields in order and keeps data on one line whatever the data holds', async (t) => {
  t.equal(frame({ event: 'values', data: { text: 'two\nlines', n: 1 }, id: '7' }), 'event: values\ndata: {"text":"two\\nlines","n":1}\nid: 7\n\n')
  t.equal(frame({ event: 'end', data: null }), 'event: end\ndata: null\n\n')
})

t.test('a stateless stream has no ids and no Location to reconnect to, and the whole run', async (t) => {
  const { port } = await serve(t)
  const body = { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'x' }] }, stream_mode: ['values', 'updates'] }
  const res = await post(port, '/runs/stream', body)
  t.match(res.headers['content-location'], /^\/runs\/[0-9a-f-]{36}$/)
  t.equal(res.headers.location, undefined)
  t.notMatch(res.text, /^id: /m)
  t.match(res.text, /^event: metadata\ndata: /)
  // Its temporary thread, and the log its stream reads, are deleted as the run ends, in the same
  // group of writes as the run's last events: the stream still has every event.
  const thread = JSON.parse((await post(port, '/threads', {})).text)
  const onThread = await post(port, `/threads/${thread.thread_id}/runs/stream`, body)
  const events = (text: string) => text.split('\n\n').filter(Boolean).map((block) => block.split('\n')[0])
  t.same(events(res.text), events(onThread.text), 'the events of the same run on a thread')
  t.same(events(res.text), ['event: metadata', 'event: values', 'event: updates', 'event: values'])
  t.match(res.text.split('\n\n').at(-2), /"type":"ai"/, 'up to the answer')
})

t.test('HANGAR_SSE_END_EVENT adds a trailing end event', async (t) => {
  const { port } = await serve(t, { sseEndEvent: true })
  const thread = JSON.parse((await post(port, '/threads', {})).text)
  const res = await post(port, `/threads/${thread.thread_id}/runs/stream`, { assistant_id: 'agent', input: {} })
  t.match(res.text, /event: end\ndata: null\nid: \d+\n\n$/)
})

// A run's head leaves with its first events, in one write to the socket. A stream whose run has
// nothing to send yet (here: it starts in a minute, on a clock that does not move) still gets its
// head at once: a client waiting for the response must not wait for the first event.
t.test('a stream whose run waits sends its head at once, before any event', async (t) => {
  const { port } = await serve(t)
  const thread = JSON.parse((await post(port, '/threads', {})).text)
  const chunks: string[] = []
  let head: IncomingMessage | undefined
  const req = httpRequest({ port, path: `/threads/${thread.thread_id}/runs/stream`, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' } }, (res) => {
    head = res
    res.setEncoding('utf8').on('data', (chunk) => chunks.push(chunk))
  })
  req.on('error', () => {}).end(JSON.stringify({ assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] }, after_seconds: 60 }))
  t.teardown(() => req.destroy())
  await until(() => head !== undefined, 'the head of the stream arrives')
  t.equal(head!.statusCode, 200)
  t.equal(head!.headers['content-type'], 'text/event-stream; charset=utf-8')
  await turns(20)
  t.same(chunks, [], 'no event yet: the run waits for the clock')
})

t.test('heartbeat comments go out on the interval while a run waits', async (t) => {
  mock.timers.enable({ apis: ['setInterval'] })
  t.teardown(() => mock.timers.reset())
  const { app, port } = await serve(t, { heartbeatMs: 5000 })
  const thread = JSON.parse((await post(port, '/threads', {})).text)
  const chunks: string[] = []
  const done = new Promise<void>((resolve) => {
    const req = httpRequest({ port, path: `/threads/${thread.thread_id}/runs/stream`, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' } }, (res) => {
      res.setEncoding('utf8').on('data', (chunk) => {
        chunks.push(chunk)
        if (chunk.startsWith('event: metadata')) {
          mock.timers.tick(5000)
          mock.timers.tick(5000)
        }
      }).on('end', () => resolve())
    })
    req.end(JSON.stringify({ assistant_id: 'pipeline', input: {}, stream_mode: ['custom'] }))
  })
  // the pipeline waits on the clock; heartbeats flow meanwhile; then let it finish
  const clock = app.clock
  await until(() => chunks.filter((c) => c === HEARTBEAT).length >= 2, 'two heartbeat comments arrive while the run waits')
  await runClockUntil(clock, () => !waitsOnClock(clock) && chunks.join('').includes('"progress":100'), 'the pipeline reports progress 100 and stops waiting on the clock')
  await done
  t.equal(chunks.filter((c) => c === HEARTBEAT).length, 2, 'one comment per interval')
  t.equal(HEARTBEAT, ': heartbeat\n\n')
})

t.test('a busy thread answers the real 422 body (a string detail), not a 500', async (t) => {
  const { port } = await serve(t)
  const thread = JSON.parse((await post(port, '/threads', {})).text)
  await post(port, `/threads/${thread.thread_id}/runs`, { assistant_id: 'pipeline', input: {} })
  const res = await post(port, `/threads/${thread.thread_id}/runs`, { assistant_id: 'agent', input: {} })
  t.equal(res.status, 422)
  t.same(JSON.parse(res.text), { detail: 'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.' })
})
