// RemoteGraph (from `@langchain/langgraph`, its `latest`): a graph served by hangar used as a node
// or a graph in a LangGraph JS program. It sends a `Command` as `{lg_name: "Command", resume, goto: []}`
// in the run's `command`; an empty `goto` means no goto, as on the real server (1.5.1).

import t from 'tap'
import { Command } from '@langchain/langgraph'
import { RemoteGraph } from '@langchain/langgraph/remote'
import { API_KEY, serveApp } from './helpers.js'

const textOf = (message: { content: unknown }) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content))

t.test('RemoteGraph runs a graph, stops at its interrupt and resumes it with a Command', async (t) => {
  const { base, api } = await serveApp(t)
  const remote = new RemoteGraph({ graphId: 'approval', url: base, apiKey: API_KEY })
  const threadId = '5b0f6a3e-8c1d-4e2f-9a7b-3c4d5e6f7a8b'
  const config = { configurable: { thread_id: threadId } }

  // RemoteGraph raises the remote interrupt as a GraphInterrupt, so an enclosing graph stops too.
  const interrupted = await remote.invoke({ messages: [{ role: 'user', content: 'ship it' }] }, config).then(() => null, (error: unknown) => error)
  t.match(interrupted, { name: 'GraphInterrupt', interrupts: [{ value: { question: 'Approve this request?', request: 'ship it' } }] })
  t.equal((await api.get(`/threads/${threadId}`)).body.status, 'interrupted', 'the thread was created on the fly (if_not_exists) and waits')

  const resumed = await remote.invoke(new Command({ resume: 'yes' }), config)
  t.same(resumed.messages.map(textOf), ['ship it', 'You answered: yes'])
  t.equal(resumed.answer, 'yes')
  const runs = (await api.get(`/threads/${threadId}/runs`)).body as { kwargs: { command: unknown } }[]
  t.same(runs[0].kwargs.command, { resume: 'yes', goto: [] }, 'the command kept as the real server keeps it (without lg_name)')
  t.equal((await api.get(`/threads/${threadId}`)).body.status, 'idle')
  const history = (await api.post(`/threads/${threadId}/history`, { limit: 10 })).body as unknown[]
  t.equal(history.length, 4, 'an interrupted then resumed run leaves four checkpoints, as LangGraph does')
})

t.test('RemoteGraph streams updates; a Command with goto runs that node beside the interrupted one, which asks again', async (t) => {
  const { base, api } = await serveApp(t)
  const remote = new RemoteGraph({ graphId: 'approval', url: base, apiKey: API_KEY })
  const config = { configurable: { thread_id: '6c1a7b4f-9d2e-4f30-8b8c-4d5e6f7a8b9c' } }
  const first: Record<string, unknown>[] = []
  const stopped = await (async () => {
    for await (const chunk of await remote.stream({ messages: [{ role: 'user', content: 'deploy' }] }, { ...config, streamMode: 'updates' })) first.push(chunk)
  })().then(() => null, (error: unknown) => error)
  t.match(stopped, { name: 'GraphInterrupt' }, 'the stream ends with the interrupt raised')
  t.same(first, [], 'the approval graph asks before any node has written')

  // As in LangGraph: the goto target and the interrupted node share a superstep; `ask` interrupts again.
  const after: Record<string, unknown>[] = []
  const again = await (async () => {
    for await (const chunk of await remote.stream(new Command({ goto: 'respond', update: { answer: 'skipped' } }), { ...config, streamMode: 'updates' })) after.push(chunk)
  })().then(() => null, (error: unknown) => error)
  t.same(after.map((c) => Object.keys(c)[0]), ['respond'], 'the node gone to ran')
  t.match(after[0], { respond: { messages: [{ content: 'You answered: skipped' }] } })
  t.match(again, { name: 'GraphInterrupt', interrupts: [{ value: { question: 'Approve this request?' } }] }, 'then the interrupted node asked again')
  const thread = (await api.get(`/threads/${config.configurable.thread_id}`)).body
  t.equal(thread.status, 'interrupted')
  t.same(thread.values.messages.map((m: { content: string }) => m.content), ['deploy', 'You answered: skipped'])
})
