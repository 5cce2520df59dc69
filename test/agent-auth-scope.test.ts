// HANGAR_AGENT_AUTH=users beyond who a token is: what each user may do (its permissions, per the
// LangGraph auth event each route raises; 403 `Forbidden` otherwise), and what each user reaches
// (its own threads, crons, store namespaces and A2A tasks), driven by the official JS SDK over a
// real listening hangar, by raw requests where a body must be read exactly, and under a deployed
// agent's prefix. Crons fire on the manual clock.

import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { BusMessage } from '../src/admin/bus.js'
import type { Config } from '../src/config.js'
import { ROUTE_EVENTS } from '../src/agent/auth-events.js'
import { permits } from '../src/domain/agent-permissions.js'
import { dockerDeployment, runClockUntil, serveApp, until } from './helpers.js'

const USERS = [
  { token: 'alice-token', identity: 'alice' },
  { token: 'bob-token', identity: 'bob' },
  // May create and read threads, and read assistants and crons: no runs, no changes, no store but reads.
  { token: 'carol-token', identity: 'carol', permissions: ['threads:create', 'threads:read', 'threads:search', 'assistants:read', 'crons:read', 'store:get'] },
  { token: 'dave-token', identity: 'dave', permissions: [] },
  { token: 'erin-token', identity: 'erin', permissions: ['threads:*', '*:read', 'store:*'] },
]
const HOUR = 3_600_000
const FORBIDDEN = { status: 403, body: { detail: 'Forbidden' } }
const hello = (content: string) => ({ messages: [{ role: 'user', content }] })
const NEW_THREAD = '4f7a3c2e-8b1d-4e6f-9a0c-5d2b7e1f3a94'

async function serve(t: Test, config: Partial<Config> = {}) {
  const agentUsers = join(t.testdir({ 'users.json': JSON.stringify(USERS) }), 'users.json')
  const served = await serveApp(t, { agentAuth: 'users', agentUsers, revisionSpeed: 'instant', ...config })
  return { ...served, ...usersAt(served.base) }
}

/** The users' SDK clients and raw requests against the agent server at `apiUrl`. */
function usersAt(apiUrl: string) {
  const as = (token: string) => new Client({ apiUrl, apiKey: null, defaultHeaders: { authorization: `Bearer ${token}` }, callerOptions: { maxRetries: 0 } })
  /** A raw request as the user with this token: status and parsed body (undefined when empty). */
  const call = async (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
  }
  return { alice: as('alice-token'), bob: as('bob-token'), carol: as('carol-token'), erin: as('erin-token'), call }
}

/** A JSON-RPC request to the A2A or MCP endpoint. */
const rpc = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method, params })
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
const a2aMessage = (text: string, contextId?: string) =>
  rpc('message/send', { message: { role: 'user', messageId: `m-${text}`, parts: [{ kind: 'text', text }], ...(contextId ? { contextId } : {}) } })

t.test('permissions: an event, resource:*, *:action and * allow it; no list allows everything, an empty one nothing', async (t) => {
  t.ok(permits(['threads:read'], 'threads:read'))
  t.notOk(permits(['threads:read'], 'threads:update'))
  t.ok(permits(['threads:*'], 'threads:create_run'))
  t.notOk(permits(['threads:*'], 'crons:read'))
  t.ok(permits(['*:read'], 'assistants:read'))
  t.notOk(permits(['*:read'], 'assistants:search'))
  t.ok(permits(['*'], 'store:list_namespaces'))
  t.ok(permits(undefined, 'store:put'), 'no permissions at all: everything')
  t.notOk(permits([], 'threads:read'), 'an empty list: nothing')
})

t.test('the auth events table lists only routes hangar serves', async (t) => {
  const { call } = await serve(t)
  const doc = (await call('alice-token', 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> }
  for (const route of ROUTE_EVENTS.keys()) {
    const [method, path] = route.split(' ')
    t.ok(doc.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()], `${route} is served`)
  }
})

t.test('a user without the permission an action needs gets 403 Forbidden, and nothing of the action is done', async (t) => {
  const { carol, bob, call } = await serve(t)
  const thread = await carol.threads.create({ metadata: { topic: 'mine' } })
  t.equal(thread.metadata?.owner, 'carol', 'threads:create: her thread is made, and hers')
  const tid = thread.thread_id

  t.same(await call('carol-token', 'POST', `/threads/${tid}/runs/wait`, { assistant_id: 'agent', input: hello('hi') }), FORBIDDEN, 'a run needs threads:create_run')
  t.same(await carol.runs.list(tid), [], 'no run was created')
  t.same(await call('carol-token', 'POST', '/runs/wait', { assistant_id: 'agent', input: hello('hi') }), FORBIDDEN, 'a stateless run needs it too')
  t.same(await call('carol-token', 'POST', `/threads/${NEW_THREAD}/runs/wait`, { assistant_id: 'agent', input: hello('hi'), if_not_exists: 'create' }), FORBIDDEN)
  t.equal((await call('carol-token', 'GET', `/threads/${NEW_THREAD}`)).status, 404, 'a refused run on a new thread leaves no thread behind')

  t.same(await call('carol-token', 'PATCH', `/threads/${tid}`, { metadata: { topic: 'changed' } }), FORBIDDEN, 'threads:update')
  t.same(await call('carol-token', 'DELETE', `/threads/${tid}`), FORBIDDEN, 'threads:delete')
  t.same((await carol.threads.get(tid)).metadata, { topic: 'mine', owner: 'carol' }, 'the thread is there, unchanged')

  t.same(await call('carol-token', 'POST', `/threads/${tid}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *' }), FORBIDDEN, 'crons:create')
  t.same(await call('carol-token', 'POST', '/runs/crons/search', {}), FORBIDDEN, 'crons:search')
  t.same(await call('carol-token', 'PUT', '/store/items', { namespace: ['carol', 'notes'], key: 'k', value: { a: 1 } }), FORBIDDEN, 'store:put, even in her own namespace')
  t.same(await call('carol-token', 'GET', '/store/items?namespace=carol.notes&key=k'), { status: 200, body: null }, 'store:get is hers')
  t.same(await call('carol-token', 'POST', '/assistants/search', {}), FORBIDDEN, 'assistants:search')
  t.equal((await carol.assistants.get('agent')).graph_id, 'agent', 'assistants:read is hers')
  await t.rejects(carol.runs.wait(tid, 'agent', { input: hello('hi') }), /HTTP 403/, 'the SDK sees the 403')

  t.equal((await call('carol-token', 'POST', `/threads/${tid}/runs/wait`, { input: hello('no assistant') })).status, 422, 'a body that fails validation is a 422 first, as the real server validates before it authorizes')
  const bobs = await bob.threads.create()
  t.same(await call('carol-token', 'PATCH', `/threads/${bobs.thread_id}`, { metadata: {} }), FORBIDDEN, 'refused before any thread is looked up: 403, not 404')
  t.equal((await call('carol-token', 'GET', `/threads/${bobs.thread_id}`)).status, 404, 'allowed to read, she still does not find another user\'s thread')
})

t.test('an empty permission list allows nothing; a refused create leaves no thread, and /info and /ok stay open', async (t) => {
  const { alice, call } = await serve(t)
  t.same(await call('dave-token', 'POST', '/threads', { thread_id: NEW_THREAD }), FORBIDDEN)
  t.same(await call('dave-token', 'GET', '/assistants/agent'), FORBIDDEN)
  t.equal((await alice.threads.create({ threadId: NEW_THREAD })).thread_id, NEW_THREAD, 'the id is free: nothing of dave\'s create was written')
  t.equal((await call('dave-token', 'GET', '/info')).status, 200, '/info')
  t.equal((await call('dave-token', 'GET', '/ok')).status, 200, '/ok')
})

t.test('wildcards: threads:* allows every thread action, *:read every read', async (t) => {
  const { erin, call } = await serve(t)
  const thread = await erin.threads.create()
  const result = await erin.runs.wait(thread.thread_id, 'agent', { input: hello('from erin') }) as { messages: { content: string }[] }
  t.equal(result.messages.at(-1)?.content, 'from erin', 'threads:create_run')
  await erin.threads.update(thread.thread_id, { metadata: { done: true } })
  t.equal((await erin.assistants.get('agent')).graph_id, 'agent', 'assistants:read through *:read')
  t.equal((await call('erin-token', 'GET', `/runs/crons/${NEW_THREAD}`)).status, 404, 'crons:read through *:read: allowed, and not found')
  t.same(await call('erin-token', 'POST', '/assistants/search', {}), FORBIDDEN, '*:read is not a search')
  t.same(await call('erin-token', 'POST', '/runs/crons', { assistant_id: 'agent', schedule: '0 9 * * *' }), FORBIDDEN, 'nor a create')
  await erin.store.putItem(['erin', 'notes'], 'k', { a: 1 })
})

t.test('A2A and MCP are authorized by the JSON-RPC method a request carries', async (t) => {
  const { call } = await serve(t)
  t.same(await call('carol-token', 'POST', '/a2a/agent', a2aMessage('hi')), FORBIDDEN, 'message/send is a run: threads:create_run')
  const unknownTask = await call('carol-token', 'POST', '/a2a/agent', rpc('tasks/get', { id: NEW_THREAD }))
  t.same([unknownTask.status, unknownTask.body.error.code], [404, -32001], 'tasks/get is a read: allowed, and not found')
  t.equal((await call('carol-token', 'GET', '/.well-known/agent-card.json?assistant_id=agent')).status, 200, 'the agent card is an assistant read')
  t.same(await call('carol-token', 'POST', '/mcp/', rpc('tools/list'), MCP_HEADERS), FORBIDDEN, 'tools/list is an assistants search')
  t.same(await call('carol-token', 'POST', '/mcp/', rpc('ping'), MCP_HEADERS), { status: 200, body: { jsonrpc: '2.0', id: 1, result: {} } }, 'ping needs nothing')
  t.same(await call('carol-token', 'POST', '/mcp/', rpc('tools/call', { name: 'agent', arguments: hello('hi') }), MCP_HEADERS), FORBIDDEN, 'tools/call is a run')
})

t.test('a user\'s run carries the user in its config — never its token — and the client cannot pose as another', async (t) => {
  const { alice, erin } = await serve(t)
  const thread = await erin.threads.create()
  await erin.runs.wait(thread.thread_id, 'agent', {
    input: hello('who am i'),
    config: { configurable: { langgraph_auth_user_id: 'mallory', langgraph_auth_user: { identity: 'mallory' }, langgraph_auth_permissions: ['*'] } },
  })
  const [run] = await erin.runs.list(thread.thread_id)
  const configurable = (run as unknown as { kwargs: { config: { configurable: Record<string, unknown> } } }).kwargs.config.configurable
  const permissions = ['threads:*', '*:read', 'store:*']
  t.same(configurable.langgraph_auth_user, { identity: 'erin', display_name: 'erin', is_authenticated: true, permissions }, 'the user, as applyAuthToRunConfig stamps it')
  t.equal(configurable.langgraph_auth_user_id, 'erin')
  t.same(configurable.langgraph_auth_permissions, permissions)
  t.notMatch(JSON.stringify(run), /erin-token/, 'the token is nowhere in the run')
  t.notMatch(JSON.stringify(await erin.threads.get(thread.thread_id)), /erin-token/, 'nor in the thread')

  const history = await erin.threads.getHistory(thread.thread_id)
  t.ok(history.length > 0)
  for (const state of history) {
    t.notOk(Object.keys(state.metadata ?? {}).some((key) => key.startsWith('langgraph_auth_')), 'checkpoint metadata leaves the user out, as LangGraph leaves out configurable keys naming auth')
  }

  const own = await alice.threads.create()
  await alice.runs.wait(own.thread_id, 'agent', { input: hello('me') })
  const [alices] = await alice.runs.list(own.thread_id)
  t.same((alices as unknown as { kwargs: { config: { configurable: Record<string, unknown> } } }).kwargs.config.configurable.langgraph_auth_permissions, [],
    'a user the file gives no permissions has an empty list, as the real server normalizes it')
})

t.test('crons are their creator\'s: another user finds none of them, and their runs act as the creator', async (t) => {
  const { alice, bob, call, clock } = await serve(t)
  const thread = await alice.threads.create()
  const onThread = await alice.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *', input: hello('morning'), metadata: { team: 'ops', owner: 'bob' } }) as unknown as { cron_id: string; user_id: string; metadata: Record<string, unknown> }
  t.same([onThread.user_id, onThread.metadata], ['alice', { team: 'ops', owner: 'alice' }], 'the cron is alice\'s, whatever owner the client sent')
  const stateless = await alice.crons.create('agent', { schedule: '0 9 * * *', input: hello('stateless'), onRunCompleted: 'keep' }) as unknown as { cron_id: string }
  const bobs = await bob.crons.create('agent', { schedule: '0 12 * * *' }) as unknown as { cron_id: string }

  t.same((await alice.crons.search()).map((c) => c.cron_id).sort(), [onThread.cron_id, stateless.cron_id].sort(), 'alice finds hers')
  t.same((await bob.crons.search()).map((c) => c.cron_id), [bobs.cron_id], 'bob finds his only')
  t.same(await bob.crons.search({ metadata: { owner: 'alice' } }), [], 'asking for alice\'s finds nothing')
  t.equal(await bob.crons.count(), 1)
  t.equal(await alice.crons.count({ metadata: { team: 'ops' } }), 1)
  const notFound = { status: 404, body: { detail: `Cron with ID ${onThread.cron_id} not found` } }
  t.same(await call('bob-token', 'GET', `/runs/crons/${onThread.cron_id}`), notFound, 'get')
  t.same(await call('bob-token', 'PATCH', `/runs/crons/${onThread.cron_id}`, { enabled: false }), notFound, 'patch')
  t.same(await call('bob-token', 'DELETE', `/runs/crons/${onThread.cron_id}`), notFound, 'delete')
  t.same(await call('bob-token', 'POST', `/threads/${thread.thread_id}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *' }),
    { status: 404, body: { detail: `Thread with ID ${thread.thread_id} not found` } }, 'a cron on alice\'s thread: her thread is not there for bob')
  const patched = await call('alice-token', 'PATCH', `/runs/crons/${onThread.cron_id}`, { metadata: { owner: 'bob' } })
  t.equal(patched.body.metadata.owner, 'alice', 'a patch cannot hand the cron over')

  const threadsBefore = await alice.threads.count()
  clock.advance(10 * HOUR)
  await until(async () => (await alice.runs.list(thread.thread_id)).some((run) => run.status === 'success'), 'the thread cron\'s run has finished')
  const [fired] = await alice.runs.list(thread.thread_id)
  const configurable = (fired as unknown as { kwargs: { config: { configurable: Record<string, unknown> } } }).kwargs.config.configurable
  t.equal(configurable.langgraph_auth_user_id, 'alice', 'the run a cron fires acts as its creator')
  await until(async () => (await alice.threads.count()) === threadsBefore + 1, 'the stateless cron\'s kept thread is alice\'s')
  const kept = (await alice.threads.search({ limit: 1 }))[0]
  t.equal(kept.metadata?.owner, 'alice')
  await t.rejects(bob.threads.get(kept.thread_id), /HTTP 404/, 'and not bob\'s to see')
})

t.test('the store: a user reaches only namespaces that start with its identity; a graph\'s own store steps are unaffected', async (t) => {
  const { alice, bob, call } = await serve(t)
  await alice.store.putItem(['alice', 'notes'], 'k', { text: 'mine' })
  t.same((await alice.store.getItem(['alice', 'notes'], 'k'))?.value, { text: 'mine' })
  await bob.store.putItem(['bob', 'notes'], 'k', { text: 'his' })

  t.same(await call('alice-token', 'PUT', '/store/items', { namespace: ['bob', 'notes'], key: 'k', value: { text: 'taken' } }), FORBIDDEN, 'put')
  t.same(await call('alice-token', 'GET', '/store/items?namespace=bob.notes&key=k'), FORBIDDEN, 'get')
  t.same(await call('alice-token', 'DELETE', '/store/items', { namespace: ['bob', 'notes'], key: 'k' }), FORBIDDEN, 'delete')
  t.same(await call('alice-token', 'POST', '/store/items/search', { namespace_prefix: ['bob'] }), FORBIDDEN, 'search under bob')
  t.same(await call('alice-token', 'POST', '/store/items/search', { namespace_prefix: [] }), FORBIDDEN, 'search of everything')
  t.equal((await call('alice-token', 'PUT', '/store/items', { namespace: ['bob', 'a.b'], key: 'k', value: {} })).status, 422, 'a bad label is a 422 first, as on the real server')
  t.same((await bob.store.getItem(['bob', 'notes'], 'k'))?.value, { text: 'his' }, 'bob\'s item is as he left it')

  t.same((await alice.store.searchItems(['alice'])).items.map((item) => item.namespace), [['alice', 'notes']])
  t.same((await alice.store.listNamespaces()).namespaces, [['alice', 'notes']], 'namespaces: hers only')
  t.same((await alice.store.listNamespaces({ prefix: ['bob'] })).namespaces, [], 'bob\'s prefix lists nothing')

  const thread = await alice.threads.create()
  const result = await alice.runs.wait(thread.thread_id, 'memory_agent', { input: hello('remember the milk') }) as { messages: { content: string }[] }
  t.equal(result.messages.at(-1)?.content, 'I will remember that.', 'the graph writes under ["memories"], its own namespace, as a graph may')
})

t.test('A2A tasks and contexts are their user\'s; MCP runs as the caller', async (t) => {
  const { app, alice, bob, call, clock } = await serve(t)
  const sent = await call('alice-token', 'POST', '/a2a/agent', a2aMessage('hello a2a'))
  const task = sent.body.result as { id: string; contextId: string }
  t.equal((await alice.threads.get(task.contextId)).metadata?.owner, 'alice', 'the context alice opened is her thread')
  for (const method of ['tasks/get', 'tasks/cancel', 'tasks/resubscribe']) {
    const refused = await call('bob-token', 'POST', '/a2a/agent', rpc(method, { id: task.id }))
    t.same([refused.status, refused.body.error], [404, { code: -32001, message: `Task ${task.id} not found` }], `${method} of alice's task: not found for bob`)
  }
  const answering = rpc('message/send', { message: { role: 'user', messageId: 'm-answer', parts: [{ kind: 'text', text: 'yes' }], taskId: task.id } })
  const answeredByBob = await call('bob-token', 'POST', '/a2a/agent', answering)
  t.same([answeredByBob.status, answeredByBob.body.error], [404, { code: -32001, message: `Task ${task.id} not found` }], 'a message answering alice\'s task: not found for bob')
  const intruding = await call('bob-token', 'POST', '/a2a/agent', a2aMessage('me too', task.contextId))
  t.same([intruding.status, intruding.body.error], [404, { code: -32602, message: `Context ${task.contextId} not found` }], 'bob cannot continue alice\'s context')
  t.equal((await alice.runs.list(task.contextId)).length, 1, 'nothing ran on it')
  t.equal((await call('alice-token', 'POST', '/a2a/agent', rpc('tasks/get', { id: task.id }))).body.result.id, task.id, 'alice reads her task')

  // A stateless MCP run's thread lives while it runs: slow_agent waits on the clock meanwhile.
  let threadId: string | undefined
  const stop = app.emulator.bus.subscribe((message: BusMessage) => {
    if (message.topic === 'run' && message.data.status === 'pending') threadId = message.data.thread_id
  })
  t.teardown(stop)
  let answered = false
  const calling = call('alice-token', 'POST', '/mcp/', rpc('tools/call', { name: 'slow_agent', arguments: hello('slowly') }), MCP_HEADERS).then((reply) => {
    answered = true
    return reply
  })
  await until(() => threadId !== undefined, 'the MCP call has started its run')
  t.equal((await alice.threads.get(threadId!)).metadata?.owner, 'alice', 'the thread an MCP call runs on is the caller\'s')
  await t.rejects(bob.threads.get(threadId!), /HTTP 404/)
  await runClockUntil(clock, () => answered, 'the MCP call has answered', { stepMs: 500 })
  t.equal((await calling).body.result.isError, false)
})

t.test('under a deployed agent\'s prefix, users mode works the same, apart from the root agent server', async (t) => {
  const { base, alice: rootAlice } = await serve(t)
  const created = await fetch(`${base}/v2/deployments`, {
    method: 'POST', headers: { 'x-api-key': 'ci-key', 'content-type': 'application/json' }, body: JSON.stringify(dockerDeployment({ name: 'scoped' })),
  })
  const { url } = await created.json() as { url: string }
  const { alice, bob, call } = usersAt(url)

  t.same(await call('mallory-token', 'POST', '/threads/search', {}), { status: 401, body: { detail: 'Invalid token' } }, 'a token no user has')
  const thread = await alice.threads.create()
  t.equal(thread.metadata?.owner, 'alice')
  await t.rejects(bob.threads.get(thread.thread_id), /HTTP 404/, 'bob does not find alice\'s thread')
  await t.rejects(rootAlice.threads.get(thread.thread_id), /HTTP 404/, 'nor does the root agent server hold it')
  t.same(await call('carol-token', 'POST', `/threads/${NEW_THREAD}/runs/wait`, { assistant_id: 'agent', if_not_exists: 'create' }), FORBIDDEN, 'permissions apply')
  t.same(await call('alice-token', 'PUT', '/store/items', { namespace: ['bob'], key: 'k', value: {} }), FORBIDDEN, 'the store rule applies')
  await alice.crons.create('agent', { schedule: '0 9 * * *' })
  t.equal(await bob.crons.count(), 0, 'crons are scoped')
  t.equal(await alice.crons.count(), 1)
})
