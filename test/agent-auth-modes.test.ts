// The agent server's auth modes (HANGAR_AGENT_AUTH), driven by the official JS SDK
// (@langchain/langgraph-sdk) over a real listening hangar: `none` asks for no credential (as
// `langgraph dev`), `users` admits the Bearer tokens of a users file and shows each user only its
// own threads (as a LangGraph custom auth handler with `owner` metadata does), and HANGAR_AUTH=off
// wins over both.

import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import type { Config } from '../src/config.js'
import { serveApp } from './helpers.js'

const USERS = [{ token: 'alice-token', identity: 'alice' }, { token: 'bob-token', identity: 'bob' }]

/** A users file in the test's own directory. */
function usersFile(t: Test): string {
  return join(t.testdir({ 'users.json': JSON.stringify(USERS) }), 'users.json')
}

const clientAs = (apiUrl: string, token?: string) => new Client({
  apiUrl,
  apiKey: null,
  defaultHeaders: token ? { authorization: `Bearer ${token}` } : {},
  callerOptions: { maxRetries: 0 },
})

const hello = { messages: [{ role: 'user', content: 'hello from alice' }] }

async function status(base: string, path: string, init: RequestInit = {}) {
  const response = await fetch(`${base}${path}`, { method: 'POST', ...init, headers: { 'content-type': 'application/json', ...init.headers }, body: init.method === 'GET' ? undefined : init.body ?? '{}' })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

async function usersMode(t: Test, config: Partial<Config> = {}) {
  const served = await serveApp(t, { agentAuth: 'users', agentUsers: usersFile(t), ...config })
  return { ...served, alice: clientAs(served.base, 'alice-token'), bob: clientAs(served.base, 'bob-token') }
}

t.test('with none, the agent server asks for no credential, while the control plane keeps its own rule', async (t) => {
  const { base } = await serveApp(t, { agentAuth: 'none' })
  const client = clientAs(base)
  const thread = await client.threads.create({ metadata: { topic: 'open' } })
  t.equal((await client.threads.get(thread.thread_id)).thread_id, thread.thread_id, 'a thread is created and read without a credential')
  const result = await client.runs.wait(thread.thread_id, 'agent', { input: hello }) as { messages: { content: string }[] }
  t.equal(result.messages.at(-1)?.content, 'hello from alice', 'a run answers without a credential')
  t.equal(thread.metadata?.owner, undefined, 'no owner is recorded without users')
  t.same(await status(base, '/v2/deployments', { method: 'GET' }), { status: 401, body: { detail: 'Missing authentication headers' } }, 'the control plane still needs its credential')
})

t.test('with users, a request without a user\'s Bearer token is refused with 401', async (t) => {
  const { base } = await usersMode(t)
  t.same(await status(base, '/threads/search'), { status: 401, body: { detail: 'Missing authentication headers' } }, 'no credential')
  t.same(await status(base, '/threads/search', { headers: { authorization: 'Bearer mallory-token' } }), { status: 401, body: { detail: 'Invalid token' } }, 'a token no user has')
  t.same(await status(base, '/threads/search', { headers: { 'x-api-key': 'alice-token' } }), { status: 401, body: { detail: 'Missing authentication headers' } }, 'a user\'s token as an x-api-key is not a Bearer credential')
  t.equal((await status(base, '/threads/search', { headers: { authorization: 'Bearer alice-token' } })).status, 200, 'a user\'s Bearer token is admitted')
  await t.rejects(clientAs(base).threads.search(), /HTTP 401/, 'the SDK without a token is refused too')
})

t.test('with users, a thread is its creator\'s: another user gets 404 from every route about it', async (t) => {
  const { base, alice, bob } = await usersMode(t)
  const bobs = await bob.threads.create({ metadata: { owner: 'alice', topic: 'secret' } })
  t.equal(bobs.metadata?.owner, 'bob', 'the owner is the creator, whatever the client sent')
  t.equal((await bob.threads.get(bobs.thread_id)).metadata?.owner, 'bob', 'the owner reads back')

  const notFound = new RegExp(`HTTP 404.*Thread with ID ${bobs.thread_id} not found`)
  await t.rejects(alice.threads.get(bobs.thread_id), notFound, 'get')
  await t.rejects(alice.threads.update(bobs.thread_id, { metadata: { topic: 'mine now' } }), notFound, 'patch')
  await t.rejects(alice.threads.getState(bobs.thread_id), notFound, 'state')
  await t.rejects(alice.threads.getHistory(bobs.thread_id), notFound, 'history')
  await t.rejects(alice.runs.list(bobs.thread_id), notFound, 'its runs')
  await t.rejects(alice.runs.wait(bobs.thread_id, 'agent', { input: hello }), notFound, 'a run on it')
  await t.rejects(alice.threads.delete(bobs.thread_id), notFound, 'delete')
  t.same(await status(base, `/threads/${bobs.thread_id}`, { method: 'GET', headers: { authorization: 'Bearer alice-token' } }),
    { status: 404, body: { detail: `Thread with ID ${bobs.thread_id} not found` } }, 'the body is the thread-not-found one')
  await t.rejects(alice.threads.create({ threadId: bobs.thread_id, ifExists: 'do_nothing' }), /HTTP 409/, 'its id cannot be taken over with if_exists=do_nothing')

  const after = await bob.threads.get(bobs.thread_id)
  t.same(after.metadata, { owner: 'bob', topic: 'secret' }, 'nothing alice tried changed it')
})

t.test('with users, search and count see only the caller\'s own threads', async (t) => {
  const { alice, bob } = await usersMode(t)
  const mine = await alice.threads.create({ metadata: { topic: 'shared-topic' } })
  const theirs = await bob.threads.create({ metadata: { topic: 'shared-topic' } })
  await bob.threads.create()

  t.same((await alice.threads.search()).map((th) => th.thread_id), [mine.thread_id], 'alice finds her thread only')
  t.same((await alice.threads.search({ metadata: { topic: 'shared-topic' } })).map((th) => th.thread_id), [mine.thread_id], 'a metadata filter does not widen it')
  t.same(await alice.threads.search({ metadata: { owner: 'bob' } }), [], 'asking for bob\'s owner finds nothing')
  t.equal(await alice.threads.count({ metadata: { owner: 'bob' } }), 0, 'nor counts anything')
  t.equal(await alice.threads.count({ metadata: { owner: 'alice' } }), 1, 'asking for her own owner counts hers')
  t.equal(await alice.threads.count(), 1, 'alice counts one')
  t.equal(await bob.threads.count(), 2, 'bob counts two')
  t.same((await bob.threads.search({ metadata: { topic: 'shared-topic' } })).map((th) => th.thread_id), [theirs.thread_id], 'bob finds his')
})

t.test('with users, runs on the caller\'s own thread work, and a thread a run creates is the caller\'s', async (t) => {
  const { base, alice, bob } = await usersMode(t)
  const thread = await alice.threads.create()
  const result = await alice.runs.wait(thread.thread_id, 'agent', { input: hello }) as { messages: { content: string }[] }
  t.equal(result.messages.at(-1)?.content, 'hello from alice', 'the run answers')
  const runs = await alice.runs.list(thread.thread_id)
  t.equal(runs.length, 1, 'her run is listed')
  t.equal(runs[0].status, 'success')
  await t.rejects(bob.runs.get(thread.thread_id, runs[0].run_id), /HTTP 404/, 'bob cannot read her run')
  const cancelAsBob = await fetch(`${base}/runs/cancel`, {
    method: 'POST', headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
    body: JSON.stringify({ thread_id: thread.thread_id, run_ids: [runs[0].run_id] }),
  })
  t.same([cancelAsBob.status, await cancelAsBob.json()], [404, { detail: 'No runs found to cancel.' }], 'nor cancel it by naming her thread')

  const made = '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d'
  await alice.runs.wait(made, 'agent', { input: hello, ifNotExists: 'create' })
  t.equal((await alice.threads.get(made)).metadata?.owner, 'alice', 'a thread a run creates belongs to the caller')
  await t.rejects(bob.threads.get(made), /HTTP 404/, 'and is not bob\'s to see')
})

t.test('HANGAR_AUTH=off wins over users: no credential is asked for, and nothing is owned', async (t) => {
  const { base } = await usersMode(t, { auth: 'off' })
  const client = clientAs(base)
  const thread = await client.threads.create()
  t.equal(thread.metadata?.owner, undefined)
  t.equal(await client.threads.count(), 1)
})

for (const [mode, config, security] of [
  ['api-key', {}, [{ 'API Key': [] }, { 'Bearer Auth': [] }]],
  ['none', { agentAuth: 'none' }, undefined],
  ['users', { agentAuth: 'users' }, [{ 'Bearer Auth': [] }]],
] as const) {
  t.test(`with ${mode}, /docs answers and /openapi.json declares the agent server's credential as the gate asks for it`, async (t) => {
    const { base } = await serveApp(t, mode === 'users' ? { ...config, agentUsers: usersFile(t) } : config)
    const page = await fetch(`${base}/docs`)
    t.equal(page.status, 200, '/docs')
    t.match(page.headers.get('content-type'), /text\/html/)
    const doc = await (await fetch(`${base}/openapi.json`)).json() as { paths: Record<string, Record<string, { security?: unknown }>> }
    t.same(doc.paths['/threads/search'].post.security, security, 'POST /threads/search')
  })
}
