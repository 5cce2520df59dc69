// Runs' webhooks: a real listening hangar, runs created by the official JS SDK with `webhook`, and a
// real HTTP server on this machine as the receiver. Retries are driven by the manual clock.

import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { BusMessage } from '../src/admin/bus.js'
import type { JournalEntry } from '../src/admin/journal.js'
import type { Config } from '../src/config.js'
import { VERSION } from '../src/version.js'
import { serveApp, someoneWaitsOn, START, turns, until } from './helpers.js'

const HOUR = 3_600_000

interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: any
}

/**
 * A webhook receiver on 127.0.0.1: it answers each request with the next status of `answers` (200
 * once they run out), or holds it unanswered when that status is `'hang'`.
 */
async function receiver(t: Test, answers: (number | 'hang')[] = []) {
  const received: Received[] = []
  const held: ServerResponse[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      received.push({ method: request.method!, url: request.url!, headers: request.headers, body: text ? JSON.parse(text) : undefined })
      const answer = answers.shift() ?? 200
      if (answer === 'hang') return held.push(response)
      response.writeHead(answer, { 'content-type': 'text/plain', 'x-receiver': 'test' }).end(answer < 300 ? 'ok' : 'no')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = async () => {
    if (!server.listening) return
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  t.teardown(close)
  return { received, held, url, close }
}

async function serve(t: Test, config: Partial<Config> = {}) {
  const served = await serveApp(t, config)
  const client = new Client({ apiUrl: served.base, apiKey: 'test-key', callerOptions: { maxRetries: 0 } })
  const messages: BusMessage[] = []
  t.teardown(served.app.emulator.bus.subscribe((message) => messages.push(message)))
  // The bus follows the clock while subscribed: what waits on the clock besides it.
  const followers = served.clock.listenerCount('change')
  const waiting = () => served.clock.listenerCount('change') > followers
  const outgoing = () => served.app.emulator.journal.list({ direction: 'outgoing' })
  return { ...served, client, messages, outgoing, waiting }
}

/** The fields a webhook adds to the Run object. */
const ADDED = ['run_started_at', 'run_ended_at', 'webhook_sent_at', 'values', 'error']
const runPart = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([key]) => !ADDED.includes(key)))
const iso = (ms: number) => new Date(ms).toISOString()
const input = (text: string) => ({ messages: [{ role: 'user', content: text }] })

t.test('a run created with a webhook POSTs the Run with its final values there when it succeeds', async (t) => {
  const hook = await receiver(t)
  const { client } = await serve(t)
  const thread = await client.threads.create()
  const webhook = `${hook.url}/hooks/runs?token=s3cret`
  const run = await client.runs.create(thread.thread_id, 'agent', { input: input('hello hook'), webhook })
  await client.runs.join(thread.thread_id, run.run_id)
  await until(() => hook.received.length === 1, 'the webhook is called')

  const [call] = hook.received
  t.equal(call.method, 'POST')
  t.equal(call.url, '/hooks/runs?token=s3cret', 'the URL is called as given, query included')
  t.equal(call.headers['content-type'], 'application/json')
  t.equal(call.headers['user-agent'], `hangar/${VERSION}`)
  const stored = await client.runs.get(thread.thread_id, run.run_id)
  t.same(runPart(call.body), stored, 'the body is the Run object as GET /runs/{id} shows it')
  t.equal(call.body.status, 'success')
  t.equal(call.body.kwargs.webhook, webhook, 'the run keeps its webhook in kwargs')
  const state = await client.threads.getState(thread.thread_id)
  t.same(call.body.values, state.values, 'values are the state the run ended with')
  t.same(call.body.values.messages.map((m: any) => [m.type, m.content]), [['human', 'hello hook'], ['ai', 'hello hook']])
  t.equal(call.body.run_started_at, iso(START))
  t.equal(call.body.run_ended_at, iso(START))
  t.equal(call.body.webhook_sent_at, iso(START), 'the times are on hangar\'s clock')
  t.notOk('error' in call.body, 'a run that succeeded has no error')
})

t.test('streamed, waited-for and stateless runs call their webhooks too, and a failed run sends its error', async (t) => {
  const hook = await receiver(t)
  const { client } = await serve(t)
  const thread = await client.threads.create()
  let streamed: string | undefined
  for await (const _part of client.runs.stream(thread.thread_id, 'agent', {
    input: input('streamed'), webhook: `${hook.url}/stream`, onRunCreated: ({ run_id }) => (streamed = run_id),
  }));
  await until(() => hook.received.length === 1, 'the streamed run calls its webhook')
  t.equal(hook.received[0].url, '/stream')
  t.equal(hook.received[0].body.run_id, streamed)

  const failed = await client.runs.wait(null, 'flaky', { input: input('please fail'), webhook: `${hook.url}/stateless`, raiseError: false })
  t.same(failed, { __error__: { error: 'FlakyError', message: 'The flaky graph failed on request: please fail' } })
  await until(() => hook.received.length === 2, 'the stateless run calls its webhook')
  const body = hook.received[1].body
  t.equal(hook.received[1].url, '/stateless')
  t.equal(body.status, 'error')
  t.same(body.error, { error: 'FlakyError', message: 'The flaky graph failed on request: please fail' }, 'the error as the run\'s error event has it')
  t.equal(body.kwargs.temporary, true, 'it ran on a temporary thread (deleted since)')
  t.equal(body.assistant_id, (await client.assistants.search({ graphId: 'flaky' }))[0].assistant_id)

  await client.runs.wait(thread.thread_id, 'agent', { input: input('waited'), webhook: `${hook.url}/wait` })
  await until(() => hook.received.length === 3, 'the waited-for run calls its webhook')
  t.equal(hook.received[2].url, '/wait')
  t.equal(hook.received[2].body.status, 'success')
  t.equal(hook.received[2].body.values.messages.at(-1).content, 'waited')
})

t.test('a cron whose payload names a webhook has each of its runs POST there when it ends', async (t) => {
  const hook = await receiver(t)
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  const webhook = `${hook.url}/cron`
  await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *', input: input('standup'), webhook })
  clock.advance(9 * HOUR)
  await until(() => hook.received.length === 1, 'the first occurrence\'s run calls the webhook')
  clock.advance(24 * HOUR)
  await until(() => hook.received.length === 2, 'the next day\'s run calls it too')

  const runs = await client.runs.list(thread.thread_id)
  t.same(hook.received.map((r) => r.body.run_id), runs.map((run) => run.run_id).reverse(), 'one call per run the cron started, in order')
  t.same(hook.received.map((r) => r.url), ['/cron', '/cron'])
  const [first, second] = hook.received.map((r) => r.body)
  t.same([first.thread_id, first.status, first.kwargs.webhook], [thread.thread_id, 'success', webhook])
  t.same(first.values.messages.map((m: any) => m.content), ['standup', 'standup'])
  t.equal(first.run_started_at, iso(START + 9 * HOUR), 'the first ran at 09:00 on hangar\'s clock')
  t.equal(second.run_started_at, iso(START + 33 * HOUR))
  t.same(second.values.messages.map((m: any) => m.content), ['standup', 'standup', 'standup', 'standup'], 'the second ran on the same thread')
})

t.test('a stateless cron\'s run calls its webhook with its values, though its thread is deleted when it ends', async (t) => {
  const hook = await receiver(t)
  const { client, clock } = await serve(t)
  await client.crons.create('agent', { schedule: '0 9 * * *', input: input('nightly'), webhook: `${hook.url}/stateless-cron` })
  clock.advance(9 * HOUR)
  await until(() => hook.received.length === 1, 'the run calls the webhook')
  const body = hook.received[0].body
  t.equal(hook.received[0].url, '/stateless-cron')
  t.equal(body.status, 'success')
  t.same(body.values.messages.map((m: any) => m.content), ['nightly', 'nightly'])
  t.same(await client.threads.search(), [], 'its thread is gone (on_run_completed: delete)')
})

t.test('an interrupted run calls its webhook with status interrupted and no values; a rolled-back one calls none', async (t) => {
  const hook = await receiver(t)
  const { client, clock } = await serve(t)
  const thread = await client.threads.create()
  let thinking = someoneWaitsOn(clock)
  const run = await client.runs.create(thread.thread_id, 'slow_agent', { input: input('stop me'), webhook: `${hook.url}/cancelled` })
  await thinking
  clock.advance(500)
  await client.runs.cancel(thread.thread_id, run.run_id, true, 'interrupt')
  await until(() => hook.received.length === 1, 'the interrupted run calls its webhook')
  const body = hook.received[0].body
  t.equal(body.status, 'interrupted')
  t.equal(body.values, null)
  t.equal(body.run_started_at, iso(START))
  t.equal(body.run_ended_at, iso(START + 500))

  thinking = someoneWaitsOn(clock)
  const rolled = await client.runs.create(thread.thread_id, 'slow_agent', { input: input('roll back'), webhook: `${hook.url}/rolled` })
  await thinking
  await client.runs.cancel(thread.thread_id, rolled.run_id, true, 'rollback')
  await turns(200)
  t.equal(hook.received.length, 1, 'a run rolled back is gone, and its webhook is not called')
})

t.test('a receiver that fails twice gets three attempts, 1 s and 2 s apart on hangar\'s clock, each journaled and announced', async (t) => {
  const hook = await receiver(t, [500, 503, 200])
  const { client, clock, messages, outgoing, api, waiting } = await serve(t)
  const thread = await client.threads.create()
  const run = await client.runs.wait(thread.thread_id, 'agent', { input: input('retry me'), webhook: `${hook.url}/flaky?token=s3cret` }) as any
  t.equal(run.messages.at(-1).content, 'retry me', 'the run answers whatever its webhook does')

  await until(() => outgoing().length === 1 && waiting(), 'the first attempt failed and the next one waits')
  clock.advance(999)
  await turns(100)
  t.equal(hook.received.length, 1, 'no second attempt before 1 s')
  clock.advance(1)
  await until(() => outgoing().length === 2 && waiting(), 'the second attempt failed and the next one waits')
  t.equal(hook.received.length, 2)
  clock.advance(1999)
  await turns(100)
  t.equal(hook.received.length, 2, 'no third attempt before 2 s more')
  clock.advance(1)
  await until(() => outgoing().length === 3, 'the third attempt is journaled')
  await turns(20)
  t.notOk(waiting(), 'nothing more is scheduled after a delivery')
  t.equal(hook.received.length, 3)
  t.same(hook.received.map((r) => r.body), [hook.received[0].body, hook.received[0].body, hook.received[0].body], 'every attempt sends the same body')

  const entries = outgoing()
  t.same(entries.map((e) => [e.method, e.path, e.status, e.time]), [
    ['POST', '/flaky', 200, iso(START + 3000)],
    ['POST', '/flaky', 503, iso(START + 1000)],
    ['POST', '/flaky', 500, iso(START)],
  ])
  t.same(entries.map((e) => e.webhook), [
    { url: `${hook.url}/flaky?token=[redacted]`, run_id: hook.received[0].body.run_id, thread_id: thread.thread_id, attempt: 3, max_attempts: 3, outcome: 'delivered', error: null, next_attempt_at: null },
    { url: `${hook.url}/flaky?token=[redacted]`, run_id: hook.received[0].body.run_id, thread_id: thread.thread_id, attempt: 2, max_attempts: 3, outcome: 'retrying', error: null, next_attempt_at: iso(START + 3000) },
    { url: `${hook.url}/flaky?token=[redacted]`, run_id: hook.received[0].body.run_id, thread_id: thread.thread_id, attempt: 1, max_attempts: 3, outcome: 'retrying', error: null, next_attempt_at: iso(START + 1000) },
  ])
  const first = entries[2]
  t.equal(first.direction, 'outgoing')
  t.equal(first.query, 'token=[redacted]', 'a secret in the webhook URL is redacted')
  t.equal(first.request_headers['content-type'], 'application/json')
  t.match(first.response_headers, { 'x-receiver': 'test' }, 'the receiver\'s answer headers are kept')
  t.equal(JSON.parse(first.request_body!).run_id, hook.received[0].body.run_id)
  t.ok(first.latency_ms >= 0)

  // Over the admin API: the filter, and incoming entries marked as such.
  const page = await api.get('/_hangar/requests?direction=outgoing')
  t.same(page.body.requests.map((e: JournalEntry) => e.id), entries.map((e) => e.id))
  const incoming = (await api.get('/_hangar/requests?direction=incoming')).body.requests as JournalEntry[]
  t.ok(incoming.length > 0 && incoming.every((e) => e.direction === 'incoming' && !('webhook' in e)), 'requests to hangar are incoming')

  const announced = messages.filter((m) => m.topic === 'webhook').map((m) => m.data)
  t.same(announced, [
    { run_id: first.webhook!.run_id, thread_id: thread.thread_id, scope: '', attempt: 1, status: 500, outcome: 'retrying', request_id: entries[2].id },
    { run_id: first.webhook!.run_id, thread_id: thread.thread_id, scope: '', attempt: 2, status: 503, outcome: 'retrying', request_id: entries[1].id },
    { run_id: first.webhook!.run_id, thread_id: thread.thread_id, scope: '', attempt: 3, status: 200, outcome: 'delivered', request_id: entries[0].id },
  ], 'each attempt is announced on the event bus')
  t.ok(messages.some((m) => m.topic === 'request' && m.data.id === entries[0].id), 'and as a journaled request')
})

t.test('a 4xx answer is final; an unreachable receiver is tried three times and then given up', async (t) => {
  const hook = await receiver(t, [404])
  const gone = await receiver(t)
  await gone.close()
  const { client, clock, outgoing, waiting } = await serve(t)
  await client.runs.wait(null, 'agent', { input: input('x'), webhook: `${hook.url}/gone` })
  await until(() => outgoing().length === 1, 'the attempt is journaled')
  await turns(50)
  t.notOk(waiting(), 'no retry is scheduled after a 404')
  t.match(outgoing()[0], { status: 404, webhook: { attempt: 1, outcome: 'failed', next_attempt_at: null } })

  await client.runs.wait(null, 'agent', { input: input('y'), webhook: `${gone.url}/down` })
  await until(() => outgoing().length === 2 && waiting(), 'the first attempt at the unreachable receiver')
  clock.advance(1000)
  await until(() => outgoing().length === 3 && waiting(), 'the second attempt')
  clock.advance(2000)
  await until(() => outgoing().length === 4, 'the third attempt')
  await turns(20)
  t.notOk(waiting(), 'then it is given up')
  const attempts = outgoing().slice(0, 3).reverse()
  t.same(attempts.map((e) => [e.status, e.webhook!.attempt, e.webhook!.outcome, e.webhook!.error]), [
    [0, 1, 'retrying', 'ECONNREFUSED'],
    [0, 2, 'retrying', 'ECONNREFUSED'],
    [0, 3, 'failed', 'ECONNREFUSED'],
  ])
  t.same(attempts.map((e) => e.time), [iso(START), iso(START + 1000), iso(START + 3000)])
  t.equal((await client.runs.wait(null, 'agent', { input: input('still here') }) as any).messages.at(-1).content, 'still here', 'hangar serves on')
})

t.test('a receiver that never answers does not hold up the run; the attempt times out after 30 s of the clock', async (t) => {
  const hook = await receiver(t, ['hang', 200])
  const { client, clock, outgoing, app, waiting } = await serve(t)
  const thread = await client.threads.create()
  const result = await client.runs.wait(thread.thread_id, 'agent', { input: input('no hurry'), webhook: `${hook.url}/slow` }) as any
  t.equal(result.messages.at(-1).content, 'no hurry', 'the run ends whether or not its webhook answers')
  t.equal((await client.threads.get(thread.thread_id)).status, 'idle')
  await until(() => hook.held.length === 1 && waiting(), 'the receiver holds the first attempt')
  clock.advance(29_999)
  await turns(50)
  t.equal(outgoing().length, 0, 'still waiting for an answer')
  clock.advance(1)
  await until(() => outgoing().length === 1, 'the attempt timed out')
  t.match(outgoing()[0], { status: 0, webhook: { attempt: 1, outcome: 'retrying', error: 'no answer within 30 s' } })
  t.equal(app.emulator.webhooks.pending, 1, 'the delivery goes on')
})

t.test('shutdown stops a delivery that waits to try again, and sends no webhook for the runs it interrupts', async (t) => {
  const hook = await receiver(t, [500])
  const { client, clock, outgoing, app, waiting } = await serve(t)
  await client.runs.wait(null, 'agent', { input: input('x'), webhook: `${hook.url}/retry` })
  await until(() => outgoing().length === 1 && waiting(), 'the next attempt waits')
  const thread = await client.threads.create()
  const thinking = someoneWaitsOn(clock)
  await client.runs.create(thread.thread_id, 'slow_agent', { input: input('interrupted by shutdown'), webhook: `${hook.url}/shutdown` })
  await thinking
  await app.close()
  t.equal(app.emulator.webhooks.pending, 0, 'no delivery is left in progress')
  clock.advance(10_000)
  await turns(100)
  t.same(hook.received.map((r) => r.url), ['/retry'], 'no retry after shutdown, and no webhook for the run shutdown interrupted')
})

t.test('with HANGAR_WEBHOOK_LOOPBACK off, a webhook on this machine is refused at run creation with the hosted server\'s 422', async (t) => {
  const hook = await receiver(t)
  const { client, api } = await serve(t, { webhookLoopback: false })
  const thread = await client.threads.create()
  const refused = async (webhook: string) => {
    const res = await api.post(`/threads/${thread.thread_id}/runs`, { assistant_id: 'agent', input: input('x'), webhook })
    t.equal(res.status, 422, webhook)
    return res.body.detail
  }
  t.equal(await refused(`${hook.url}/hook`), 'Webhook host blocked: localhost address')
  t.equal(await refused('http://localhost:8080/hook'), 'Webhook host blocked: localhost address')
  t.equal(await refused('https://[::1]/hook'), 'Webhook host blocked: localhost address')
  t.match(await refused('/internal/hook'), /^Loopback webhooks \(relative URLs and localhost\) are disabled by default\./)
  t.same(await client.runs.list(thread.thread_id), [], 'no run was created')
  const sdkError = await client.runs.create(thread.thread_id, 'agent', { input: input('x'), webhook: `${hook.url}/hook` }).catch((error: Error) => error)
  t.match(String(sdkError), /422/, 'the SDK reports the 422')

  // Delayed past the test's end (the clock stands still), so that nothing is sent off this machine.
  const allowed = await client.runs.create(thread.thread_id, 'agent', { input: input('x'), webhook: 'https://hooks.example.com/run', afterSeconds: 3600 })
  t.equal((allowed as unknown as { kwargs: { webhook: string } }).kwargs.webhook, 'https://hooks.example.com/run', 'a public host is accepted')
})

t.test('a webhook that is not an http(s) URL is refused with 422, and a batch holding one creates no run', async (t) => {
  const { api, client } = await serve(t)
  const thread = await client.threads.create()
  const cases: [string, string][] = [
    ['ftp://example.com/hook', "Webhook host blocked: scheme 'ftp' not allowed"],
    ['not a url', "Invalid webhook hostname ''"],
    ['http://', "Invalid webhook hostname ''"],
    ['mailto:ops@example.com', "Invalid webhook hostname ''"],
    [`https://example.com/${'x'.repeat(4096)}`, 'Webhook URL too long'],
  ]
  for (const [webhook, detail] of cases) {
    const res = await api.post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: 'agent', input: input('x'), webhook })
    t.same([res.status, res.body], [422, { detail }], webhook.slice(0, 40))
  }
  const empty = await api.post('/runs/wait', { assistant_id: 'agent', webhook: '' })
  t.equal(empty.status, 422)
  t.equal(empty.body.detail[0].type, 'string_too_short')
  t.same(empty.body.detail[0].loc, ['body', 'webhook'])

  const batch = await api.post('/runs/batch', [
    { assistant_id: 'agent', input: input('a'), on_completion: 'keep' },
    { assistant_id: 'agent', input: input('b'), on_completion: 'keep', webhook: 'gopher://example.com' },
  ])
  t.equal(batch.status, 422)
  const threads = await api.post('/threads/search', {})
  t.same(threads.body.map((th: any) => th.thread_id), [thread.thread_id], 'no thread was created by the batch')
  t.same(await client.runs.list(thread.thread_id), [], 'no run was created')
})

t.test('a relative webhook (loopback allowed) is called on hangar itself, at the address the client used', async (t) => {
  const { client, outgoing, app, base } = await serve(t)
  await client.runs.wait(null, 'agent', { input: input('x'), webhook: '/not-a-route' })
  await until(() => outgoing().length === 1, 'the attempt is journaled')
  const [call] = outgoing()
  t.equal(call.webhook!.url, `${base}/not-a-route`)
  const arrived = app.emulator.journal.list({ direction: 'incoming', path: '/not-a-route' })
  t.equal(arrived.length, 1, 'hangar received its own webhook')
  t.equal(call.status, arrived[0].status, 'and answered it (without credentials, as anyone)')
})
