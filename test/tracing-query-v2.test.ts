// The v2 run query (`POST /api/v2/runs/query`) with the official `langsmith` client's
// `runs.queryV2` over a listening hangar: its cursor paginator followed page after page, the
// fields `selects` names, filters, structural fields, the start-time window and its defaults,
// the feedback-time window, and what it refuses. Runs are made with the official agent-server SDK.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { dockerDeployment } from './helpers.js'
import { all, finishedRun, JSON_KEY, serveTracing, UNKNOWN } from './tracing-helpers.js'

const ids = (items: { id?: string }[]) => items.map((r) => r.id)
const DAY = 24 * 60 * 60 * 1000

t.test('queryV2 follows next_cursor across pages of page_size, newest first, each run once', async (t) => {
  const { agent, tracing, clock } = await serveTracing(t)
  const made: string[] = []
  for (let i = 0; i < 6; i++) {
    made.unshift((await finishedRun(agent, `m${i}`)).runId)
    clock.advance(1000)
  }
  // Two runs that start at the same instant: the later one is the newer.
  made.unshift((await finishedRun(agent, 'same instant 1')).runId)
  made.unshift((await finishedRun(agent, 'same instant 2')).runId)
  const project = (await tracing.readProject({ projectName: 'default' })).id

  t.same(ids(await all(tracing.runs.queryV2({ project_ids: [project], page_size: 3 }))), made, 'every run, newest first')
  const first = await tracing.runs.queryV2({ project_ids: [project], page_size: 3 })
  const sizes: number[] = []
  const seen: string[] = []
  for await (const page of first.iterPages()) {
    sizes.push(page.items.length)
    seen.push(...ids(page.items) as string[])
    t.same(page.items.map((r) => Object.keys(r)), page.items.map(() => ['id']), 'only the id without selects')
  }
  t.same(sizes, [3, 3, 2], 'pages of three, then the rest')
  t.same(seen, made)
  t.same(ids(await all(tracing.runs.queryV2({ project_ids: [project] }))), made, 'one page of 100 by default')
  t.same(ids(await all(tracing.runs.queryV2({ project_ids: [project], page_size: 1 }))), made, 'pages of one')
})

t.test('the last page answers next_cursor null; a cursor goes on from where its page ended', async (t) => {
  const { agent, tracing, base, clock } = await serveTracing(t)
  const made: string[] = []
  for (let i = 0; i < 3; i++) {
    made.unshift((await finishedRun(agent, `r${i}`)).runId)
    clock.advance(10)
  }
  const project = (await tracing.readProject({ projectName: 'default' })).id
  const query = async (body: unknown) => (await fetch(`${base}/api/v2/runs/query`, { method: 'POST', headers: JSON_KEY, body: JSON.stringify(body) })).json() as Promise<any>
  const one = await query({ project_ids: [project], page_size: 2 })
  t.same(ids(one.items), made.slice(0, 2))
  t.type(one.next_cursor, 'string')
  const two = await query({ project_ids: [project], page_size: 2, cursor: one.next_cursor })
  t.same(two, { items: [{ id: made[2] }], next_cursor: null })
  const exact = await query({ project_ids: [project], page_size: 3 })
  t.equal(exact.next_cursor, null, 'no next page when the page holds the last run exactly')
  // A run started after the first page was read comes first again, and the cursor still goes on from its place.
  const newer = (await finishedRun(agent, 'newer')).runId
  t.same(ids((await query({ project_ids: [project], page_size: 2, cursor: one.next_cursor })).items), [made[2]])
  t.same(ids((await query({ project_ids: [project], page_size: 1 })).items), [newer])
})

t.test('selects names the fields of each item, as runs.retrieve answers them', async (t) => {
  const { agent, tracing, clock } = await serveTracing(t)
  const a = await finishedRun(agent, 'alpha')
  clock.advance(1500)
  const thread = await agent.threads.create()
  const failed = await agent.runs.create(thread.thread_id, 'flaky', { input: { messages: [{ role: 'user', content: 'fail please' }] } })
  await agent.runs.join(thread.thread_id, failed.run_id)
  const project = (await tracing.readProject({ projectName: 'default' })).id
  await tracing.createFeedback(a.runId, 'helpful', { score: 1, comment: 'yes', sessionId: project })

  const few = await all(tracing.runs.queryV2({ project_ids: [project], selects: ['NAME', 'STATUS', 'START_TIME'] }))
  t.same(few, [
    { name: 'flaky', status: 'ERROR', start_time: '2025-01-01T00:00:01.500Z' },
    { name: 'agent', status: 'SUCCESS', start_time: '2025-01-01T00:00:00.000Z' },
  ], 'exactly the fields named, no id unless named')

  const selects = ['ID', 'NAME', 'RUN_TYPE', 'STATUS', 'ERROR', 'INPUTS', 'OUTPUTS', 'PROJECT_ID', 'TRACE_ID', 'THREAD_ID', 'IS_ROOT', 'FEEDBACK_STATS', 'LATENCY_SECONDS', 'MANIFEST'] as const
  const items = await all(tracing.runs.queryV2({ project_ids: [project], selects: [...selects] }))
  t.same(ids(items), [failed.run_id, a.runId])
  for (const item of items) t.same(item, await tracing.runs.retrieve(item.id!, { project_id: project, selects: [...selects] }), `${item.name}: as runs.retrieve shows it`)
  t.same(items[1]!.feedback_stats, { helpful: { n: 1, avg: 1, min: 1, max: 1, errors: 0, values: {}, comments: ['yes'], sources: ['api'], contains_thread_feedback: false } })
  t.equal(items[1]!.thread_id, a.threadId)
  t.notOk('manifest' in items[1]!, 'a field that does not apply is left out')
  t.match(items[0]!.error, /^\w+: /)
})

t.test('filters, trace filters and the structural fields narrow the runs', async (t) => {
  const { agent, tracing, clock } = await serveTracing(t)
  const first = await finishedRun(agent, 'one')
  clock.advance(1000)
  const second = await finishedRun(agent, 'two')
  clock.advance(1000)
  const third = await finishedRun(agent, 'three')
  clock.advance(1000)
  const thread = await agent.threads.create()
  const failed = (await agent.runs.create(thread.thread_id, 'flaky', { input: { messages: [{ role: 'user', content: 'fail please' }] } })).run_id
  await agent.runs.join(thread.thread_id, failed)
  const project = (await tracing.readProject({ projectName: 'default' })).id
  await tracing.createFeedback(second.runId, 'user_score', { score: 1, sessionId: project })
  await tracing.createFeedback(third.runId, 'user_score', { score: 0, sessionId: project })

  const query = async (params: Record<string, unknown>) => ids(await all(tracing.runs.queryV2({ project_ids: [project], page_size: 2, ...params })))
  t.same(await query({ filter: 'and(eq(feedback_key, "user_score"), eq(feedback_score, 1))' }), [second.runId], 'key and score of one record')
  t.same(await query({ filter: 'eq(feedback_key, "user_score")' }), [third.runId, second.runId])
  t.same(await query({ filter: 'eq(status, "error")' }), [failed])
  t.same(await query({ filter: 'eq(name, "agent")', trace_filter: `neq(id, "${third.runId}")` }), [second.runId, first.runId], 'the trace filter sees the run itself: its own root')
  t.same(await query({ tree_filter: 'eq(name, "flaky")' }), [failed])
  t.same(await query({ has_error: true }), [failed])
  t.same(await query({ has_error: false }), [third.runId, second.runId, first.runId])
  t.same(await query({ ids: [first.runId, failed, UNKNOWN] }), [failed, first.runId])
  t.same(await query({ trace_id: second.runId }), [second.runId], 'every run is the root of its own trace')
  t.same(await query({ run_type: 'CHAIN', is_root: true, include_subtree_usage: true }), [failed, third.runId, second.runId, first.runId])
  t.same(await query({ run_type: 'LLM' }), [], 'every run is a chain')
  t.same(await query({ is_root: false }), [], 'no run has a parent')
  t.same(await query({ reference_examples: [UNKNOWN] }), [], 'no run is linked to an example')
  t.same(await query({ filter: null, selects: null }), [failed, third.runId, second.runId, first.runId], 'a null is no filter')
})

t.test('the start-time window: min_start_time and max_start_time, a day ago to now by default', async (t) => {
  const { agent, tracing, clock } = await serveTracing(t)
  const old = await finishedRun(agent, 'old')
  clock.advance(DAY + 1)
  const recent = await finishedRun(agent, 'recent')
  clock.advance(60_000)
  const latest = await finishedRun(agent, 'latest')
  const project = (await tracing.readProject({ projectName: 'default' })).id
  const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString()
  const query = async (params: Record<string, unknown>) => ids(await all(tracing.runs.queryV2({ project_ids: [project], ...params })))

  t.same(await query({}), [latest.runId, recent.runId], 'runs older than a day are left out by default; one started now is in')
  t.same(await query({ min_start_time: at(0) }), [latest.runId, recent.runId, old.runId])
  t.same(await query({ min_start_time: at(0), max_start_time: at(DAY + 1) }), [recent.runId, old.runId], 'both bounds are included')
  t.same(await query({ min_start_time: at(DAY + 2), max_start_time: at(DAY + 60_001) }), [latest.runId])
  t.same(await query({ max_start_time: at(DAY) }), [], 'max alone: from a day before now')
  clock.advance(DAY)
  t.same(await query({}), [latest.runId], 'a day later, the last run started a day ago exactly: the bound is included')
  clock.advance(1)
  t.same(await query({}), [], 'a moment later, nothing started in the last day')
})

t.test('min/max_feedback_modified_at bound the feedback the filter\'s feedback conditions see', async (t) => {
  const { agent, tracing, clock, base } = await serveTracing(t)
  const a = await finishedRun(agent, 'a')
  const b = await finishedRun(agent, 'b')
  const project = (await tracing.readProject({ projectName: 'default' })).id
  await tracing.createFeedback(a.runId, 'score', { score: 1, sessionId: project })
  clock.advance(10_000)
  await tracing.createFeedback(b.runId, 'score', { score: 1, sessionId: project })
  const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString()
  const query = async (params: Record<string, unknown>) => ids(await all(tracing.runs.queryV2({ project_ids: [project], filter: 'eq(feedback_key, "score")', ...params })))

  t.same(await query({}), [b.runId, a.runId])
  t.same(await query({ min_feedback_modified_at: at(5_000) }), [b.runId], 'the lower bound is included')
  t.same(await query({ max_feedback_modified_at: at(10_000) }), [a.runId], 'the upper bound is left out')
  t.same(await query({ filter: 'eq(status, "success")', trace_filter: 'eq(feedback_key, "score")', min_feedback_modified_at: at(10_000) }), [b.runId])
  const res = await fetch(`${base}/api/v2/runs/query`, { method: 'POST', headers: JSON_KEY, body: JSON.stringify({ project_ids: [project], filter: 'eq(status, "success")', min_feedback_modified_at: at(0) }) })
  t.equal(res.status, 400, 'a feedback bound with no feedback condition')
  t.match((await res.json() as any).detail, /feedback conditions .* there is none/)
})

t.test('a deployment\'s project holds its runs only; several projects page together', async (t) => {
  const { agent, tracing, base, clock } = await serveTracing(t, { revisionSpeed: 'instant' })
  const created = await fetch(`${base}/v2/deployments`, { method: 'POST', headers: JSON_KEY, body: JSON.stringify(dockerDeployment({ name: 'deployed' })) })
  t.equal(created.status, 201)
  const deployment = await created.json() as { url: string }
  const there = await finishedRun(new Client({ apiUrl: deployment.url, apiKey: 'k', callerOptions: { maxRetries: 0 } }), 'there')
  clock.advance(1000)
  const here = await finishedRun(agent, 'here')
  const root = (await tracing.readProject({ projectName: 'default' })).id
  const other = (await tracing.readProject({ projectName: 'deployed' })).id
  t.same(ids(await all(tracing.runs.queryV2({ project_ids: [other] }))), [there.runId])
  t.same(ids(await all(tracing.runs.queryV2({ project_ids: [root] }))), [here.runId])
  const both = await all(tracing.runs.queryV2({ project_ids: [root, other], page_size: 1, selects: ['ID', 'PROJECT_ID'] }))
  t.same(both, [{ id: here.runId, project_id: root }, { id: there.runId, project_id: other }], 'newest first across projects')
})

t.test('POST /api/v2/runs/query refuses what it cannot serve: 400, 404, 406, 422, 501 — never a 5xx it did not mean', async (t) => {
  const { agent, tracing, base } = await serveTracing(t)
  await finishedRun(agent)
  const project = (await tracing.readProject({ projectName: 'default' })).id
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/v2/runs/query`, { method: 'POST', headers: { ...JSON_KEY, ...headers }, body: JSON.stringify(body) })
  const refused = async (body: unknown, status: number, detail: RegExp, headers: Record<string, string> = {}) => {
    const res = await post(body, headers)
    t.equal(res.status, status, JSON.stringify(body))
    const answer = await res.json() as any
    t.match(typeof answer.detail === 'string' ? answer.detail : JSON.stringify(answer.detail), detail)
    return answer
  }
  await refused({}, 400, /^`project_ids` is required unless `reference_dataset_id` is set\.$/)
  await refused({ project_ids: [] }, 400, /`project_ids` is required/)
  await refused({ project_ids: [project], reference_dataset_id: UNKNOWN }, 400, /^Set exactly one of `project_ids` and `reference_dataset_id`\.$/)
  await refused({ reference_dataset_id: UNKNOWN }, 404, new RegExp(`^Dataset ${UNKNOWN} not found$`))
  await refused({ project_ids: [project, UNKNOWN] }, 404, new RegExp(`^Project ${UNKNOWN} not found$`))
  await refused({ project_ids: [project], filter: 'eq(name, "agent"' }, 400, /^Invalid filter /)
  await refused({ project_ids: [project], tree_filter: 'search("x")' }, 400, /^Unsupported tree_filter: search\(\)/)
  await refused({ project_ids: [project], cursor: 'bm90IGEgY3Vyc29y' }, 400, /^Invalid cursor/)
  await refused({ project_ids: [project], min_start_time: '2025-01-02T00:00:00Z', max_start_time: '2025-01-01T00:00:00Z' }, 400, /is after/)

  const invalid = async (body: unknown, expected: [string, (string | number)[]][]) => {
    const answer = await refused(body, 422, /./)
    t.same(answer.detail.map((e: any) => [e.type, e.loc]), expected, JSON.stringify(body))
  }
  await invalid({ project_ids: [project], page_size: 0 }, [['greater_than_equal', ['body', 'page_size']]])
  await invalid({ project_ids: [project], page_size: 1001 }, [['less_than_equal', ['body', 'page_size']]])
  await invalid({ project_ids: ['nope'] }, [['uuid_parsing', ['body', 'project_ids', 0]]])
  await invalid({ project_ids: [project], selects: ['ID', 'NOPE'] }, [['literal_error', ['body', 'selects', 1]]])
  await invalid({ project_ids: [project], run_type: 'chain' }, [['literal_error', ['body', 'run_type']]])
  await invalid({ project_ids: [project], min_start_time: 'yesterday' }, [['datetime_from_date_parsing', ['body', 'min_start_time']]])
  await invalid({ project_ids: [project], ai_search: '' }, [['string_too_short', ['body', 'ai_search']]])
  await invalid([], [['model_attributes_type', ['body']]])

  await refused({ project_ids: [project], ai_search: 'runs that used tools' }, 406, /Accept: text\/event-stream/)
  await refused({ project_ids: [project], ai_search: 'runs that used tools' }, 501, /not available offline/, { accept: 'text/event-stream' })
  await refused({ project_ids: [project] }, 406, /JSON only/, { accept: 'text/event-stream' })
  t.equal((await post({ project_ids: [project] }, { accept: 'text/event-stream, application/json;q=0.5' })).status, 200, 'JSON is fine when it is acceptable too')
  t.equal((await post({ project_ids: [project] }, { accept: '*/*' })).status, 200)
  t.equal((await fetch(`${base}/api/v2/runs/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 401, 'needs a key')
})

t.test('the official client sees the refusals as their statuses', async (t) => {
  const { agent, tracing } = await serveTracing(t)
  await finishedRun(agent)
  const project = (await tracing.readProject({ projectName: 'default' })).id
  const status = (pending: Promise<unknown>) => pending.then(() => 200, (e) => e.status)
  t.equal(await status(all(tracing.runs.queryV2({ project_ids: [UNKNOWN] }))), 404)
  t.equal(await status(all(tracing.runs.queryV2({ project_ids: [project], page_size: 0 }))), 422)
  t.equal(await status(all(tracing.runs.queryV2({ project_ids: [project], ai_search: 'tools' }))), 406, 'ai_search without the stream Accept')
  // A 5xx is retried by the client unless told not to: this one would never change.
  t.equal(await status(all(tracing.runs.queryV2({ project_ids: [project], ai_search: 'tools', Accept: 'text/event-stream' }, { maxRetries: 0 }))), 501)
  t.equal(await status(tracing.runs.streaming.queryV2({ project_ids: [project] })), 406, 'the streamed form is not served')
})
