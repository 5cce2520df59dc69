// useStream with an agent team in a real browser (test/browser-page.ts; the page is
// test/browser/team-app.tsx): the `supervisor` graph's subagents (subgraph nodes) each render their
// own messages, and `parallel_approval`'s two interrupts, pending at once, are shown and answered in
// one command. `@langchain/react`'s hook reads the subagents through its selector hook over the
// session protocol; the older `@langchain/langgraph-sdk/react` hook reads them from run streams with
// `streamSubgraphs`. hangar runs on a manual clock; these graphs do not wait on it, except the
// writer of the current hook's subagent test (see there).

import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import type { Config } from '../src/config.js'
import { serveApp } from './helpers.js'
import { noPageErrors, skipWithoutChromium, startBrowserApp, type BrowserApp } from './browser-page.js'

const skip = skipWithoutChromium('the useStream subagent test')
if (skip) console.log(`# useStream subagent test skipped: ${skip}`)

let app: BrowserApp
t.before(async () => {
  if (!skip) app = await startBrowserApp('team-app.tsx')
})
t.teardown(async () => app?.close())

type Hook = 'current' | 'legacy'
const hookName = (hook: Hook) => (hook === 'legacy' ? 'older hook' : 'current hook')

async function openTeam(t: Test, assistant: string, hook: Hook, config: Partial<Config> = {}) {
  const { base, api, clock } = await serveApp(t, config)
  const page = await app.open(t, base, { assistant, hook }, "typeof window.team === 'object'")
  return { page, api, clock }
}

/**
 * Waits (bounded) until the `li`s under `selector` read exactly `want`, then asserts it; when they
 * never do, the assertion fails with what the page shows instead.
 */
async function shows(t: Test, page: Page, selector: string, want: string[], message: string) {
  const texts = (items: Element[]) => JSON.stringify(items.map((li) => li.textContent))
  await page.waitForFunction(([s, w]) => JSON.stringify(Array.from(document.querySelectorAll(`${s} li`), (li) => li.textContent)) === w, [selector, JSON.stringify(want)] as const)
    .catch(() => undefined)
  t.same(JSON.parse(await page.locator(`${selector} li`).evaluateAll(texts)), want, message)
}

const waitIdle = (page: Page) => page.waitForFunction(() => document.querySelector('#loading')!.textContent === 'false')

const SUPERVISOR_THREAD = ['Paris', 'Searching the web for Paris.', 'Summary: Paris has 2 sources.', 'Here is a report on Paris.']
const panels = (page: Page) => page.locator('#agents section').evaluateAll((sections) => sections.map((section) => section.getAttribute('data-agent')))

/** How long (clock time) `writerThatThinks`'s writer waits before it writes, as a model call would take. */
const WRITER_THINKS_MS = 1000

/**
 * A graphs directory in which `writer_agent`, the supervisor's second subagent, is the shipped one
 * waiting WRITER_THINKS_MS before it writes. With the shipped one the run may end while the page
 * subscribes the writer's panel, and then @langchain/react 1.1.0 can miss the writer's report: each
 * subscription opens a new event stream that replays the thread, and when the run's end reaches
 * the client on the old stream first, the client pauses the subscriptions it had (one macrotask
 * later), so the panel reads none of what the replay brings after that. A real model's latency
 * keeps a run going past that point; so does this wait.
 */
function writerThatThinks(t: Test): Partial<Config> {
  const shipped = JSON.parse(readFileSync(new URL('../fixtures/graphs/writer_agent.json', import.meta.url), 'utf8')) as { nodes: object[] }
  const writer = { ...shipped, nodes: shipped.nodes.map((node) => ({ ...node, delay_ms: WRITER_THINKS_MS })) }
  return { graphs: t.testdir({ 'writer_agent.json': JSON.stringify(writer) }) }
}

t.test('current hook: each subagent of the supervisor renders its messages through useMessages(stream, subgraph)', { skip }, async (t) => {
  const { page, clock } = await openTeam(t, 'supervisor', 'current', writerThatThinks(t))
  // submit() settles when the run ends, which is after the clock moves: not awaited here.
  await page.evaluate(() => { void window.team.submit('Paris') })
  // The writer's panel is there, subscribed, while the writer thinks: what it starts from, not yet its report.
  await shows(t, page, '#agents [data-agent=writer]', SUPERVISOR_THREAD.slice(0, 3), 'the writer\'s messages as it starts: the question, the search and the summary')
  clock.advance(WRITER_THINKS_MS)
  await shows(t, page, '#messages', SUPERVISOR_THREAD, 'the thread\'s messages')
  await waitIdle(page)
  t.same(await panels(page), ['researcher', 'writer'], 'one panel per subgraph the hook discovered, in the order they ran')
  // A subgraph's messages are its own state's: the parent's messages it started from, then its own.
  await shows(t, page, '#agents [data-agent=researcher]', SUPERVISOR_THREAD.slice(0, 3), 'the researcher\'s messages: the question, its search and its summary')
  await shows(t, page, '#agents [data-agent=writer]', SUPERVISOR_THREAD, 'the writer\'s messages: the researcher\'s before its report')
  noPageErrors(t, page)
})

t.test('older hook: with streamSubgraphs each message names the subagent and the node inside it that wrote it', { skip }, async (t) => {
  const { page } = await openTeam(t, 'supervisor', 'legacy')
  await page.evaluate(() => window.team.submit('Paris'))
  await shows(t, page, '#messages', SUPERVISOR_THREAD, 'the thread\'s messages')
  await waitIdle(page)
  t.same(await panels(page), ['researcher', 'writer'], 'one panel per subagent namespace in the messages\' stream metadata')
  await shows(t, page, '#agents [data-agent=researcher]', SUPERVISOR_THREAD.slice(1, 3), 'the researcher\'s messages')
  await shows(t, page, '#agents [data-agent=writer]', SUPERVISOR_THREAD.slice(3), 'the writer\'s message')
  const nodes = await page.locator('#agents li').evaluateAll((items) => items.map((li) => li.getAttribute('data-node')))
  t.same(nodes, ['search', 'summarize', 'write'], 'the stream metadata names the node inside the subgraph')
  noPageErrors(t, page)
})

const APPROVALS = ['Legal: may we go ahead with this request?', 'Finance: is this within budget?']

for (const hook of ['current', 'legacy'] as const) {
  t.test(`${hookName(hook)}: both pending approvals are shown; accepting both in one answer approves`, { skip }, async (t) => {
    const { page } = await openTeam(t, 'parallel_approval', hook)
    await page.evaluate(() => window.team.submit('the new office'))
    await shows(t, page, '#approvals', APPROVALS, 'both interrupts are pending, each with its description')
    await waitIdle(page)
    await page.evaluate(() => window.team.answer({ legal_review: 'accept', finance_review: 'accept' }))
    await shows(t, page, '#messages', ['the new office', 'Approved by legal and finance: the new office can go ahead.'], 'the graph read both answers')
    await shows(t, page, '#approvals', [], 'nothing is pending any more')
    noPageErrors(t, page)
  })

  t.test(`${hookName(hook)}: one approval ignored, the other accepted, in one answer: not approved`, { skip }, async (t) => {
    const { page } = await openTeam(t, 'parallel_approval', hook)
    await page.evaluate(() => window.team.submit('the new office'))
    await shows(t, page, '#approvals', APPROVALS, 'both interrupts are pending')
    await waitIdle(page)
    await page.evaluate(() => window.team.answer({ legal_review: 'accept', finance_review: 'ignore' }))
    await shows(t, page, '#messages', ['the new office', 'Not approved: legal answered accept, finance answered ignore.'], 'each answer went to its own interrupt')
    await shows(t, page, '#approvals', [], 'nothing is pending any more')
    noPageErrors(t, page)
  })
}
