// useStream with an agent team in a real browser (test/browser-page.ts; the page is
// test/browser/team-app.tsx): the `supervisor` graph's subagents (subgraph nodes) each render their
// own messages, and `parallel_approval`'s two interrupts, pending at once, are shown and answered in
// one command. `@langchain/react`'s hook reads the subagents through its selector hook over the
// session protocol; the older `@langchain/langgraph-sdk/react` hook reads them from run streams with
// `streamSubgraphs`. hangar runs on a manual clock; these graphs do not wait on it.

import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
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

async function openTeam(t: Test, assistant: string, hook: Hook) {
  const { base, api } = await serveApp(t)
  const page = await app.open(t, base, { assistant, hook }, "typeof window.team === 'object'")
  return { page, api }
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

t.test('current hook: each subagent of the supervisor renders its messages through useMessages(stream, subgraph)', { skip }, async (t) => {
  const { page } = await openTeam(t, 'supervisor', 'current')
  await page.evaluate(() => window.team.submit('Paris'))
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
