// The A2A endpoint and agent card through the official client (@a2a-js/sdk, its v0.3 JSON-RPC
// transport, which the hosted server speaks), over a real listening hangar; broken requests by hand.

import t from 'tap'
import { Role, TaskState, type Message, type SendMessageRequest } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client'
import { API_KEY, runClockUntil, serveApp, until } from './helpers.js'

const withKey: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set('x-api-key', API_KEY)
  return fetch(input, { ...init, headers })
}

async function a2aClient(base: string, assistantId: string): Promise<Client> {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withKey, legacyCompat: { enabled: true } })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey, legacyCompat: { enabled: true } }),
  }))
  return factory.createFromUrl(base, `/.well-known/agent-card.json?assistant_id=${assistantId}`)
}

let counter = 0
type PartContent = { $case: 'text'; value: string } | { $case: 'data'; value: unknown }
function sendRequest(contents: PartContent[], contextId = '', taskId = ''): SendMessageRequest {
  const message: Message = {
    messageId: `msg-${++counter}`, contextId, taskId, role: Role.ROLE_USER,
    parts: contents.map((content) => ({ content, metadata: undefined }) as never),
    metadata: undefined, extensions: [], referenceTaskIds: [],
  }
  return { tenant: '', message, configuration: undefined, metadata: undefined }
}
/** A user message with one text part (on a context, answering a task, when given). */
const userMessage = (text: string, contextId = '', taskId = '') => sendRequest([{ $case: 'text', value: text }], contextId, taskId)

/** What `sendMessage` answered, as a task (it answers a bare message only for agents that send one). */
function asTask(result: Awaited<ReturnType<Client['sendMessage']>>) {
  if (!('status' in result)) throw new Error('expected a task')
  return result
}

const textOf = (parts: { content?: { $case: string; value: unknown } }[] | undefined) =>
  (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')

t.test('the agent card names the assistant and points at its A2A endpoint on the address the client used', async (t) => {
  const { base, api } = await serveApp(t)
  const res = await fetch(`${base}/.well-known/agent-card.json?assistant_id=agent`, { headers: { 'x-api-key': API_KEY } })
  t.equal(res.status, 200)
  const card = await res.json() as Record<string, any>
  const assistant = (await api.post('/assistants/search', { graph_id: 'agent' })).body[0]
  t.equal(card.name, 'agent')
  t.match(card.description, /Echo chat/)
  t.equal(card.url, `${base}/a2a/${assistant.assistant_id}`)
  t.equal(card.protocolVersion, '0.3.0')
  t.equal(card.capabilities.streaming, true)
  t.equal(card.skills.length, 1)
  t.equal(card.skills[0].id, 'agent-main')
  const missing = await fetch(`${base}/.well-known/agent-card.json?assistant_id=nope`, { headers: { 'x-api-key': API_KEY } })
  t.equal(missing.status, 404)
  const anonymous = await fetch(`${base}/.well-known/agent-card.json?assistant_id=agent`)
  t.equal(anonymous.status, 403, 'the card is behind the same credentials as the agent server')
})

t.test('message/send answers a completed task whose artifact is the graph\'s reply, and tasks/get reads it back', async (t) => {
  const { base, api } = await serveApp(t)
  const client = await a2aClient(base, 'agent')
  const result = await client.sendMessage(userMessage('hello there'))
  if (!('status' in result)) throw new Error('expected a task')
  t.equal(result.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(result.artifacts.length, 1)
  t.equal(result.artifacts[0].name, 'Assistant Response')
  t.equal(textOf(result.artifacts[0].parts as never), 'hello there')
  t.match(result.contextId, /^[0-9a-f-]{36}$/)
  const run = (await api.get(`/threads/${result.contextId}/runs/${result.id}`)).body
  t.equal(run.status, 'success', 'the task is the run on the context\'s thread')

  const fetched = await client.getTask({ tenant: '', id: result.id })
  t.equal(fetched.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(textOf(fetched.artifacts[0].parts as never), 'hello there')
  t.same(fetched.history.map((m) => [m.role, textOf(m.parts as never)]), [[Role.ROLE_USER, 'hello there'], [Role.ROLE_AGENT, 'hello there']])
  const short = await client.getTask({ tenant: '', id: result.id, historyLength: 1 })
  t.equal(short.history.length, 1)
})

t.test('a second message on the same contextId continues the conversation on its thread', async (t) => {
  const { base, api } = await serveApp(t)
  const client = await a2aClient(base, 'agent')
  const first = await client.sendMessage(userMessage('first turn'))
  if (!('status' in first)) throw new Error('expected a task')
  const second = await client.sendMessage(userMessage('second turn', first.contextId))
  if (!('status' in second)) throw new Error('expected a task')
  t.equal(second.contextId, first.contextId)
  t.not(second.id, first.id)
  t.equal(textOf(second.artifacts[0].parts as never), 'second turn')
  const state = (await api.get(`/threads/${first.contextId}/state`)).body
  t.same(state.values.messages.map((m: any) => [m.type, m.content]), [
    ['human', 'first turn'], ['ai', 'first turn'], ['human', 'second turn'], ['ai', 'second turn'],
  ])
})

t.test('message/stream sends the submitted task, working, the answer as an artifact, then the final completed status', async (t) => {
  const { base } = await serveApp(t)
  const client = await a2aClient(base, 'agent')
  const events = []
  for await (const event of client.sendMessageStream(userMessage('stream me'))) events.push(event.payload)
  t.same(events.map((e) => e?.$case), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
  const [task, working, artifact, done] = events as any[]
  t.equal(task.value.status.state, TaskState.TASK_STATE_SUBMITTED)
  t.equal(working.value.status.state, TaskState.TASK_STATE_WORKING)
  t.equal(textOf(artifact.value.artifact.parts), 'stream me')
  t.equal(done.value.status.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(done.value.taskId, task.value.id)
})

t.test('tasks/cancel stops a task in progress; a finished task cannot be canceled', async (t) => {
  const { base } = await serveApp(t)
  // slow_agent waits on the manual clock, which no one moves: the task stays in progress until canceled.
  const client = await a2aClient(base, 'slow_agent')
  const request = userMessage('take your time')
  request.configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
  const started = await client.sendMessage(request)
  if (!('status' in started)) throw new Error('expected a task')
  t.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(started.status!.state), 'a non-blocking send answers at once')
  const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined })
  t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
  t.equal((await client.getTask({ tenant: '', id: started.id })).status?.state, TaskState.TASK_STATE_CANCELED)
  await t.rejects(client.cancelTask({ tenant: '', id: started.id, metadata: undefined }), /cannot be canceled/)
})

t.test('a message naming an input-required task resumes its interrupted thread with its text, and the same task completes', async (t) => {
  const { base, api } = await serveApp(t)
  const client = await a2aClient(base, 'approval')
  const asked = asTask(await client.sendMessage(userMessage('ship the release')))
  t.equal(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.same(JSON.parse(textOf(asked.status?.message?.parts as never)), { question: 'Approve this request?', request: 'ship the release' }, 'the status message is what the graph asks')

  const answered = asTask(await client.sendMessage(userMessage('yes', asked.contextId, asked.id)))
  t.equal(answered.id, asked.id, 'the answer continues the same task')
  t.equal(answered.contextId, asked.contextId)
  t.equal(answered.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(textOf(answered.artifacts[0].parts as never), 'You answered: yes')
  t.equal((await client.getTask({ tenant: '', id: asked.id })).status?.state, TaskState.TASK_STATE_COMPLETED, 'tasks/get reads the task where its answer left it')

  const state = (await api.get(`/threads/${asked.contextId}/state`)).body
  t.equal(state.values.answer, 'yes', 'the graph resumed with the text')
  t.same(state.values.messages.map((m: any) => [m.type, m.content]), [['human', 'ship the release'], ['ai', 'You answered: yes']], 'the interrupt was answered, not asked again')
  const runs = (await api.get(`/threads/${asked.contextId}/runs`)).body
  t.same(runs.map((run: any) => run.kwargs.command), [{ resume: 'yes' }, null], 'the answer is a run resuming the thread (newest first)')
})

t.test('an answer streamed with a data part resumes with its object, and the stream speaks for the task it answers', async (t) => {
  const { base, api } = await serveApp(t)
  const client = await a2aClient(base, 'approval')
  const asked = asTask(await client.sendMessage(userMessage('buy a boat')))
  const answer = { decision: 'approve', note: 'a small one' }
  const events = []
  for await (const event of client.sendMessageStream(sendRequest([{ $case: 'data', value: answer }], '', asked.id))) events.push(event.payload)
  t.same(events.map((e) => e?.$case), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
  const [task, working, artifact, done] = events as any[]
  t.equal(task.value.id, asked.id, 'the task is the one answered')
  t.equal(task.value.contextId, asked.contextId, 'its context, though the message named only the task')
  t.equal(working.value.status.state, TaskState.TASK_STATE_WORKING)
  t.equal(textOf(artifact.value.artifact.parts), `You answered: ${JSON.stringify(answer)}`)
  t.equal(done.value.taskId, asked.id)
  t.equal(done.value.status.state, TaskState.TASK_STATE_COMPLETED)
  t.same((await api.get(`/threads/${asked.contextId}/state`)).body.values.answer, answer, 'the data part\'s object, as it is')
})

t.test('a structured answer the client had to wrap (an array) resumes with what it wrapped', async (t) => {
  const { base, api } = await serveApp(t)
  const client = await a2aClient(base, 'email_agent')
  const asked = asTask(await client.sendMessage(userMessage('the offsite')))
  t.equal(asked.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  const review = [{ type: 'accept', args: null }]
  const sent = asTask(await client.sendMessage(sendRequest([{ $case: 'data', value: review }], asked.contextId, asked.id)))
  t.equal(sent.status?.state, TaskState.TASK_STATE_COMPLETED)
  t.equal(textOf(sent.artifacts[0].parts as never), 'Done: the email to team@example.com is sent.')
  t.same((await api.get(`/threads/${asked.contextId}/state`)).body.values.review, review)
})

t.test('a message on the context of a waiting task without its id is a new task: the graph starts over', async (t) => {
  const { base } = await serveApp(t)
  const client = await a2aClient(base, 'approval')
  const asked = asTask(await client.sendMessage(userMessage('first request')))
  const again = asTask(await client.sendMessage(userMessage('second request', asked.contextId)))
  t.not(again.id, asked.id)
  t.equal(again.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.match(textOf(again.status?.message?.parts as never), /second request/, 'the new input asks again')
})

t.test('a message naming a task that has ended, is unknown or is on another context is refused', async (t) => {
  const { base } = await serveApp(t)
  const client = await a2aClient(base, 'agent')
  const done = asTask(await client.sendMessage(userMessage('hello')))
  await t.rejects(client.sendMessage(userMessage('more', done.contextId, done.id)), { envelopeCode: -32004, message: /terminal state \(completed\)/ })
  await t.rejects(client.sendMessage(userMessage('more', '', '00000000-0000-4000-8000-000000000000')), { envelopeCode: -32001, message: /not found/ })
  const other = asTask(await client.sendMessage(userMessage('elsewhere')))
  await t.rejects(client.sendMessage(userMessage('more', other.contextId, done.id)), { envelopeCode: -32602, message: /not the context of task/ })
})

t.test('tasks/resubscribe follows a task in progress to its end, and refuses one that has ended', async (t) => {
  const { base, clock } = await serveApp(t)
  // slow_agent waits on the manual clock: the task stays in progress until the test moves it.
  const client = await a2aClient(base, 'slow_agent')
  const request = userMessage('patience')
  request.configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
  const started = asTask(await client.sendMessage(request))
  const events: any[] = []
  const following = (async () => {
    for await (const event of client.resubscribeTask({ tenant: '', id: started.id })) events.push(event.payload)
  })()
  await until(() => events.length > 0, 'the resubscription sends the task as it stands')
  t.equal(events[0].$case, 'task')
  t.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(events[0].value.status.state), 'in progress')
  await runClockUntil(clock, () => events.length === 3, 'the rest of the task arrives as its run ends')
  await following
  t.same(events.map((e) => e.$case), ['task', 'artifactUpdate', 'statusUpdate'])
  t.match(textOf(events[1].value.artifact.parts), /^Let me think about patience carefully/)
  t.equal(events[2].value.status.state, TaskState.TASK_STATE_COMPLETED)

  const again = async () => {
    for await (const event of client.resubscribeTask({ tenant: '', id: started.id })) t.fail(`nothing is streamed, got ${event.payload?.$case}`)
  }
  await t.rejects(again(), { envelopeCode: -32004, message: /terminal state \(completed\) and cannot be subscribed to/ })
  await t.rejects(async () => {
    for await (const event of client.resubscribeTask({ tenant: '', id: '00000000-0000-4000-8000-000000000000' })) t.fail(`got ${event.payload?.$case}`)
  }, { envelopeCode: -32001, message: /not found/ })
})

t.test('tasks/resubscribe to a task waiting for input sends it once, as it stands', async (t) => {
  const { base } = await serveApp(t)
  const client = await a2aClient(base, 'approval')
  const asked = asTask(await client.sendMessage(userMessage('may I')))
  const events = []
  for await (const event of client.resubscribeTask({ tenant: '', id: asked.id })) events.push(event.payload)
  t.same(events.map((e) => e?.$case), ['task'])
  t.equal((events[0] as any).value.status.state, TaskState.TASK_STATE_INPUT_REQUIRED)
})

t.test('push notification configs are not supported: every method answers -32003', async (t) => {
  const { base } = await serveApp(t)
  const client = await a2aClient(base, 'agent')
  const task = asTask(await client.sendMessage(userMessage('hi')))
  // The client itself refuses create, get and list (the card says pushNotifications: false); delete it sends.
  await t.rejects(client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg' }), { envelopeCode: -32003, message: /not supported/ })
  const methods = ['tasks/pushNotificationConfig/set', 'tasks/pushNotificationConfig/get', 'tasks/pushNotificationConfig/list', 'tasks/pushNotificationConfig/delete']
  for (const method of methods) {
    const params = { id: task.id, taskId: task.id, pushNotificationConfig: { url: 'https://example.com/hook' } }
    const res = await fetch(`${base}/a2a/agent`, {
      method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
    })
    t.equal(res.status, 400, method)
    t.same(await res.json(), { jsonrpc: '2.0', id: 7, error: { code: -32003, message: 'Push Notification is not supported' } }, method)
  }
})

t.test('broken JSON-RPC requests get the spec\'s error codes, never a 5xx', async (t) => {
  const { base } = await serveApp(t)
  const post = async (path: string, body: string) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body })
    return { status: res.status, body: await res.json() as any }
  }
  const cases: [string, string, number, number][] = [
    ['/a2a/agent', '{not json', 400, -32700],
    ['/a2a/agent', '[1,2]', 400, -32600],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tasks/get' }), 400, -32600],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '2.0', method: 'tasks/get', params: {} }), 400, -32600],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list' }), 400, -32601],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { role: 'user' } } }), 400, -32602],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'file', file: {} }] } } }), 400, -32602],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: '00000000-0000-4000-8000-000000000000' } }), 404, -32001],
    ['/a2a/agent', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: {} }), 400, -32602],
    ['/a2a/no-such-assistant', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }), 404, -32602],
  ]
  for (const [path, body, status, code] of cases) {
    const res = await post(path, body)
    t.equal(res.status, status, `${body} → HTTP ${status}`)
    t.equal(res.body.error?.code, code, `${body} → ${code}`)
    t.equal(res.body.jsonrpc, '2.0')
  }
  const withId = await post('/a2a/agent', JSON.stringify({ jsonrpc: '2.0', id: 'abc', method: 'nope' }))
  t.equal(withId.body.id, 'abc', 'an error answers the request\'s id')
  const anonymous = await fetch(`${base}/a2a/agent`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(anonymous.status, 403)
})
