// The agent server's crons, driven by the official SDK's `client.crons` over a real listening
// hangar, and by raw requests where the SDK has no method (get) or would not send the body: what a
// cron holds, how its runs fire on hangar's clock (advanced, never slept: each occurrence once and
// in order; a jump over many, one catch-up run per cron; on a running clock, on time), timezones,
// end times, disabled crons, stateless crons and their threads, patch, search and count, one set of
// crons per agent server, and every refusal's body.

import t, { type Test } from 'tap'
import { Client, type Cron } from '@langchain/langgraph-sdk'
import type { BusMessage } from '../src/admin/bus.js'
import { Clock } from '../src/clock.js'
import { beforeDeadline, dockerDeployment, serveApp, START, TENANT_A, until } from './helpers.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const at = (ms: number) => new Date(START + ms).toISOString()
const UNKNOWN = '00000000-0000-4000-8000-000000000000'
const say = (content: string) => ({ messages: [{ role: 'user', content }] })

async function serve(t: Test, clock?: Clock) {
  const served = await serveApp(t, { revisionSpeed: 'instant' }, { clock })
  const client = new Client({ apiUrl: served.base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  /** A raw request: status and parsed body (undefined when empty). */
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${served.base}${path}`, {
      method,
      headers: { 'x-api-key': 'k', 'x-tenant-id': TENANT_A, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    const text = await response.text()
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers }
  }
  /** Every run hangar creates from now on (its id, thread and first status), in order, from the event bus. */
  const created: { run_id: string; thread_id: string }[] = []
  const finished = new Set<string>()
  const stop = served.app.emulator.bus.subscribe((message: BusMessage) => {
    if (message.topic !== 'run') return
    if (message.data.status === 'pending') created.push({ run_id: message.data.run_id, thread_id: message.data.thread_id })
    if (message.data.status === 'success' || message.data.status === 'error') finished.add(message.data.run_id)
  })
  t.teardown(stop)
  const allFinished = () => until(() => created.every((run) => finished.has(run.run_id)), 'every run created has finished')
  return { ...served, client, call, created, finished, allFinished }
}

/** What the SDK's create methods answer, read as its Cron type (their declared response types lack some of the fields the server sends). */
const asCron = (created: object) => created as Cron

/** The human messages of a thread's state, in order. */
async function humanTurns(client: Client, threadId: string): Promise<string[]> {
  const state = await client.threads.getState<{ messages: { type: string; content: string }[] }>(threadId)
  return state.values.messages.filter((m) => m.type === 'human').map((m) => m.content)
}

t.test('a thread cron is created with the SDK and shows every field of the document\'s Cron', async (t) => {
  const { client, call } = await serve(t)
  const thread = await client.threads.create()
  const cron = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *', input: say('good morning'), metadata: { team: 'ops' } })
  t.same(Object.keys(cron), ['cron_id', 'assistant_id', 'thread_id', 'on_run_completed', 'end_time', 'schedule', 'timezone', 'created_at', 'updated_at', 'user_id', 'payload', 'next_run_date', 'metadata', 'enabled'])
  const agent = (await client.assistants.search({ graphId: 'agent' }))[0].assistant_id
  t.match(cron, {
    thread_id: thread.thread_id, assistant_id: agent, schedule: '0 9 * * *', timezone: null, end_time: null, on_run_completed: null,
    created_at: at(0), updated_at: at(0), next_run_date: at(9 * HOUR), user_id: null, metadata: { team: 'ops' }, enabled: true,
  })
  t.same(cron.payload, { assistant_id: 'agent', input: say('good morning'), metadata: { team: 'ops' } }, 'the payload is the run body the client sent')
  const got = await call('GET', `/runs/crons/${cron.cron_id}`)
  t.same([got.status, got.body], [200, cron], 'GET /runs/crons/{id} answers the same cron')
  t.equal((await client.runs.list(thread.thread_id)).length, 0, 'nothing has fired yet')
})

t.test('advancing the clock fires each due occurrence once, in order, on the cron\'s thread, with its payload\'s input', async (t) => {
  const { client, clock, created, allFinished } = await serve(t)
  const thread = await client.threads.create()
  const morning = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *', input: say('morning') })
  await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 18 * * *', input: say('evening') })
  clock.advance(8 * HOUR)
  t.equal(created.length, 0, 'nothing is due before 09:00')

  clock.advance(2 * HOUR)
  t.equal(created.length, 1, 'at 10:00 the 09:00 occurrence has fired, as the clock moved')
  t.equal(created[0].thread_id, thread.thread_id)
  await allFinished()
  t.same(await humanTurns(client, thread.thread_id), ['morning'])

  // Day after day, each occurrence once, in the order their times fall.
  for (const step of [9 * HOUR, 15 * HOUR, 9 * HOUR, 15 * HOUR, 9 * HOUR]) clock.advance(step)
  t.equal(created.length, 6, 'evening, morning, evening, morning, evening more')
  await allFinished()
  t.same(await humanTurns(client, thread.thread_id), ['morning', 'evening', 'morning', 'evening', 'morning', 'evening'], 'the runs ran in the order their times fell')
  const runs = await client.runs.list(thread.thread_id, { limit: 100 })
  t.same(runs.map((run) => run.run_id).reverse(), created.map((run) => run.run_id), 'the thread lists exactly these runs')
  t.ok(runs.every((run) => run.status === 'success' && run.multitask_strategy === 'enqueue'), 'thread crons queue their runs')

  clock.advance(0)
  t.equal(created.length, 6, 'a clock event without time passing fires nothing again')
  const shown = await client.crons.search({ threadId: thread.thread_id, sortBy: 'next_run_date', sortOrder: 'asc' })
  t.same(shown.map((c) => c.next_run_date), [at(3 * DAY + 9 * HOUR), at(3 * DAY + 18 * HOUR)], 'next_run_date is the next occurrence after now')
  t.equal(shown[0].cron_id, morning.cron_id)
})

t.test('a jump over many occurrences fires one catch-up run per cron, as the real scheduler does, not one per occurrence', async (t) => {
  const { client, clock, created, allFinished } = await serve(t)
  const thread = await client.threads.create()
  await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '* * * * *', input: say('every minute') })
  await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 * * * *', input: say('every hour') })
  clock.advance(7 * DAY + 30_000)
  t.equal(created.length, 2, 'a week of an every-minute and an hourly cron: one run each')
  await allFinished()
  t.same(await humanTurns(client, thread.thread_id), ['every minute', 'every hour'], 'earliest due first')
  const shown = await client.crons.search({ threadId: thread.thread_id, sortBy: 'next_run_date', sortOrder: 'asc' })
  t.same(shown.map((c) => c.next_run_date), [at(7 * DAY + 60_000), at(7 * DAY + HOUR)], 'each cron goes on from now: what it missed is not owed')

  clock.advance(30_000)
  t.equal(created.length, 3, 'a minute later the every-minute cron fires once more')
  clock.advance(30_000)
  t.equal(created.length, 3, 'and not again within the same minute')
})

t.test('on a running clock (as npm start has) a due cron fires on time, with no one moving the clock', async (t) => {
  const clock = Clock.system()
  // 100 ms before a whole second, so that the every-second cron is due almost at once.
  clock.set(Math.ceil(clock.now() / 1000) * 1000 + 900)
  const { client, app } = await serve(t, clock)
  const firstRun = new Promise<{ run_id: string; thread_id: string }>((resolve) => {
    const stop = app.emulator.bus.subscribe((message: BusMessage) => {
      if (message.topic !== 'run' || message.data.status !== 'pending') return
      stop()
      resolve(message.data)
    })
  })
  const thread = await client.threads.create()
  const cron = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '* * * * * *', input: say('tick') })
  t.ok(Date.parse(cron.next_run_date!) - clock.now() <= 1000, 'its next run is within a second')
  const run = await beforeDeadline(firstRun, 10_000, 'the cron\'s first run was created on the running clock')
  t.equal(run.thread_id, thread.thread_id)
  t.ok(clock.now() >= Date.parse(cron.next_run_date!), 'not before its time')
  await client.crons.delete(cron.cron_id)
})

t.test('a schedule is read in its timezone', async (t) => {
  const { client, clock, created } = await serve(t)
  const thread = await client.threads.create()
  const cron = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *', timezone: 'America/New_York', input: say('hi') })
  t.equal(asCron(cron).timezone, 'America/New_York')
  t.equal(cron.next_run_date, at(14 * HOUR), '09:00 in New York in January is 14:00 UTC')
  clock.advance(14 * HOUR - 1)
  t.equal(created.length, 0, 'not yet at 13:59:59.999 UTC')
  clock.advance(1)
  t.equal(created.length, 1, 'at 14:00 UTC it fires')
  // In July New York keeps daylight time: 09:00 there is 13:00 UTC.
  const july = Date.UTC(2025, 6, 1)
  clock.set(july)
  const summer = await client.crons.search({ threadId: thread.thread_id })
  t.equal(summer[0].next_run_date, new Date(july + 13 * HOUR).toISOString())
})

t.test('a disabled cron, or one past its end time, fires nothing', async (t) => {
  const { client, clock, created, call } = await serve(t)
  const thread = await client.threads.create()
  const disabled = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 * * * *', input: say('x'), enabled: false })
  t.equal(asCron(disabled).enabled, false)
  await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '30 * * * *', input: say('y'), endTime: at(2 * HOUR) })
  clock.advance(HOUR)
  clock.advance(HOUR)
  t.equal(created.length, 2, 'the ending cron fired at 00:30 and 01:30, the disabled one not at all')
  clock.advance(DAY)
  t.equal(created.length, 2, 'nothing after its end time')
  const ended = await client.crons.search({ enabled: true })
  t.equal(ended.length, 1)
  t.equal(ended[0].next_run_date, null, 'a cron past its end time has no next run')
  t.equal(ended[0].end_time, at(2 * HOUR))

  // Enabled again: only what falls from now on fires, not the day it was off.
  const enabled = await client.crons.update(disabled.cron_id, { enabled: true })
  t.equal(enabled.enabled, true)
  t.equal(enabled.next_run_date, at(DAY + 3 * HOUR))
  clock.advance(HOUR)
  t.equal(created.length, 3, 'one run at the next full hour')
  t.equal((await call('POST', '/runs/crons/count', { thread_id: thread.thread_id })).body, 2)
})

t.test('a stateless cron runs each time on a new thread, deleted when the run ends unless told to keep it', async (t) => {
  const { client, clock, created, allFinished } = await serve(t)
  const deleting = await client.crons.create('agent', { schedule: '0 12 * * *', input: say('noon') })
  t.equal(deleting.thread_id, null)
  t.equal(asCron(deleting).on_run_completed, 'delete', 'delete is the default')
  const keeping = await client.crons.create('agent', { schedule: '0 13 * * *', input: say('one'), onRunCompleted: 'keep' })
  t.equal(asCron(keeping).on_run_completed, 'keep')

  clock.advance(DAY)
  clock.advance(DAY)
  t.equal(created.length, 4, 'each cron once a day, two days')
  t.equal(new Set(created.map((run) => run.thread_id)).size, 4, 'every run has a thread of its own')
  await allFinished()
  const left = await client.threads.search({ limit: 100 })
  t.same(left.map((thread) => thread.thread_id).sort(), [created[1].thread_id, created[3].thread_id].sort(), 'only the kept cron\'s threads remain')
  t.same(await humanTurns(client, created[3].thread_id), ['one'], 'a kept thread holds its run\'s input')
})

t.test('patch changes the schedule, the payload and merges metadata; delete removes the cron', async (t) => {
  const { client, clock, created, call, allFinished } = await serve(t)
  const thread = await client.threads.create()
  const cron = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *', input: say('old'), metadata: { a: 1 } })
  clock.advance(HOUR)
  const patched = await client.crons.update(cron.cron_id, { schedule: '0 6 * * *', input: say('new'), metadata: { b: 2 } })
  t.match(patched, { schedule: '0 6 * * *', metadata: { a: 1, b: 2 }, next_run_date: at(6 * HOUR), updated_at: at(HOUR), created_at: at(0) })
  t.same(patched.payload.input, say('new'))
  clock.advance(DAY)
  t.equal(created.length, 1, 'the new schedule fired once, at 06:00, and the old 09:00 did not')
  await allFinished()
  t.same(await humanTurns(client, thread.thread_id), ['new'])

  const cleared = await call('PATCH', `/runs/crons/${cron.cron_id}`, { end_time: at(DAY + 2 * HOUR) })
  t.equal(cleared.body.end_time, at(DAY + 2 * HOUR))
  t.equal(cleared.body.next_run_date, null, 'an end time before the next occurrence leaves none')
  const reopened = await client.crons.update(cron.cron_id, { endTime: null })
  t.equal(reopened.end_time, null, 'end_time null clears it')
  t.equal(reopened.next_run_date, at(DAY + 6 * HOUR))

  // The test's own bus subscription follows the clock too: the scheduler's listener is the one more.
  const following = clock.listenerCount('change')
  await client.crons.delete(cron.cron_id)
  t.equal((await call('GET', `/runs/crons/${cron.cron_id}`)).status, 404)
  t.equal(clock.listenerCount('change'), following - 1, 'with no cron left, the scheduler stops following the clock')
  clock.advance(2 * DAY)
  t.equal(created.length, 1, 'a deleted cron fires nothing')
})

t.test('search filters, sorts, pages and selects; count counts the same crons', async (t) => {
  const { client, clock, call } = await serve(t)
  const thread = await client.threads.create()
  const agent = (await client.assistants.search({ graphId: 'agent' }))[0].assistant_id
  const pipeline = (await client.assistants.search({ graphId: 'pipeline' }))[0].assistant_id
  const first = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 3 * * *', metadata: { kind: 'a' } })
  clock.advance(1000)
  const second = await client.crons.create('pipeline', { schedule: '0 1 * * *', metadata: { kind: 'b' } })
  clock.advance(1000)
  const third = await client.crons.create('agent', { schedule: '0 2 * * *', enabled: false, metadata: { kind: 'b' } })

  const ids = (crons: { cron_id?: string }[]) => crons.map((c) => c.cron_id)
  t.same(ids(await client.crons.search()), [third.cron_id, second.cron_id, first.cron_id], 'newest first by default')
  t.same(ids(await client.crons.search({ sortBy: 'next_run_date', sortOrder: 'asc' })), [second.cron_id, third.cron_id, first.cron_id])
  t.same(ids(await client.crons.search({ assistantId: agent })), [third.cron_id, first.cron_id])
  t.same(ids(await client.crons.search({ assistantId: pipeline })), [second.cron_id])
  t.same(ids(await client.crons.search({ threadId: thread.thread_id })), [first.cron_id])
  t.same(ids(await client.crons.search({ enabled: false })), [third.cron_id])
  t.same(ids(await client.crons.search({ metadata: { kind: 'b' } })), [third.cron_id, second.cron_id])
  const page = await call('POST', '/runs/crons/search', { limit: 1, offset: 1, sort_order: 'asc' })
  t.same(ids(page.body), [second.cron_id])
  t.same([page.headers.get('x-pagination-total'), page.headers.get('x-pagination-next')], ['3', '2'])
  const selected = await client.crons.search({ select: ['cron_id', 'schedule'], limit: 1 })
  t.same(selected, [{ cron_id: third.cron_id, schedule: '0 2 * * *' }], 'only the selected fields')

  t.equal(await client.crons.count(), 3)
  t.equal(await client.crons.count({ assistantId: agent }), 2)
  t.equal(await client.crons.count({ threadId: thread.thread_id }), 1)
  t.equal(await client.crons.count({ metadata: { kind: 'b' } }), 2)
})

t.test('each agent server has its own crons, and deleting a deployment or its thread removes them', async (t) => {
  const { client, call, clock, created } = await serve(t)
  const deployment = (await call('POST', '/v2/deployments', dockerDeployment({ name: 'bot' }))).body
  const agent = `/deployments/${deployment.id}/agent`
  const deployed = await call('POST', `${agent}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *', input: say('there') })
  t.equal(deployed.status, 200)
  t.equal(await client.crons.count(), 0, 'the root agent server has none')
  t.equal((await call('GET', `/runs/crons/${deployed.body.cron_id}`)).status, 404, 'nor sees the deployment\'s')
  t.equal((await call('POST', `${agent}/runs/crons/count`, {})).body, 1)

  const thread = await client.threads.create()
  const onThread = await client.crons.createForThread(thread.thread_id, 'agent', { schedule: '0 9 * * *' })
  await client.threads.delete(thread.thread_id)
  t.equal((await call('GET', `/runs/crons/${onThread.cron_id}`)).status, 404, 'a thread cron goes with its thread')

  t.equal((await call('DELETE', `/v2/deployments/${deployment.id}`)).status, 204)
  clock.advance(DAY)
  t.equal(created.length, 0, 'nothing fires for crons that are gone')
})

t.test('bad input is refused with the real server\'s bodies, never a 5xx', async (t) => {
  const { client, call } = await serve(t)
  const thread = await client.threads.create()
  const bad = await call('POST', '/runs/crons', { assistant_id: 'agent', schedule: 'every day at nine' })
  t.equal(bad.status, 422)
  t.same(bad.body.detail.map((e: { type: string; loc: unknown[]; input: unknown }) => [e.type, e.loc, e.input]), [['value_error', ['body', 'schedule'], 'every day at nine']])
  t.match(bad.body.detail[0].msg, /^Value error, Invalid cron schedule 'every day at nine'/, 'the message names the schedule')
  const range = await call('POST', `/threads/${thread.thread_id}/runs/crons`, { assistant_id: 'agent', schedule: '61 * * * *' })
  t.equal(range.status, 422)
  t.match(range.body.detail[0].msg, /'61 \* \* \* \*'.*0-59/)
  const zone = await call('POST', '/runs/crons', { assistant_id: 'agent', schedule: '0 9 * * *', timezone: 'Mars/Olympus' })
  t.equal(zone.status, 422)
  t.match(zone.body.detail[0], { type: 'value_error', loc: ['body', 'timezone'], input: 'Mars/Olympus', msg: /Invalid timezone 'Mars\/Olympus'/ })
  const missing = await call('POST', '/runs/crons', { assistant_id: 'agent' })
  t.same(missing.body, { detail: [{ type: 'missing', loc: ['body', 'schedule'], msg: 'Field required', input: { assistant_id: 'agent' } }] })
  const when = await call('POST', '/runs/crons', { assistant_id: 'agent', schedule: '0 9 * * *', on_run_completed: 'archive' })
  t.equal(when.status, 422)
  t.equal(when.body.detail[0].type, 'literal_error')

  const assistant = await call('POST', '/runs/crons', { assistant_id: 'nope', schedule: '0 9 * * *' })
  t.same([assistant.status, assistant.body], [404, { detail: 'No assistant found for "nope". Make sure the assistant ID is for a valid assistant or a valid graph ID.' }], 'an unknown assistant is a 404, as for runs')
  const noThread = await call('POST', `/threads/${UNKNOWN}/runs/crons`, { assistant_id: 'agent', schedule: '0 9 * * *' })
  t.same([noThread.status, noThread.body], [404, { detail: `Thread with ID ${UNKNOWN} not found` }])
  for (const [method, body] of [['GET', undefined], ['PATCH', { enabled: false }], ['DELETE', undefined]] as const) {
    const unknown = await call(method, `/runs/crons/${UNKNOWN}`, body)
    t.same([unknown.status, unknown.body], [404, { detail: `Cron with ID ${UNKNOWN} not found` }], `${method} of an unknown cron`)
  }
  const notUuid = await call('GET', '/runs/crons/not-a-uuid')
  t.equal(notUuid.status, 422)
  t.equal(notUuid.body.detail[0].type, 'uuid_parsing')

  const cron = await client.crons.create('agent', { schedule: '0 9 * * *' })
  const patch = await call('PATCH', `/runs/crons/${cron.cron_id}`, { schedule: '* * *' })
  t.equal(patch.status, 422)
  t.match(patch.body.detail[0], { loc: ['body', 'schedule'], msg: /Invalid cron schedule '\* \* \*'/ })
  t.equal((await call('GET', `/runs/crons/${cron.cron_id}`)).body.schedule, '0 9 * * *', 'a refused patch changes nothing')
  const limit = await call('POST', '/runs/crons/search', { limit: 0 })
  t.equal(limit.status, 422)
  const select = await call('POST', '/runs/crons/search', { select: ['nope'] })
  t.equal(select.status, 422)
  const sort = await call('POST', '/runs/crons/search', { sort_by: 'schedule' })
  t.equal(sort.status, 422)
})

t.test('/info says crons are served', async (t) => {
  const { call } = await serve(t)
  t.equal((await call('GET', '/info')).body.flags.crons, true)
})
