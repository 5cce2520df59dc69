// Stream modes a run accepts beyond the classic ones, as the real JS server 1.5.1 does: `tools`
// (tool-call progress; hangar's scripted graphs call no tools yet, so it adds nothing) is accepted,
// `lifecycle` is refused. Read with the official SDK and raw HTTP against a listening hangar.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { serveApp } from './helpers.js'

type Part = { event: string; data: unknown }

const ECHO = (content: string) => ({ input: { messages: [{ role: 'user', content }] } })

async function serve(t: Test) {
  const served = await serveApp(t)
  const client = new Client({ apiUrl: served.base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  return { ...served, client }
}

t.test('stream mode "tools" is accepted and, as on the real server for a graph without tools, adds nothing; "lifecycle" is refused', async (t) => {
  const { client, port } = await serve(t)
  const { thread_id } = await client.threads.create()
  const parts: Part[] = []
  for await (const part of client.runs.stream(thread_id, 'agent', { ...ECHO('hi'), streamMode: ['tools'] })) parts.push(part as Part)
  t.same(parts.map((p) => p.event), ['metadata'], 'metadata only, as the real JS server 1.5.1 sends for the echo graph')
  const withValues: Part[] = []
  for await (const part of client.runs.stream(thread_id, 'agent', { ...ECHO('hi'), streamMode: ['tools', 'values'] })) withValues.push(part as Part)
  t.same([...new Set(withValues.map((p) => p.event))], ['metadata', 'values'], 'the other modes as before, no tools events')
  const stateless: Part[] = []
  for await (const part of client.runs.stream(null, 'agent', { ...ECHO('hi'), streamMode: 'tools' as never })) stateless.push(part as Part)
  t.same(stateless.map((p) => p.event), ['metadata'], 'a stateless stream too, the mode given as a string')

  const refused = await fetch(`http://127.0.0.1:${port}/threads/${thread_id}/runs/stream`, {
    method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'agent', input: {}, stream_mode: ['lifecycle'] }),
  })
  t.equal(refused.status, 422)
  const body = (await refused.json()) as { detail: { msg: string }[] }
  t.match(body.detail, [{ type: 'literal_error', loc: ['body', 'stream_mode'], input: ['lifecycle'] }, { type: 'literal_error', input: 'lifecycle' }])
  t.match(body.detail[0].msg, /'custom' or 'tools'$/, 'the modes it accepts include tools')
})
