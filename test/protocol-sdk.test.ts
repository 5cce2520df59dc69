// The session protocol as the official SDK (`latest`) speaks it: `client.threads.stream()` over SSE
// and over a WebSocket, against hangar on a real port. Runs started this way are ordinary runs:
// the older endpoints see them.

import t from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { WebSocket } from 'ws'
import { API_KEY, serveApp, until } from './helpers.js'
import { readEvents, rootEnded } from './protocol-helpers.js'

interface ProtocolEvent {
  seq: number
  event_id: string
  method: string
  params: { namespace: string[]; data: Record<string, unknown> }
}

const say = (content: string) => ({ messages: [{ type: 'human', content }] })

/** Every event the thread stream hands out, and whether it saw the root lifecycle end `ended` times. */
function recorder(thread: { onEvent(listener: (event: ProtocolEvent) => void): () => void }) {
  const events: ProtocolEvent[] = []
  thread.onEvent((event) => events.push(event))
  const rootEnds = () => events.filter((e) => e.method === 'lifecycle' && e.params.namespace.length === 0 && ['completed', 'interrupted', 'failed'].includes(e.params.data.event as string)).length
  return { events, rootEnds }
}

const seqs = (events: { seq: number }[]) => events.map((e) => e.seq)

/** What the thread's log holds on the channels the SDK's stream asks for, read back in one stream from the start. */
async function logged(base: string, threadId: string, runs: number) {
  const { events } = await readEvents(base, threadId, { channels: ['lifecycle', 'input', 'values'] }, rootEnded(runs))
  return seqs(events)
}

t.test('SSE: a run streams its messages and output; the run is the one the older endpoints list', async (t) => {
  const { base, api, app } = await serveApp(t)
  // What the inspector hears of runs (its live view), while this run goes.
  const heard: { run_id: string; status: string | null }[] = []
  t.teardown(app.emulator.bus.subscribe((message) => {
    if (message.topic === 'run') heard.push(message.data as { run_id: string; status: string | null })
  }))
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = client.threads.stream({ assistantId: 'agent' })
  t.teardown(() => thread.close())
  const { events, rootEnds } = recorder(thread as never)

  const started = await thread.run.start({ input: say('hello there world') })
  const output = (await thread.output) as { messages: { type: string; content: unknown }[] }
  t.same(output.messages.map((m) => m.type), ['human', 'ai'])
  t.same(output.messages[1].content, [{ type: 'text', text: 'hello there world' }], 'the AI message, as the protocol normalizes it')
  await until(() => rootEnds() === 1, 'the root lifecycle ends')

  t.same(seqs(events).sort((a, b) => a - b), await logged(base, thread.threadId, 1), 'every logged event of its channels, none missing')
  t.equal(events.length, new Set(seqs(events)).size, 'no event handed out twice')

  const runs = await api.get(`/threads/${thread.threadId}/runs`)
  t.equal(runs.status, 200)
  t.same(runs.body.map((r: { run_id: string }) => r.run_id), [(started as { run_id: string }).run_id])
  t.equal(runs.body[0].status, 'success')
  t.same(runs.body[0].kwargs.stream_mode, ['values', 'updates', 'messages', 'tools', 'custom', 'tasks'])
  t.equal(runs.body[0].kwargs.__protocol_stream_run, true)
  t.equal(runs.body[0].multitask_strategy, 'enqueue')
  t.same(heard.filter((c) => c.status !== null).map((c) => [c.run_id, c.status]), [
    [runs.body[0].run_id, 'pending'], [runs.body[0].run_id, 'running'], [runs.body[0].run_id, 'success'],
  ], 'the inspector hears of the run like any other')
})

t.test('SSE: an interrupt is answered with input.respond; the second run continues the thread\'s seq', async (t) => {
  const { base, api } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = client.threads.stream({ assistantId: 'approval' })
  t.teardown(() => thread.close())
  const { events, rootEnds } = recorder(thread as never)

  await thread.run.start({ input: say('ship it') })
  await until(() => thread.interrupted && thread.interrupts.length === 1, 'the interrupt reaches the client')
  const [pending] = thread.interrupts
  t.same(pending.payload, { question: 'Approve this request?', request: 'ship it' })
  const state = await api.get(`/threads/${thread.threadId}/state`)
  t.equal(state.body.tasks[0].interrupts[0].id, pending.interruptId, 'the interrupt id is the one the state shows')

  await thread.input.respond({ interrupt_id: pending.interruptId, namespace: [], response: 'yes' })
  await until(() => rootEnds() === 2, 'the resumed run ends')
  const runs = await api.get(`/threads/${thread.threadId}/runs`)
  t.same(runs.body[0].kwargs.command, { resume: { [pending.interruptId]: 'yes' } }, 'the resume is a map from interrupt id, as on the real server')
  const after = await api.get(`/threads/${thread.threadId}/state`)
  t.equal(after.body.values.answer, 'yes')
  t.equal(after.body.values.messages.at(-1).content, 'You answered: yes')

  t.same([...new Set(seqs(events))].sort((a, b) => a - b), await logged(base, thread.threadId, 2), 'both runs, one seq, nothing missing')
  const runStarts = events.filter((e) => e.method === 'lifecycle' && e.params.namespace.length === 0 && e.params.data.event === 'running')
  t.equal(runStarts.length, 2)
})

t.test('WebSocket: a run and an interrupt over one socket; the key travels in the query', async (t) => {
  const { base, api } = await serveApp(t)
  const socketUrl = (url: string) => `${url}${url.includes('?') ? '&' : '?'}api_key=${API_KEY}`
  const opened: WebSocket[] = []
  const client = new Client({ apiUrl: base, apiKey: null as never })
  const thread = client.threads.stream({
    assistantId: 'approval',
    transport: 'websocket',
    webSocketFactory: (url: string) => {
      const socket = new WebSocket(socketUrl(url))
      opened.push(socket)
      return socket as never
    },
  })
  t.teardown(() => thread.close())
  const { events, rootEnds } = recorder(thread as never)

  await thread.run.start({ input: say('over websocket') })
  await until(() => thread.interrupts.length === 1, 'the interrupt arrives over the socket')
  await thread.input.respond({ interrupt_id: thread.interrupts[0].interruptId, namespace: [], response: 'approved over ws' })
  await until(() => rootEnds() === 2, 'the resumed run ends')
  t.equal(opened.length, 1, 'one socket for everything')
  const state = await api.get(`/threads/${thread.threadId}/state`)
  t.equal(state.body.values.answer, 'approved over ws')
  t.same([...new Set(seqs(events))].sort((a, b) => a - b), await logged(base, thread.threadId, 2))
})

t.test('WebSocket: without a key the upgrade is refused; with auth off none is needed', async (t) => {
  const { base } = await serveApp(t)
  const url = `${base.replace('http', 'ws')}/threads/0c61e60d-32b3-42a0-9abd-ac262a0bf00d/stream/events`
  const refused = await new Promise<number>((resolve) => {
    const socket = new WebSocket(url)
    socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
    socket.on('open', () => resolve(101))
  })
  t.equal(refused, 403)

  const open = await serveApp(t, { auth: 'off' })
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = new WebSocket(`${open.base.replace('http', 'ws')}/threads/0c61e60d-32b3-42a0-9abd-ac262a0bf00d/stream/events`)
    socket.on('open', () => socket.send('{"id":1,"method":"agent.getTree"}'))
    socket.on('message', (data: Buffer) => {
      resolve(data.toString())
      socket.close()
    })
    socket.on('error', reject)
  })
  t.equal(answer, '{"type":"error","id":1,"error":"no_such_run","message":"No active run is bound to this thread."}')
})

t.test('what one protocol streams the other reads: an older run on /stream/events, a run.start run on the run stream and join', async (t) => {
  const { base, api } = await serveApp(t)
  // A run through the older endpoints...
  const thread = (await api.post('/threads', {})).body.thread_id as string
  const waited = await api.post(`/threads/${thread}/runs/wait`, { assistant_id: 'agent', input: say('the older way') })
  t.equal(waited.status, 200)
  // ...is in the thread's protocol log, from seq 1.
  const { events } = await readEvents(base, thread, { channels: ['lifecycle', 'messages'] }, rootEnded(1))
  t.same(events.filter((e) => e.params.namespace.length === 0).map((e) => e.params.data.event), ['running', 'completed'])
  t.equal(events.filter((e) => e.params.data.event === 'content-block-delta').map((e) => (e.params.data.delta as { text: string }).text).join(''), 'the older way')

  // A run started by run.start has the run's own log too: join and the run stream read it.
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const stream = client.threads.stream({ assistantId: 'agent' })
  t.teardown(() => stream.close())
  const { run_id: runId } = (await stream.run.start({ input: say('the new way') })) as { run_id: string }
  const joined = await api.get(`/threads/${stream.threadId}/runs/${runId}/join`)
  t.equal(joined.body.messages.at(-1).content, 'the new way')
  const replay = await (await fetch(`${base}/threads/${stream.threadId}/runs/${runId}/stream`, { headers: { 'x-api-key': API_KEY, 'last-event-id': '-1' } })).text()
  t.match(replay, /^event: metadata\n/)
  t.match(replay, /event: values\n/)
})

t.test('run.start with forkFrom (the new hook\'s edit) runs from that checkpoint: a new branch, the old one kept', async (t) => {
  const { base, api } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = client.threads.stream({ assistantId: 'agent' })
  t.teardown(() => thread.close())
  const { rootEnds } = recorder(thread as never)
  await thread.run.start({ input: say('first') })
  await until(() => rootEnds() === 1, 'the first turn ends')
  await thread.run.start({ input: say('second') })
  await until(() => rootEnds() === 2, 'the second turn ends')
  const history = (await client.threads.getHistory(thread.threadId, { limit: 20 }))
  const beforeFirst = history.at(-1)!.checkpoint.checkpoint_id!

  await thread.run.start({ input: say('first, edited'), forkFrom: beforeFirst } as never)
  await until(() => rootEnds() === 3, 'the forked turn ends')
  const state = await client.threads.getState<{ messages: { content: unknown }[] }>(thread.threadId)
  t.same(state.values.messages.map((m) => m.content), ['first, edited', 'first, edited'], 'the state is the first checkpoint\'s plus the new turn')
  const after = await client.threads.getHistory(thread.threadId, { limit: 20 })
  t.equal(after.length, history.length + 3, 'the old branch stays in the history')
  const input = after.find((s) => s.metadata?.source === 'input' && s.metadata?.step === 0)!
  t.equal(input.parent_checkpoint?.checkpoint_id, beforeFirst, 'the new branch hangs off the checkpoint named')
  const runs = await api.get(`/threads/${thread.threadId}/runs`)
  t.equal(runs.body[0].kwargs.config.configurable.checkpoint_id, beforeFirst, 'the SDK sent it as config.configurable.checkpoint_id')
})
