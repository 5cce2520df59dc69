// The tracing side over real HTTP, for tests: hangar on a port with the official `langsmith`
// client pointed at its /api/v1 (so it probes /api/v1/info) and the agent-server SDK at its root,
// finished runs made with the SDK, and the items of the clients' paginated lists.

import type { Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { Client as LangSmith } from 'langsmith'
import type { Config } from '../src/config.js'
import { serveApp } from './helpers.js'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const UNKNOWN = '5e5e5e5e-0000-4000-8000-000000000000'
export const JSON_KEY = { 'content-type': 'application/json', 'x-api-key': 'k' }

/** hangar on a port; the tracing client at `<base>/api/v1` (so it probes `/api/v1/info`), the agent SDK at the root. */
export async function serveTracing(t: Test, config: Partial<Config> = {}) {
  const { app, clock, base } = await serveApp(t, config)
  const agent = new Client({ apiUrl: base, apiKey: 'k', callerOptions: { maxRetries: 0 } })
  const tracing = new LangSmith({ apiUrl: `${base}/api/v1`, apiKey: 'k' })
  return { app, clock, base, agent, tracing }
}

/** One finished run on a new thread of the `agent` graph (or another graph); its id and thread. */
export async function finishedRun(agent: Client, content = 'hello', feedbackKeys?: string[], graph = 'agent') {
  const thread = await agent.threads.create()
  const created = await agent.runs.create(thread.thread_id, graph, { input: { messages: [{ role: 'user', content }] }, feedbackKeys })
  const answer = await agent.runs.join(thread.thread_id, created.run_id) as Record<string, any>
  return { runId: created.run_id, threadId: thread.thread_id, answer }
}

export async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of iterable) out.push(x)
  return out
}
