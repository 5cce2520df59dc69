// Feedback URLs end to end: the official agent-server SDK streams a run with feedback keys, the
// URLs are called as a browser would (no credentials), and the official tracing SDK (`langsmith`,
// pointed at hangar with LANGSMITH_ENDPOINT) reads the feedback back.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { Client as LangSmith } from 'langsmith'
import type { Config } from '../src/config.js'
import { serveApp } from './helpers.js'

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

async function serve(t: Test, config: Partial<Config> = {}) {
  const { app, clock, base } = await serveApp(t, config)
  const agent = new Client({ apiUrl: base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  const saved = { endpoint: process.env.LANGSMITH_ENDPOINT, key: process.env.LANGSMITH_API_KEY }
  process.env.LANGSMITH_ENDPOINT = base
  process.env.LANGSMITH_API_KEY = 'k'
  const tracing = new LangSmith()
  process.env.LANGSMITH_ENDPOINT = saved.endpoint
  process.env.LANGSMITH_API_KEY = saved.key
  if (saved.endpoint === undefined) delete process.env.LANGSMITH_ENDPOINT
  if (saved.key === undefined) delete process.env.LANGSMITH_API_KEY
  return { app, clock, agent, tracing, base }
}

/** Streams one `agent` run with feedback keys; returns its run id and the feedback event's URLs. */
async function runWithFeedback(agent: Client, keys: string[], content = 'hello') {
  const thread = await agent.threads.create()
  const parts: { event: string; data: any }[] = []
  for await (const part of agent.runs.stream(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content }] }, feedbackKeys: keys })) {
    parts.push(part)
  }
  return { runId: parts[0].data.run_id as string, parts, urls: (parts.find((p) => p.event === 'feedback')?.data ?? null) as Record<string, string> | null }
}

t.test('a run with feedback keys hands out one URL per key, and both the URLs and the tracing SDK work', async (t) => {
  const { agent, tracing, base } = await serve(t)
  const { runId, parts, urls } = await runWithFeedback(agent, ['thumbs_up', 'thumbs_down'])
  t.equal(parts.at(-1)!.event, 'feedback', 'the feedback event comes after all graph output')
  t.same(Object.keys(urls!), ['thumbs_up', 'thumbs_down'])
  for (const url of Object.values(urls!)) t.match(url, new RegExp(`^${base}/api/v1/feedback/tokens/${UUID}$`))

  const posted = await fetch(urls!.thumbs_up, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ score: 1, comment: 'great answer', correction: { text: 'even better' }, metadata: { page: 'chat' } }),
  })
  t.equal(posted.status, 200, 'POST with no credentials: the token is the authorization')
  const record = await posted.json() as any
  t.same({ key: record.key, score: record.score, run_id: record.run_id, comment: record.comment }, { key: 'thumbs_up', score: 1, run_id: runId, comment: 'great answer' })
  t.same(record.feedback_source.metadata, { page: 'chat' })

  const correction = encodeURIComponent(JSON.stringify({ text: 'wrong tone' }))
  const got = await fetch(`${urls!.thumbs_down}?score=0&comment=not%20helpful&correction=${correction}`)
  t.equal(got.status, 200, 'GET with a query string works too')
  t.same((await got.json() as any).correction, { text: 'wrong tone' }, 'correction is URL-encoded JSON')

  const listed = []
  for await (const f of tracing.listFeedback({ runIds: [runId] })) listed.push(f)
  t.same(listed.map((f) => [f.key, f.score, f.comment, f.correction]).sort(), [
    ['thumbs_down', 0, 'not helpful', { text: 'wrong tone' }],
    ['thumbs_up', 1, 'great answer', { text: 'even better' }],
  ])
  const down = []
  for await (const f of tracing.listFeedback({ runIds: [runId], feedbackKeys: ['thumbs_down'] })) down.push(f)
  t.same(down.map((f) => f.key), ['thumbs_down'])
  t.same((await tracing.readFeedback(record.id)).id, record.id)

  const run = await tracing.readRun(runId)
  t.equal(run.id, runId)
  t.equal(run.status, 'success')
  t.same(run.feedback_stats, {
    thumbs_up: { n: 1, avg: 1, stdev: 0, errors: 0, values: {} },
    thumbs_down: { n: 1, avg: 0, stdev: 0, errors: 0, values: {} },
  })
  t.same((run.inputs as any).messages[0].content, 'hello')
  t.equal((run.outputs as any).messages.at(-1).content, 'hello')
})

t.test('a single-key model works the same: one key, score 1 or -1, each submission a record', async (t) => {
  const { agent, tracing } = await serve(t)
  const { runId, urls } = await runWithFeedback(agent, ['user_score'])
  t.same(Object.keys(urls!), ['user_score'])
  for (const score of [1, -1]) {
    const res = await fetch(urls!.user_score, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ score }) })
    t.equal(res.status, 200)
  }
  const run = await tracing.readRun(runId)
  t.same(run.feedback_stats, { user_score: { n: 2, avg: 0, stdev: 1, errors: 0, values: {} } }, 'the same token used twice makes two records')
})

t.test('tokens expire after HANGAR_FEEDBACK_TTL on the clock: then 410', async (t) => {
  const { agent, clock } = await serve(t, { feedbackTtl: 600 })
  const { urls } = await runWithFeedback(agent, ['k'])
  clock.advance(599_000)
  t.equal((await fetch(urls!.k, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"score":1}' })).status, 200)
  clock.advance(1000)
  const expired = await fetch(urls!.k, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"score":1}' })
  t.equal(expired.status, 410)
  t.same(await expired.json(), { detail: 'Feedback ingest token has expired' })
})

t.test('unknown, non-UUID and guessed tokens are refused; wrong types list each error', async (t) => {
  const { agent, base } = await serve(t)
  const { urls } = await runWithFeedback(agent, ['k'])
  const unknown = await fetch(`${base}/api/v1/feedback/tokens/5e5e5e5e-0000-4000-8000-000000000000`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"score":1}' })
  t.equal(unknown.status, 404)
  t.same(await unknown.json(), { detail: 'Feedback ingest token not found' })
  const bad = await fetch(`${base}/api/v1/feedback/tokens/not-a-token?score=1`)
  t.equal(bad.status, 422)
  t.same(await bad.json(), { detail: [{ type: 'uuid_parsing', loc: ['path', 'token'], msg: 'Input should be a valid UUID, invalid character: found `n` at 1', input: 'not-a-token', ctx: { error: 'invalid character: found `n` at 1' } }] })
  const types = await fetch(urls!.k, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ score: 'high', comment: 5 }) })
  t.equal(types.status, 422)
  const detail = (await types.json() as any).detail
  t.same(detail.map((e: any) => e.loc.join('.')), ['body.score.float', 'body.score.int', 'body.score.bool', 'body.comment'])
})

t.test('GET ignores metadata (not supported there) and still records the feedback', async (t) => {
  const { agent } = await serve(t)
  const { urls } = await runWithFeedback(agent, ['k'])
  const res = await fetch(`${urls!.k}?value=helpful&metadata=%7B%22a%22%3A1%7D`)
  t.equal(res.status, 200)
  const record = await res.json() as any
  t.equal(record.value, 'helpful')
  t.same(record.feedback_source.metadata, {}, 'the metadata parameter was ignored')
})

t.test('a failed run sends no feedback event and has no tokens', async (t) => {
  const { agent, tracing } = await serve(t)
  const thread = await agent.threads.create()
  const parts = []
  for await (const p of agent.runs.stream(thread.thread_id, 'flaky', { input: { messages: [{ role: 'user', content: 'fail please' }] }, feedbackKeys: ['k'] })) parts.push(p)
  t.notOk(parts.some((p) => p.event === 'feedback'))
  const tokens = []
  for await (const token of tracing.listPresignedFeedbackTokens((parts[0] as { data: { run_id: string } }).data.run_id)) tokens.push(token)
  t.same(tokens, [])
})

t.test('tokens can be created and listed through the tracing SDK, with an expiry of the caller\'s choice', async (t) => {
  const { agent, tracing, base } = await serve(t)
  const { runId } = await runWithFeedback(agent, ['auto'])
  const token = await tracing.createPresignedFeedbackToken(runId, 'manual', { expiration: { hours: 1 } })
  t.same(Object.keys(token), ['id', 'url', 'expires_at', 'feedback_key'])
  t.equal(token.url, `${base}/api/v1/feedback/tokens/${token.id}`)
  t.equal(token.expires_at, '2025-01-01T01:00:00.000Z')
  const listed = []
  for await (const x of tracing.listPresignedFeedbackTokens(runId)) listed.push(x)
  // The SDK's type omits feedback_key; the spec's FeedbackIngestTokenSchema has it.
  t.same(listed.map((x) => (x as unknown as { feedback_key: string }).feedback_key), ['auto', 'manual'])
  const unknownRun = await fetch(`${base}/feedback/tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
    body: JSON.stringify({ run_id: '7a7a7a7a-0000-4000-8000-000000000000', feedback_key: 'x' }),
  })
  t.equal(unknownRun.status, 404)
  t.equal((await fetch(`${base}/feedback/tokens?run_id=${runId}`)).status, 401, 'listing tokens needs a key')
})

t.test('feedback URLs follow the public base: HANGAR_PUBLIC_URL, else the forwarded host', async (t) => {
  const fixed = await serve(t, { publicUrl: 'https://agents.example.com' })
  const { urls } = await runWithFeedback(fixed.agent, ['k'])
  t.match(urls!.k, new RegExp(`^https://agents\\.example\\.com/api/v1/feedback/tokens/${UUID}$`))
  const proxied = await serve(t)
  const viaProxy = new Client({ apiUrl: proxied.base, apiKey: 'k', defaultHeaders: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'hangar.example.net:8443' } })
  const { urls: forwarded } = await runWithFeedback(viaProxy, ['k'])
  t.match(forwarded!.k, /^https:\/\/hangar\.example\.net:8443\/api\/v1\/feedback\/tokens\//)
})

t.test('a browser page on another origin may call a token URL (CORS)', async (t) => {
  const { agent } = await serve(t)
  const { urls } = await runWithFeedback(agent, ['k'])
  const preflight = await fetch(urls!.k, {
    method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), '*')
  t.match(preflight.headers.get('access-control-allow-methods'), /POST/)
  const res = await fetch(urls!.k, { method: 'POST', headers: { origin: 'https://app.example.com', 'content-type': 'application/json' }, body: '{"score":1}' })
  t.equal(res.headers.get('access-control-allow-origin'), '*')
})

t.test('feedback can also be created with an API key (POST /feedback) and read by id', async (t) => {
  const { agent, tracing } = await serve(t)
  const { runId } = await runWithFeedback(agent, [])
  const created = await tracing.createFeedback(runId, 'correctness', { score: 0.5, comment: 'ok' })
  t.equal(created.key, 'correctness')
  const read = await tracing.readFeedback(created.id)
  t.same({ score: read.score, comment: read.comment, source: read.feedback_source?.type }, { score: 0.5, comment: 'ok', source: 'api' })
})
