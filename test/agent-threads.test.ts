import t from 'tap'
import { clientFor, makeApp } from './helpers.js'

const AGENT_ID = 'fe096781-5601-53d2-b2f6-0d3403f7e9ca' // uuid5 of "agent" (FACTS.md namespace)

t.test('the agent server answers 403 without an API key, and HANGAR_AUTH=off admits everyone', async (t) => {
  const { app } = await makeApp(t)
  const res = await app.inject({ method: 'POST', url: '/threads', payload: {} })
  t.equal(res.statusCode, 403)
  t.same(res.json(), { detail: 'Missing authentication headers' })
  t.equal((await app.inject({ method: 'GET', url: '/info' })).statusCode, 200, '/info needs no key')
  const restricted = await makeApp(t, { config: { apiKeys: ['right'] } })
  const wrong = await restricted.app.inject({ method: 'POST', url: '/threads', payload: {}, headers: { 'x-api-key': 'wrong' } })
  t.same(wrong.json(), { detail: 'Invalid API key' })
  const open = await makeApp(t, { config: { auth: 'off' } })
  t.equal((await open.app.inject({ method: 'POST', url: '/threads', payload: {} })).statusCode, 200)
  t.equal((await open.app.inject({ method: 'GET', url: '/v2/deployments' })).statusCode, 200, 'the control plane too')
})

t.test('every graph has a system assistant whose id is the uuid5 of its graph id; the graph name works as an id', async (t) => {
  const { api } = await makeApp(t)
  const byId = await api.get(`/assistants/${AGENT_ID}`)
  t.equal(byId.status, 200)
  t.same(Object.keys(byId.body), ['assistant_id', 'graph_id', 'config', 'context', 'created_at', 'updated_at', 'metadata', 'version', 'name', 'description'])
  t.same({ id: byId.body.assistant_id, graph: byId.body.graph_id, name: byId.body.name, metadata: byId.body.metadata, version: byId.body.version },
    { id: AGENT_ID, graph: 'agent', name: 'agent', metadata: { created_by: 'system' }, version: 1 })
  t.same((await api.get('/assistants/agent')).body, byId.body)
  t.same((await api.get('/assistants/nope')).body, { detail: 'Assistant not found' })
  const all = (await api.post('/assistants/search', { limit: 100 })).body.map((a: any) => a.graph_id)
  for (const graph of ['agent', 'pipeline', 'flaky']) t.ok(all.includes(graph), `${graph} is shipped`)
})

t.test('assistants: create (200, Untitled), 409 or do_nothing on an existing id, patch makes versions, delete', async (t) => {
  const { api } = await makeApp(t)
  const created = await api.post('/assistants', { graph_id: 'agent', metadata: { owner: 'me' } })
  t.equal(created.status, 200)
  t.equal(created.body.name, 'Untitled')
  const id = created.body.assistant_id
  t.same((await api.post('/assistants', { graph_id: 'agent', assistant_id: id })).body, { detail: 'Assistant already exists' })
  t.equal((await api.post('/assistants', { graph_id: 'pipeline', assistant_id: id, if_exists: 'do_nothing' })).body.graph_id, 'agent')
  t.equal((await api.post('/assistants', { graph_id: 'no-such-graph' })).status, 404)
  const patched = await api.patch(`/assistants/${id}`, { name: 'renamed', metadata: { k: 2 } })
  t.same({ version: patched.body.version, name: patched.body.name, metadata: patched.body.metadata }, { version: 2, name: 'renamed', metadata: { owner: 'me', k: 2 } })
  const versions = (await api.post(`/assistants/${id}/versions`, {})).body
  t.same(versions.map((v: any) => v.version), [2, 1])
  const latest = await api.post(`/assistants/${id}/latest`, { version: 1 })
  t.equal(latest.body.name, 'Untitled')
  t.same((await api.delete(`/assistants/${id}?delete_threads=false`)).body, [id])
  t.equal((await api.get(`/assistants/${id}`)).status, 404)
})

t.test('assistant search filters, sorts, pages with X-Pagination headers, and selects fields; count counts', async (t) => {
  const { api, clock } = await makeApp(t)
  for (const name of ['b-one', 'a-two', 'c-three']) {
    clock.advance(1000)
    await api.post('/assistants', { graph_id: 'pipeline', name, metadata: { team: 'x' } })
  }
  const res = await api.post('/assistants/search', { metadata: { team: 'x' }, sort_by: 'name', sort_order: 'asc', limit: 2 })
  t.same(res.body.map((a: any) => a.name), ['a-two', 'b-one'])
  t.equal(res.headers['x-pagination-total'], '3')
  t.equal(res.headers['x-pagination-next'], '2')
  const newest = (await api.post('/assistants/search', { graph_id: 'pipeline', limit: 1 })).body
  t.equal(newest[0].name, 'c-three', 'newest first by default')
  const selected = (await api.post('/assistants/search', { name: 'two', select: ['assistant_id', 'name'] })).body
  t.same(Object.keys(selected[0]), ['assistant_id', 'name'])
  t.equal((await api.post('/assistants/count', { metadata: { team: 'x' } })).body, 3)
})

t.test('assistant graph and schemas describe the graph', async (t) => {
  const { api } = await makeApp(t)
  const graph = (await api.get('/assistants/pipeline/graph')).body
  t.equal(graph.nodes[0].id, '__start__')
  t.equal(graph.nodes.at(-1).id, '__end__')
  t.ok(graph.edges.length >= 2)
  const schemas = (await api.get('/assistants/agent/schemas')).body
  t.equal(schemas.graph_id, 'agent')
  t.ok(schemas.state_schema)
  t.same((await api.get('/assistants/agent/subgraphs')).body, {})
})

t.test('threads: create (given id or not), 409 or do_nothing, get, patch merges metadata, copy, delete', async (t) => {
  const { api } = await makeApp(t)
  const id = '3a3a3a3a-0000-4000-8000-000000000001'
  const created = await api.post('/threads', { thread_id: id, metadata: { user: 'u1' } })
  t.equal(created.status, 200)
  t.same(Object.keys(created.body), ['thread_id', 'created_at', 'updated_at', 'state_updated_at', 'metadata', 'status', 'config', 'values', 'interrupts', 'error'])
  t.same({ status: created.body.status, values: created.body.values, interrupts: created.body.interrupts }, { status: 'idle', values: null, interrupts: {} })
  t.same((await api.post('/threads', { thread_id: id })).body, { detail: 'Thread already exists' })
  t.same((await api.post('/threads', { thread_id: id, if_exists: 'do_nothing', metadata: { other: 1 } })).body.metadata, { user: 'u1' })
  const fresh = (await api.post('/threads', {})).body
  t.match(fresh.thread_id, /^[0-9a-f-]{36}$/)
  t.same((await api.patch(`/threads/${id}`, { metadata: { plan: 'pro' } })).body.metadata, { user: 'u1', plan: 'pro' })
  const copy = (await api.post(`/threads/${id}/copy`)).body
  t.same(copy.metadata, { user: 'u1', plan: 'pro', thread_id: copy.thread_id })
  t.equal((await api.delete(`/threads/${id}`)).status, 204)
  t.same((await api.get(`/threads/${id}`)).body, { detail: `Thread with ID ${id} not found` })
  t.equal((await api.get('/threads/not-a-uuid')).status, 422)
})

t.test('thread search and count filter by metadata, status and ids; newest first', async (t) => {
  const { api, clock } = await makeApp(t)
  const ids = []
  for (const user of ['a', 'b', 'a']) {
    clock.advance(1000)
    ids.push((await api.post('/threads', { metadata: { user } })).body.thread_id)
  }
  const mine = (await api.post('/threads/search', { metadata: { user: 'a' } })).body
  t.same(mine.map((th: any) => th.thread_id), [ids[2], ids[0]])
  t.same((await api.post('/threads/search', { ids: [ids[1]] })).body.map((th: any) => th.thread_id), [ids[1]])
  t.equal((await api.post('/threads/search', { status: 'busy' })).body.length, 0)
  t.equal((await api.post('/threads/count', { status: 'idle' })).body, 3)
  t.equal((await api.post('/threads/search', { status: 'sleeping' })).status, 422)
})

t.test('thread search pages in the store: totals and next offsets are right, ties keep creation order, filters combine', async (t) => {
  const { api } = await makeApp(t) // a frozen clock: every thread has the same created_at
  const ids: string[] = []
  for (let i = 0; i < 7; i++) ids.push((await api.post('/threads', { metadata: { n: i, even: i % 2 === 0 } })).body.thread_id)
  const newestFirst = [...ids].reverse()

  const first = await api.post('/threads/search', { limit: 3 })
  t.same(first.body.map((th: any) => th.thread_id), newestFirst.slice(0, 3), 'descending: the thread created last comes first')
  t.equal(first.headers['x-pagination-total'], '7')
  t.equal(first.headers['x-pagination-next'], '3')
  const last = await api.post('/threads/search', { limit: 3, offset: 6 })
  t.same(last.body.map((th: any) => th.thread_id), [ids[0]])
  t.equal(last.headers['x-pagination-next'], undefined, 'no next page after the last')
  t.same((await api.post('/threads/search', { sort_order: 'asc', limit: 2 })).body.map((th: any) => th.thread_id), ids.slice(0, 2))

  const even = await api.post('/threads/search', { metadata: { even: true }, limit: 2, offset: 1 })
  t.same(even.body.map((th: any) => th.thread_id), [ids[4], ids[2]], 'containment filter, then the page')
  t.equal(even.headers['x-pagination-total'], '4')
  t.equal(even.headers['x-pagination-next'], '3')
  t.same((await api.post('/threads/search', { metadata: { even: true }, ids: [ids[0], ids[1]] })).body.map((th: any) => th.thread_id), [ids[0]])
  t.equal((await api.post('/threads/count', { metadata: { even: false } })).body, 3)
  t.equal((await api.post('/threads/count', { values: { anything: 1 } })).body, 0, 'no thread has run, so no values match')
  t.same((await api.post('/threads/search', { sort_by: 'thread_id', sort_order: 'asc', select: ['thread_id'] })).body.slice(0, 2),
    [...ids].sort().slice(0, 2).map((thread_id) => ({ thread_id })))
})

t.test('a thread that never ran has the empty state and no history; state updates need a graph', async (t) => {
  const { api } = await makeApp(t)
  const id = (await api.post('/threads', {})).body.thread_id
  t.same((await api.get(`/threads/${id}/state`)).body, {
    values: {}, next: [], tasks: [], metadata: null, created_at: null, checkpoint: null, parent_checkpoint: null,
    interrupts: [], checkpoint_id: null, parent_checkpoint_id: null,
  })
  t.same((await api.post(`/threads/${id}/history`, {})).body, [])
  t.same((await api.post(`/threads/${id}/state`, { values: { x: 1 } })).body, { detail: `Thread ${id} has no graph ID` })
  const withGraph = (await api.post('/threads', { metadata: { graph_id: 'agent' } })).body.thread_id
  const update = await api.post(`/threads/${withGraph}/state`, { values: { messages: [{ role: 'user', content: 'hi' }] } })
  t.equal(update.status, 200)
  t.same(Object.keys(update.body.checkpoint), ['thread_id', 'checkpoint_ns', 'checkpoint_id'])
  const state = (await api.get(`/threads/${withGraph}/state`)).body
  t.equal(state.values.messages[0].type, 'human')
  t.equal(state.values.messages[0].content, 'hi')
  t.equal(state.metadata.source, 'update')
  t.equal((await api.get(`/threads/${withGraph}`)).body.values.messages.length, 1, 'the thread shows the new values')
})

t.test('another agent-server caller cannot reach a thread through the control-plane workspace header', async (t) => {
  const { app } = await makeApp(t)
  const a = clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': '11111111-1111-4111-8111-111111111111' })
  const id = (await a.post('/threads', {})).body.thread_id
  t.equal((await clientFor(app).get(`/threads/${id}`)).status, 200, 'the root agent server is one deployment: the tenant header does not split it')
})

t.test('a state update the graph refuses is a 400 with the reason, never a 500', async (t) => {
  const { api } = await makeApp(t)
  const id = (await api.post('/threads', { metadata: { graph_id: 'agent' } })).body.thread_id
  const node = await api.post(`/threads/${id}/state`, { values: {}, as_node: 'nope' })
  t.equal(node.status, 400)
  t.same(node.body, { detail: 'Node nope does not exist' })
  const remove = await api.post(`/threads/${id}/state`, { values: { messages: [{ type: 'remove', id: 'ghost' }] } })
  t.equal(remove.status, 400)
  t.match(remove.body.detail, /ghost/)
})

t.test('resume as a map from interrupt id to value; history before in each form the SDKs send', async (t) => {
  const { api } = await makeApp(t)
  const id = (await api.post('/threads', {})).body.thread_id as string
  await api.post(`/threads/${id}/runs/wait`, { assistant_id: 'approval', input: { messages: [{ type: 'human', content: 'ship it' }] } })
  const [interrupt] = (await api.get(`/threads/${id}/state`)).body.tasks[0].interrupts
  // A map that names the pending interrupt resumes it with that entry (LangGraph accepts both forms).
  const resumed = await api.post(`/threads/${id}/runs/wait`, { assistant_id: 'approval', command: { resume: { [interrupt.id]: 'mapped yes' } } })
  t.equal(resumed.body.answer, 'mapped yes')
  // A map that names no pending interrupt is a value like any other.
  await api.post(`/threads/${id}/runs/wait`, { assistant_id: 'approval', input: { messages: [{ type: 'human', content: 'again' }] } })
  const other = await api.post(`/threads/${id}/runs/wait`, { assistant_id: 'approval', command: { resume: { note: 'a plain object' } } })
  t.same(other.body.answer, { note: 'a plain object' })

  const history = (await api.post(`/threads/${id}/history`, { limit: 100 })).body as { checkpoint_id: string }[]
  const pivot = history[3].checkpoint_id
  const expected = history.slice(4).map((c) => c.checkpoint_id)
  for (const before of [pivot, { checkpoint_id: pivot }, { configurable: { checkpoint_id: pivot } }]) {
    const page = (await api.post(`/threads/${id}/history`, { limit: 100, before })).body as { checkpoint_id: string }[]
    t.same(page.map((c) => c.checkpoint_id), expected, `before as ${JSON.stringify(before).replace(pivot, 'id')}`)
  }
  const viaQuery = (await api.get(`/threads/${id}/history?limit=100&before=${pivot}`)).body as { checkpoint_id: string }[]
  t.same(viaQuery.map((c) => c.checkpoint_id), expected, 'GET with limit and before in the query: the same page')
  const firstTwo = (await api.get(`/threads/${id}/history?limit=2`)).body as { checkpoint_id: string }[]
  t.same(firstTwo.map((c) => c.checkpoint_id), history.slice(0, 2).map((c) => c.checkpoint_id), 'GET with a limit: the newest checkpoints')
})

t.test('deleting a run: 204, then it is gone from the thread; an unknown run is a 404', async (t) => {
  const { api } = await makeApp(t)
  const id = (await api.post('/threads', {})).body.thread_id as string
  await api.post(`/threads/${id}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ type: 'human', content: 'one' }] } })
  await api.post(`/threads/${id}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ type: 'human', content: 'two' }] } })
  const [newest, oldest] = (await api.get(`/threads/${id}/runs`)).body as { run_id: string }[]
  const deleted = await api.delete(`/threads/${id}/runs/${oldest.run_id}`)
  t.equal(deleted.status, 204)
  t.equal(deleted.text, '')
  t.same(((await api.get(`/threads/${id}/runs`)).body as { run_id: string }[]).map((r) => r.run_id), [newest.run_id], 'the other run stays')
  t.equal((await api.get(`/threads/${id}/runs/${oldest.run_id}`)).status, 404)
  const again = await api.delete(`/threads/${id}/runs/${oldest.run_id}`)
  t.equal(again.status, 404, 'deleted once')
  t.match(again.body, { detail: /not found/i })
})
