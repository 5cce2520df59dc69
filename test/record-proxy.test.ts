// `hangar record` as a proxy: what a client does through it reaches the upstream agent server and
// comes back unchanged, and each exchange lands in the recording — streams event by event with their
// times, bodies as JSON — with no secret written: not the key the recorder adds, not the client's
// own, not a body field that looks like one. An upstream that requires a key, one that drops a
// stream midway and one that does not answer are recorded as they happened. The upstream here is
// hangar itself (fast and deterministic); recording the real agent server is test/record-real.test.ts.

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { buildRecorder, EXCHANGES_FILE, MANIFEST_FILE } from '../src/record/proxy.js'
import { recordOptions } from '../src/record/cli.js'
import type { CapturedExchange } from '../src/record/capture.js'
import { serveApp, someoneWaitsOn, until } from './helpers.js'

const UPSTREAM_KEY = 'upstream-secret-7f3a9c'

async function recorder(t: Parameters<typeof serveApp>[0], upstream: string, apiKey?: string) {
  const out = mkdtempSync(join(tmpdir(), 'hangar-recording-'))
  const app = buildRecorder({ upstream, out, logLevel: 'silent', ...(apiKey ? { apiKey } : {}) })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const exchanges = (): CapturedExchange[] => readFileSync(join(out, EXCHANGES_FILE), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  /** Every file of the recording, as text. */
  const files = () => readdirSync(out).map((f) => readFileSync(join(out, f), 'utf8')).join('\n')
  return { url, out, exchanges, files, close: () => app.close() }
}

t.test('a streamed run through the recorder: the client gets the upstream stream; the recording has every event, and no key', async (t) => {
  const upstream = await serveApp(t, { apiKeys: [UPSTREAM_KEY] })
  const rec = await recorder(t, upstream.base, UPSTREAM_KEY)
  // The client sends no key: the recorder adds the one it was given.
  const client = new Client({ apiUrl: rec.url, apiKey: null as never, defaultHeaders: {} })
  const thread = await client.threads.create({ metadata: { team: 'web', api_key: 'in-a-body-too' } })
  const received: { event: string; data: unknown }[] = []
  for await (const part of client.runs.stream(thread.thread_id, 'agent', { input: { messages: [{ type: 'human', content: 'hello there' }] }, streamMode: ['values', 'messages-tuple'] })) {
    received.push({ event: part.event, data: part.data })
  }
  t.ok(received.some((e) => e.event === 'messages'), 'the client got the stream')
  const run = rec.exchanges().find((e) => e.request.path.endsWith('/runs/stream'))!
  t.equal(run.request.method, 'POST')
  t.same(run.request.body, { input: { messages: [{ type: 'human', content: 'hello there' }] }, stream_mode: ['values', 'messages-tuple'], assistant_id: 'agent' })
  t.equal(run.response.status, 200)
  t.match(run.response.content_type, /text\/event-stream/)
  // (The run's metadata repeats the thread's, whose secret-looking field is blanked in the recording.)
  const blanked = JSON.parse(JSON.stringify(received).replaceAll('"in-a-body-too"', '"[redacted]"'))
  t.same(run.response.events!.map((e) => ({ event: e.event, data: e.data })), blanked, 'every event the client got, in order')
  t.ok(run.response.events!.every((e, i, all) => e.at_ms >= 0 && (i === 0 || e.at_ms >= all[i - 1].at_ms)), 'each with the time it came')
  t.equal(run.partial, undefined, 'whole')
  const created = rec.exchanges().find((e) => e.request.path === '/threads' && e.request.method === 'POST')!
  t.same((created.request.body as any).metadata, { team: 'web', api_key: '[redacted]' }, 'a secret-looking body field is blanked')
  t.same((created.response.body as any).metadata.api_key, '[redacted]', 'in the answer too')
  t.notOk(rec.files().includes(UPSTREAM_KEY), 'the key is written nowhere')
  t.notOk(rec.files().includes('in-a-body-too'))
  const manifest = JSON.parse(readFileSync(join(rec.out, MANIFEST_FILE), 'utf8'))
  t.match(manifest, { format: 'hangar-recording/1', upstream: upstream.base })
})

t.test('an upstream that requires a key: without one its 401 is passed on and recorded; the client\'s own key is forwarded and not written', async (t) => {
  const upstream = await serveApp(t, { apiKeys: [UPSTREAM_KEY] })
  const rec = await recorder(t, upstream.base)
  const refused = await fetch(`${rec.url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  const direct = await fetch(`${upstream.base}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(refused.status, direct.status, 'the status the upstream answers')
  t.same(await refused.json(), await direct.json(), 'and its body')
  const client = new Client({ apiUrl: rec.url, apiKey: UPSTREAM_KEY })
  const thread = await client.threads.create()
  t.ok(thread.thread_id)
  const statuses = rec.exchanges().map((e) => e.response.status)
  t.same(statuses, [direct.status, 200], 'both recorded')
  t.notOk(rec.files().includes(UPSTREAM_KEY), "the client's key is written nowhere")
})

t.test('an upstream that drops a stream midway: the client sees it cut, the recording keeps what came, marked partial', async (t) => {
  const upstream = await serveApp(t)
  const rec = await recorder(t, upstream.base)
  const thread = await (await fetch(`${rec.url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, body: '{}' })).json()
  const waiting = someoneWaitsOn(upstream.clock)
  // A plain client that does not rejoin (the SDK would join the run again through the recorder).
  const response = await fetch(`${rec.url}/threads/${thread.thread_id}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
    body: JSON.stringify({ assistant_id: 'slow_agent', input: { messages: [{ type: 'human', content: 'owls' }] }, stream_mode: 'values' }),
  })
  t.equal(response.status, 200)
  // slow_agent thinks for 2 s of the upstream's (manual) clock: the stream is open, its first events sent.
  await waiting
  const reader = response.body!.getReader()
  let text = ''
  while (!text.includes('event: values')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the stream ended before its first values: ${text}`)
    text += new TextDecoder().decode(value)
  }
  upstream.app.server.closeAllConnections()
  const cut = await (async () => {
    for (;;) {
      const { done } = await reader.read()
      if (done) return 'ended'
    }
  })().catch((error: Error) => error.message)
  t.equal(cut, 'terminated', 'the client sees the response cut, as the upstream cut it')
  await until(() => rec.exchanges().some((e) => e.request.path.endsWith('/runs/stream')), 'the exchange is written')
  const dropped = rec.exchanges().find((e) => e.request.path.endsWith('/runs/stream'))!
  t.match(dropped.partial, { reason: /the upstream dropped the response/ })
  t.same(dropped.response.events!.map((e) => e.event), ['metadata', 'values'], 'what came before the drop')
  await rec.close()
  t.same(readdirSync(join(rec.out, 'replay')), [], 'a run whose stream was cut is not compiled into a replay (a replay of it is a miss, not half an answer)')
})

t.test('an upstream that does not answer: 502 with one clear line, recorded', async (t) => {
  const upstream = await serveApp(t)
  const base = upstream.base
  await upstream.app.close()
  const rec = await recorder(t, base)
  const res = await fetch(`${rec.url}/assistants/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(res.status, 502)
  t.match(await res.json(), { detail: new RegExp(`^hangar record: the upstream ${base.replace(/[.]/g, '\\.')} did not answer: `) })
  t.match(rec.exchanges()[0], { request: { path: '/assistants/search' }, response: { status: 502 }, partial: { reason: /did not answer/ } })
})

t.test('the options: upstream and out are required, the URL must be http(s), a bad port is one line', async (t) => {
  const fails = (argv: string[], message: RegExp) => t.throws(() => recordOptions(argv, {}), { message })
  fails([], /--upstream is required/)
  fails(['--upstream', 'http://x'], /--out is required/)
  fails(['--upstream', 'ftp://x', '--out', 'd'], /--upstream: an http or https URL/)
  fails(['--upstream', 'nope', '--out', 'd'], /--upstream: not a URL/)
  fails(['--upstream', 'http://x', '--out', 'd', '--port', '99999'], /--port: an integer from 0 to 65535/)
  fails(['--upstream', 'http://x', '--out', 'd', '--bogus'], /Unknown option '--bogus'.*hangar record --help/)
  t.same(recordOptions(['--upstream', 'http://x:2024', '--out', 'd'], { HANGAR_UPSTREAM_API_KEY: 'k' }), { upstream: 'http://x:2024', out: 'd', port: 8123, host: '127.0.0.1', apiKey: 'k' })
  t.equal(recordOptions(['--help'], {}), 'help')
})
