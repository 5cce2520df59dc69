// Feedback token abuse: what someone without a valid token, or with a token for something else,
// can do with the feedback URLs — nothing that records feedback where it should not.

import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { clientFor, makeApp } from './helpers.js'

const FEEDBACK_TTL_S = 3 * 3600

async function withRun(t: Test) {
  const { app, clock } = await makeApp(t)
  const api = clientFor(app)
  const runOnce = async (content: string, keys: string[]) => {
    const thread = (await api.post('/threads', {})).body
    const res = await app.inject({
      method: 'POST', url: `/threads/${thread.thread_id}/runs/stream`, headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content }] }, feedback_keys: keys },
    })
    const frames = res.body.split('\n\n').filter(Boolean).map((frame) => ({
      event: /^event: (.*)$/m.exec(frame)![1], data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]),
    }))
    const urls = frames.find((f) => f.event === 'feedback')!.data as Record<string, string>
    return { threadId: thread.thread_id as string, runId: frames[0].data.run_id as string, urls }
  }
  const records = async (runId: string) => (await api.get(`/api/v1/feedback?run=${runId}`)).body as any[]
  const submit = (url: string, body: unknown) => app.inject({ method: 'POST', url: new URL(url).pathname, payload: body as object })
  return { app, clock, api, runOnce, records, submit }
}

t.test('guessed token ids are refused and record nothing', async (t) => {
  const { runOnce, records, submit } = await withRun(t)
  const { runId, urls } = await runOnce('hello', ['helpful'])
  const real = new URL(urls.helpful).pathname.split('/').at(-1)!
  const base = urls.helpful.slice(0, -real.length)
  await fc.assert(fc.asyncProperty(fc.uuid(), async (guess) => {
    fc.pre(guess !== real)
    const res = await submit(base + guess, { score: 1 })
    return res.statusCode === 404 && res.json().detail === 'Feedback ingest token not found'
  }), { seed: 7, numRuns: 200 })
  // Near misses: one hex digit changed anywhere in the real token.
  for (let i = 0; i < real.length; i++) {
    if (real[i] === '-') continue
    const flipped = real.slice(0, i) + (real[i] === '0' ? '1' : '0') + real.slice(i + 1)
    t.equal((await submit(base + flipped, { score: 1 })).statusCode, 404, `digit ${i} changed`)
  }
  t.same(await records(runId), [], 'no guess recorded anything')
})

t.test('an expired token is refused from the instant it expires, and records nothing', async (t) => {
  const { clock, runOnce, records, submit } = await withRun(t)
  const { runId, urls } = await runOnce('hello', ['helpful'])
  clock.advance(FEEDBACK_TTL_S * 1000 - 1)
  t.equal((await submit(urls.helpful, { score: 1 })).statusCode, 200, 'one millisecond before: accepted')
  clock.advance(1)
  const late = await submit(urls.helpful, { score: 0 })
  t.equal(late.statusCode, 410)
  t.same(late.json(), { detail: 'Feedback ingest token has expired' })
  clock.advance(-60_000)
  t.equal((await submit(urls.helpful, { score: 0 })).statusCode, 200, 'expiry follows the clock, both ways')
  t.same((await records(runId)).map((f) => f.score).sort(), [0, 1], 'only the accepted submissions')
})

t.test('a token records only on its own run and under its own key, whatever the body claims', async (t) => {
  const { runOnce, records, submit } = await withRun(t)
  const first = await runOnce('first', ['helpful'])
  const second = await runOnce('second', ['accurate'])
  const res = await submit(first.urls.helpful, { score: 1, run_id: second.runId, key: 'accurate', feedback_key: 'accurate', trace_id: second.runId })
  t.equal(res.statusCode, 200)
  t.same([res.json().run_id, res.json().key], [first.runId, 'helpful'], 'the token decides the run and the key')
  t.same(await records(second.runId), [], 'the other run got nothing')
  t.same((await records(first.runId)).map((f) => f.key), ['helpful'])
})

t.test('a token of a run that no longer exists is refused', async (t) => {
  const { api, runOnce, records, submit } = await withRun(t)
  const { threadId, runId, urls } = await runOnce('hello', ['helpful'])
  t.equal((await api.delete(`/threads/${threadId}`)).status, 204, 'the thread and its runs are deleted')
  const res = await submit(urls.helpful, { score: 1 })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { detail: 'Feedback ingest token not found' })
  t.same(await records(runId), [])
})

t.test('tokens cannot be minted for a run that does not exist, and token lists do not mix runs', async (t) => {
  const { api, runOnce } = await withRun(t)
  const first = await runOnce('first', ['helpful'])
  const second = await runOnce('second', ['accurate'])
  const unknown = randomUUID()
  const minted = await api.post('/api/v1/feedback/tokens', { run_id: unknown, feedback_key: 'helpful' })
  t.equal(minted.status, 404)
  t.same(minted.body, { detail: `Run ${unknown} not found` })
  const listed = (await api.get(`/api/v1/feedback/tokens?run_id=${second.runId}`)).body as any[]
  t.same(listed.map((token) => token.feedback_key), ['accurate'])
  t.notOk(listed.some((token) => Object.values(first.urls).includes(token.url)), 'the first run\'s tokens are not listed for the second')
})

t.test('malformed submissions are refused before anything is recorded', async (t) => {
  const { runOnce, records, submit, app } = await withRun(t)
  const { runId, urls } = await runOnce('hello', ['helpful'])
  const path = new URL(urls.helpful).pathname
  for (const payload of ['{"score": "lots"}', '{"score": 1', '[1,2]', '{"comment": 5}', '{"correction": 1}', '{"metadata": "x"}']) {
    const res = await app.inject({ method: 'POST', url: path, payload, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 422, payload)
  }
  t.equal((await submit(urls.helpful.replace(/[0-9a-f-]+$/, 'not-a-uuid'), { score: 1 })).statusCode, 422, 'a token that is not a UUID')
  t.same(await records(runId), [], 'nothing recorded')
})
