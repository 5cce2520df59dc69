// The tracing side with the official `langsmith` client pointed at a listening hangar: feedback
// updated and deleted, runs read (v1 and the v2 `runs.retrieve`), listed (with `select`) and
// filtered with the client's cursor pagination, projects, /info, and the `__feedback__` of `/wait`
// and `/join`. Runs are created with the official agent-server SDK. The v2 run query has its own
// file (tracing-query-v2.test.ts).

import t from 'tap'
import { all, finishedRun as run, JSON_KEY, serveTracing as serve, UNKNOWN, UUID } from './tracing-helpers.js'

/** Collects what the client logs with console.warn while `fn` runs. */
async function warnings(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = []
  const original = console.warn
  console.warn = (...args: unknown[]) => { seen.push(args.map(String).join(' ')) }
  try {
    await fn()
  } finally {
    console.warn = original
  }
  return seen
}

t.test('updateFeedback changes only what it names; deleteFeedback removes the record; an unknown id is a 404', async (t) => {
  const { agent, tracing, base } = await serve(t)
  const { runId } = await run(agent)
  const created = await tracing.createFeedback(runId, 'quality', { score: 0.5, value: 'ok', comment: 'first', correction: { text: 'a' } })
  await tracing.updateFeedback(created.id, { score: 1, comment: 'second' })
  const updated = await tracing.readFeedback(created.id)
  t.same([updated.score, updated.value, updated.comment, updated.correction], [1, 'ok', 'second', { text: 'a' }], 'value and correction kept')
  await tracing.updateFeedback(created.id, { value: null as unknown as string, correction: { text: 'b' } })
  const cleared = await tracing.readFeedback(created.id)
  t.same([cleared.score, cleared.value, cleared.correction], [1, null, { text: 'b' }], 'null clears a field')
  t.ok(Date.parse(String(cleared.modified_at)) >= Date.parse(String(cleared.created_at)))

  await tracing.deleteFeedback(created.id)
  t.same(await all(tracing.listFeedback({ runIds: [runId] })), [], 'gone from the list')
  const read = await fetch(`${base}/feedback/${created.id}`, { headers: JSON_KEY })
  t.equal(read.status, 404)
  t.same(await read.json(), { detail: `Feedback ${created.id} not found` })

  for (const method of ['PATCH', 'DELETE']) {
    const res = await fetch(`${base}/api/v1/feedback/${UNKNOWN}`, { method, headers: JSON_KEY, body: method === 'PATCH' ? '{"score":1}' : undefined })
    t.equal(res.status, 404, `${method} of an unknown id`)
    t.same(await res.json(), { detail: `Feedback ${UNKNOWN} not found` })
  }
  await t.rejects(tracing.updateFeedback(UNKNOWN, { score: 1 }), /404/, 'the client raises on the 404')
  await t.rejects(tracing.deleteFeedback(UNKNOWN), /404/)
  const bad = await fetch(`${base}/feedback/${runId}`, { method: 'PATCH', headers: JSON_KEY, body: '{"score":"high"}' })
  t.equal(bad.status, 422, 'a score that is no number or bool')
})

t.test('feedback carries its run\'s project as session_id, and who wrote it through the API as feedback_source.user_id', async (t) => {
  const { agent, tracing } = await serve(t)
  const { runId } = await run(agent, 'hello', ['thumbs'])
  const traced = await tracing.readRun(runId)
  t.match(traced.session_id, UUID)
  const viaApi = await tracing.createFeedback(runId, 'api_key', { score: 1, sessionId: traced.session_id })
  const read = await tracing.readFeedback(viaApi.id) as any
  t.equal(read.session_id, traced.session_id)
  t.match(read.feedback_source?.user_id, UUID, 'the caller the API key names')
  const [token] = await all(tracing.listPresignedFeedbackTokens(runId))
  const submitted = await (await fetch(token!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"score":0}' })).json() as any
  t.equal(submitted.session_id, traced.session_id)
  t.equal(submitted.feedback_source.user_id, null, 'a token submission has no user')
  await t.rejects(tracing.createFeedback(runId, 'elsewhere', { score: 1, sessionId: UNKNOWN }), /404/, 'a project that is not the run\'s')
})

t.test('runs.retrieve (v2) answers the fields selects names, in the run\'s project; readRun (v1) the whole run', async (t) => {
  const { agent, tracing, clock } = await serve(t)
  const { runId, threadId } = await run(agent, 'ping')
  clock.advance(1000)
  await tracing.createFeedback(runId, 'helpful', { score: 1, comment: 'yes', sessionId: (await tracing.readRun(runId)).session_id })
  const v1 = await tracing.readRun(runId)
  t.same([v1.name, v1.run_type, v1.status, v1.trace_id, v1.parent_run_id], ['agent', 'chain', 'success', runId, null])
  t.equal((v1.inputs as any).messages[0].content, 'ping')
  t.equal((v1.outputs as any).messages.at(-1).content, 'ping')
  t.equal(v1.extra?.metadata?.thread_id, threadId)
  t.match(v1.dotted_order, new RegExp(`^20250101T000000000000Z${runId}$`))

  const projectId = v1.session_id!
  const bare = await tracing.runs.retrieve(runId, { project_id: projectId })
  t.same(bare, { id: runId }, 'without selects, only the id')
  const full = await tracing.runs.retrieve(runId, {
    project_id: projectId, selects: ['ID', 'NAME', 'RUN_TYPE', 'STATUS', 'START_TIME', 'END_TIME', 'INPUTS', 'OUTPUTS', 'PROJECT_ID', 'TRACE_ID', 'THREAD_ID', 'IS_ROOT', 'FEEDBACK_STATS', 'ERROR'],
  })
  t.same([full.name, full.run_type, full.status, full.project_id, full.trace_id, full.thread_id, full.is_root], ['agent', 'CHAIN', 'SUCCESS', projectId, runId, threadId, true])
  t.equal(full.start_time, '2025-01-01T00:00:00.000Z')
  t.equal((full.outputs as any).messages.at(-1).content, 'ping')
  t.notOk('error' in full, 'no error on a run that succeeded')
  t.same(full.feedback_stats, { helpful: { n: 1, avg: 1, min: 1, max: 1, errors: 0, values: {}, comments: ['yes'], sources: ['api'], contains_thread_feedback: false } })

  t.equal(await tracing.runs.retrieve(runId, { project_id: UNKNOWN }).then(() => 200, (e) => e.status), 404, 'another project does not hold it')
  t.equal(await tracing.runs.retrieve(UNKNOWN, { project_id: projectId }).then(() => 200, (e) => e.status), 404, 'an unknown run')
})

t.test('a failed run reads as an error, in both versions', async (t) => {
  const { agent, tracing } = await serve(t)
  const thread = await agent.threads.create()
  const failed = await agent.runs.create(thread.thread_id, 'flaky', { input: { messages: [{ role: 'user', content: 'fail please' }] } })
  await agent.runs.join(thread.thread_id, failed.run_id)
  const v1 = await tracing.readRun(failed.run_id)
  t.equal(v1.status, 'error')
  t.match(v1.error, /^\w+: /)
  t.equal(v1.outputs, null)
  const v2 = await tracing.runs.retrieve(failed.run_id, { project_id: v1.session_id!, selects: ['STATUS', 'ERROR'] })
  t.same(v2, { status: 'ERROR', error: v1.error })
})

t.test('listRuns by id, by trace, by project name or id, and with filters', async (t) => {
  const { agent, tracing, clock } = await serve(t)
  const first = await run(agent, 'one')
  clock.advance(1000)
  const second = await run(agent, 'two')
  clock.advance(1000)
  const third = await run(agent, 'three')
  const project = await tracing.readProject({ projectName: 'default' })
  t.match(project.id, UUID)
  t.equal(project.name, 'default')
  t.equal((await tracing.readProject({ projectId: project.id })).name, 'default')

  const ids = (runs: { id: string }[]) => runs.map((r) => r.id)
  t.same(ids(await all(tracing.listRuns({ projectName: 'default' }))), [third.runId, second.runId, first.runId], 'newest first')
  t.same(ids(await all(tracing.listRuns({ projectId: project.id, order: 'asc' } as any))), [first.runId, second.runId, third.runId])
  t.same(ids(await all(tracing.listRuns({ id: [first.runId, third.runId] }))), [third.runId, first.runId])
  t.same(ids(await all(tracing.listRuns({ traceId: second.runId }))), [second.runId], 'every run is the root of its own trace')
  t.same(ids(await all(tracing.listRuns({ projectName: 'default', limit: 2 }))), [third.runId, second.runId])
  t.same(ids(await all(tracing.listRuns({ projectName: 'default', isRoot: false }))), [], 'no run has a parent')

  await tracing.createFeedback(second.runId, 'user_score', { score: 1, sessionId: project.id })
  await tracing.createFeedback(third.runId, 'user_score', { score: 0, sessionId: project.id })
  await tracing.createFeedback(third.runId, 'other', { score: 1, sessionId: project.id })
  const filtered = (filter: string) => all(tracing.listRuns({ projectId: project.id, filter })).then(ids)
  t.same(await filtered('and(eq(feedback_key, "user_score"), eq(feedback_score, 1))'), [second.runId], 'key and score of the same record')
  t.same(await filtered('eq(feedback_key, "user_score")'), [third.runId, second.runId])
  t.same(await filtered(`gt(start_time, "2025-01-01T00:00:00.500Z")`), [third.runId, second.runId])
  t.same(await filtered(`and(eq(status, "success"), neq(id, "${third.runId}"))`), [second.runId, first.runId])
  t.same(await filtered(`or(eq(id, "${first.runId}"), eq(metadata_key, "nothing"))`), [first.runId])
  t.same(await filtered(`and(eq(metadata_key, "thread_id"), eq(metadata_value, "${first.threadId}"))`), [first.runId], 'metadata key and value of one entry')
  t.same(await filtered('neq(error, null)'), [])
  t.same(ids(await all(tracing.listRuns({ projectId: project.id, traceFilter: 'eq(feedback_key, "other")' }))), [third.runId])
  t.same(ids(await all(tracing.listRuns({ projectId: project.id, error: false, runType: 'chain' }))), [third.runId, second.runId, first.runId])
  t.same(ids(await all(tracing.listRuns({ projectId: project.id, runType: 'llm' }))), [])
})

t.test('listRuns answers the fields its select names (the client always sends one), and those RunSchema requires', async (t) => {
  const { agent, tracing, base } = await serve(t)
  const { runId } = await run(agent)
  const required = ['app_path', 'dotted_order', 'id', 'name', 'run_type', 'session_id', 'status', 'trace_id']
  // The client adds start_time and end_time to every run it yields (undefined when not answered).
  const answered = (r: object) => Object.entries(r).filter(([, v]) => v !== undefined).map(([k]) => k).sort()
  const [few] = await all(tracing.listRuns({ projectName: 'default', select: ['inputs', 'outputs', 'share_token'] }))
  t.same(answered(few!), [...required, 'inputs', 'outputs'].sort(), 'a name hangar has no field for answers nothing')
  const [byDefault] = await all(tracing.listRuns({ projectName: 'default' }))
  t.equal(byDefault!.id, runId)
  t.ok(['inputs', 'outputs', 'extra', 'feedback_stats', 'start_time', 'end_time', 'parent_run_ids'].every((k) => k in byDefault!), 'the client\'s default select')
  t.notOk('thread_id' in byDefault! || 'in_dataset' in byDefault!, 'what the default select leaves out')
  const raw = await (await fetch(`${base}/runs/query`, { method: 'POST', headers: JSON_KEY, body: '{}' })).json() as any
  t.same(raw.runs[0], await tracing.readRun(runId), 'without select, the whole run, as readRun reads it')
})

t.test('listRuns follows the cursors page after page (more runs than one page holds)', async (t) => {
  const { agent, tracing, clock } = await serve(t)
  const made: string[] = []
  for (let i = 0; i < 103; i++) {
    made.unshift((await run(agent, `m${i}`)).runId)
    clock.advance(10)
  }
  const listed = (await all(tracing.listRuns({ projectName: 'default' }))).map((r) => r.id)
  t.equal(listed.length, 103, 'two pages: 100, then 3')
  t.same(listed, made, 'each run once, newest first')
})

t.test('POST /runs/query pages with limit and cursors; what it cannot serve it refuses, never a 5xx', async (t) => {
  const { agent, base } = await serve(t)
  for (let i = 0; i < 3; i++) await run(agent, `r${i}`)
  const query = (body: unknown) => fetch(`${base}/runs/query`, { method: 'POST', headers: JSON_KEY, body: JSON.stringify(body) })
  const one = await (await query({ limit: 2 })).json() as any
  t.equal(one.runs.length, 2)
  t.type(one.cursors.next, 'string')
  const two = await (await query({ limit: 2, cursor: one.cursors.next })).json() as any
  t.equal(two.runs.length, 1)
  t.equal(two.cursors.next, null, 'the last page has no next')
  t.equal(new Set([...one.runs, ...two.runs].map((r: any) => r.id)).size, 3)

  const refused = async (body: unknown, status: number, detail: RegExp) => {
    const res = await query(body)
    t.equal(res.status, status, JSON.stringify(body))
    const answer = await res.json() as any
    t.match(typeof answer.detail === 'string' ? answer.detail : JSON.stringify(answer.detail), detail)
  }
  await refused({ filter: 'eq(name, "agent"' }, 400, /^Invalid filter "eq\(name, \\"agent\\"": expected "," or "\)"/)
  await refused({ filter: 'search("hello")' }, 400, /^Unsupported filter: search\(\) is not one of/)
  await refused({ filter: 'gt(total_tokens, 5)' }, 400, /the field total_tokens is not one of/)
  await refused({ trace_filter: 'has(name, "x")' }, 400, /^Unsupported trace_filter: has\(\) applies to tags only/)
  await refused({ query: 'hello' }, 400, /Full-text search/)
  await refused({ cursor: 'bm90IGEgY3Vyc29y' }, 400, /^Invalid cursor/)
  await refused({ session: [UNKNOWN] }, 404, /not found/)
  await refused({ limit: 0 }, 422, /greater_than_equal/)
  await refused({ id: ['nope'] }, 422, /uuid_parsing/)
  t.equal((await fetch(`${base}/runs/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 401, 'needs a key')
})

t.test('GET /api/v2/runs/{id} refuses a missing project or an unknown select with 422', async (t) => {
  const { agent, base } = await serve(t)
  const { runId } = await run(agent)
  const missing = await fetch(`${base}/api/v2/runs/${runId}`, { headers: JSON_KEY })
  t.equal(missing.status, 422)
  t.same((await missing.json() as any).detail.map((e: any) => [e.type, e.loc]), [['missing', ['query', 'project_id']]])
  const select = await fetch(`${base}/api/v2/runs/${runId}?project_id=${UNKNOWN}&selects=NOPE`, { headers: JSON_KEY })
  t.equal(select.status, 422)
  t.equal((await fetch(`${base}/api/v2/runs/${runId}?project_id=${UNKNOWN}`)).status, 401, 'needs a key')
})

t.test('/api/v1/info answers without credentials; the client probing it logs no warning', async (t) => {
  const { agent, base, tracing } = await serve(t)
  const info = await fetch(`${base}/api/v1/info`)
  t.equal(info.status, 200)
  const body = await info.json() as any
  t.match(body.version, /^\d+\.\d+\.\d+$/)
  t.equal(body.batch_ingest_config.use_multipart_endpoint, false, 'hangar takes feedback at POST /feedback, not multipart')
  const { runId } = await run(agent)
  const seen = await warnings(async () => {
    await tracing.createFeedback(runId, 'k', { score: 1, traceId: runId, sessionId: (await tracing.readRun(runId)).session_id })
    await tracing.runs.retrieve(runId, { project_id: (await tracing.readRun(runId)).session_id! })
  })
  t.same(seen.filter((w) => /LANGSMITH|info/i.test(w)), [], 'no "failed to fetch info" nor "backend version" warning')
  t.equal((await all(tracing.listFeedback({ runIds: [runId] }))).length, 1, 'feedback with a trace id was posted directly')
  t.equal((await fetch(`${base}/info`)).status, 200, 'the root /info stays the agent server\'s')
  t.ok('hangar' in (await (await fetch(`${base}/info`)).json() as any))
})

t.test('/wait and /join of a run created with feedback_keys answer __feedback__, the URLs by key', async (t) => {
  const { agent, base } = await serve(t)
  // The SDK's runs.wait does not send feedback_keys (its runs.create and runs.stream do): /wait is called as any HTTP client would.
  const wait = async (path: string, assistant: string, keys?: string[], content = 'hi') => (await (await fetch(`${base}${path}`, {
    method: 'POST', headers: JSON_KEY, body: JSON.stringify({ assistant_id: assistant, input: { messages: [{ role: 'user', content }] }, feedback_keys: keys }),
  })).json()) as Record<string, any>
  const thread = await agent.threads.create()
  const waited = await wait(`/threads/${thread.thread_id}/runs/wait`, 'agent', ['up', 'down'])
  t.same(Object.keys(waited.__feedback__), ['up', 'down'])
  for (const url of Object.values<string>(waited.__feedback__)) t.match(url, new RegExp(`^${base}/api/v1/feedback/tokens/[0-9a-f-]{36}$`))
  t.equal(waited.messages.at(-1).content, 'hi', 'next to the values')
  const [latest] = await agent.runs.list(thread.thread_id)
  const joined = await agent.runs.join(thread.thread_id, latest!.run_id) as Record<string, any>
  t.same(joined.__feedback__, waited.__feedback__, 'joining later answers the same URLs')
  const posted = await fetch(waited.__feedback__.up, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"score":1}' })
  t.equal(posted.status, 200, 'the URLs work')

  const live = await run(agent, 'joined while it runs', ['k'])
  t.same(Object.keys(live.answer.__feedback__), ['k'], 'runs.create with feedbackKeys, then runs.join')
  t.same(Object.keys((await wait('/runs/wait', 'agent', ['k'])).__feedback__), ['k'], 'a stateless /runs/wait too')
  const plain = await run(agent)
  t.notOk('__feedback__' in plain.answer, 'none without feedback_keys')
  const failed = await wait(`/threads/${(await agent.threads.create()).thread_id}/runs/wait`, 'flaky', ['k'], 'fail please')
  t.ok('__error__' in failed)
  t.notOk('__feedback__' in failed, 'none for a failed run')
})
