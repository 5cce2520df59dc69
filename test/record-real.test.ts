// Recording the real JS agent server (`langgraphjs dev`, test/fixtures/upstream, which requires an
// API key here) through `hangar record`: the official SDK, pointed at the recorder, runs
// recorded_agent (a tool call, an interrupt, then a subgraph) and resumes it; the client gets what
// the real server sends, and the recording holds each stream event by event — the tool call's
// chunks, the interrupt, the subgraph's namespaced events — and the state reads, with the key
// written nowhere. Replaying what is recorded: test/replay-real.test.ts.

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { CapturedExchange } from '../src/record/capture.js'
import { buildRecorder, EXCHANGES_FILE } from '../src/record/proxy.js'
import { startUpstream } from './upstream-server.js'

const KEY = 'real-upstream-secret-91c4'

t.test('the real agent server through the recorder: a tool call, an interrupt, a resume into a subgraph', async (t) => {
  const upstream = await startUpstream(t, { apiKey: KEY })
  const out = mkdtempSync(join(tmpdir(), 'hangar-recording-real-'))
  const recorder = buildRecorder({ upstream: upstream.url, out, apiKey: KEY, logLevel: 'silent' })
  t.teardown(() => recorder.close())
  await recorder.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client({ apiUrl: `http://127.0.0.1:${(recorder.server.address() as { port: number }).port}`, apiKey: null as never, callerOptions: { maxRetries: 0 } })
  const stream = async (thread: string, body: Record<string, unknown>) => {
    const parts: { event: string; data: any }[] = []
    // (The real server numbers its events; the SDK passes the id on. Event and data are compared; the recording keeps the id apart.)
    for await (const part of client.runs.stream(thread, 'recorded_agent', { ...body, streamMode: ['values', 'updates', 'messages-tuple'], streamSubgraphs: true })) parts.push({ event: part.event, data: part.data })
    return parts
  }
  const thread = (await client.threads.create()).thread_id
  const first = await stream(thread, { input: { messages: [{ role: 'human', content: 'Paris' }] } })
  t.ok(first.some((p) => p.event === 'updates' && '__interrupt__' in p.data), 'the client got the interrupt')
  const resumed = await stream(thread, { command: { resume: 'yes' } })
  t.ok(resumed.some((p) => p.event.includes('|')), 'and the subgraph events')
  const state = await client.threads.getState(thread)

  const exchanges: CapturedExchange[] = readFileSync(join(out, EXCHANGES_FILE), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  const runs = exchanges.filter((e) => e.request.path.endsWith('/runs/stream'))
  t.equal(runs.length, 2, 'both runs recorded')
  t.same(runs[0].response.events!.map((e) => ({ event: e.event, data: e.data })), first, 'the first stream, event for event')
  t.same(runs[1].response.events!.map((e) => ({ event: e.event, data: e.data })), resumed, 'the resumed stream')
  t.same(runs[1].request.body, { command: { resume: 'yes' }, stream_mode: ['values', 'updates', 'messages-tuple'], stream_subgraphs: true, assistant_id: 'recorded_agent' })
  const chunks = runs[0].response.events!.filter((e) => e.event === 'messages').flatMap((e) => (e.data as any)[0].tool_call_chunks ?? [])
  t.same(chunks.map((c: any) => c.name).filter(Boolean), ['get_weather'], "the tool call's chunks are in it")
  t.ok(runs[1].response.events!.some((e) => /^messages\|send:/.test(e.event)), "the subgraph's namespaced messages are in it")
  const read = exchanges.find((e) => e.request.method === 'GET' && e.request.path === `/threads/${thread}/state`)!
  t.same(read.response.body, state, 'the state read, as the client got it')
  t.ok(runs.every((r) => r.partial === undefined), 'whole')
  t.ok(runs[0].response.events!.every((e, i) => e.id === String(i)), "the server's event ids are kept")
  const written = readdirSync(out).map((f) => readFileSync(join(out, f), 'utf8')).join('\n')
  t.notOk(written.includes(KEY), 'the key is written nowhere')
})
