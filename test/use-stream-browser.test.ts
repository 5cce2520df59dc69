// useStream in a real browser (Debian's Chromium, headless, driven by playwright-core):
// `@langchain/react` (its `latest`, the "v2-native" hook over the session protocol) and the older
// `@langchain/langgraph-sdk/react` hook (run streams), on a page served from another origin than
// hangar, as a frontend developer runs it. hangar runs on a manual clock: the slow graph's steps
// move only when the test moves time. Page waits are bounded and fail loudly.

import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { runClockUntil, serveApp, until } from './helpers.js'
import { noPageErrors, skipWithoutChromium, startBrowserApp, type BrowserApp } from './browser-page.js'

const skip = skipWithoutChromium('the useStream browser test')
if (skip) console.log(`# useStream browser test skipped: ${skip}`)

let app: BrowserApp
t.before(async () => {
  if (!skip) app = await startBrowserApp('chat-app.tsx')
})
t.teardown(async () => app?.close())

/** The chat page, open (test/browser/chat-app.tsx); its uncaught errors are collected (each test checks there is none). */
const openChat = (t: Test, base: string, params: Record<string, string>) => app.open(t, base, params, "typeof window.chat === 'object'")

const messages = (page: Page) => page.locator('#messages li').allTextContents()
const waitMessages = (page: Page, count: number) => page.waitForFunction((n) => document.querySelectorAll('#messages li').length === n, count)
/** Waits until the page's isLoading is `value`. */
const waitLoading = (page: Page, value: boolean) => page.waitForFunction((v) => document.querySelector('#loading')!.textContent === String(v), value)
const loading = async (page: Page) => (await page.textContent('#loading')) === 'true'

t.test('submit renders the reply; isLoading goes true then false; a second turn keeps the history', { skip }, async (t) => {
  const { base } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'agent' })
  await page.evaluate(() => window.chat.submit('hello there world'))
  await waitMessages(page, 2)
  await waitLoading(page, false)
  t.same(await messages(page), ['hello there world', 'hello there world'])
  const history = await page.evaluate(() => window.loadingHistory)
  t.ok(history.includes(true), 'isLoading was true while the run streamed')
  t.equal(history.at(-1), false)

  await page.evaluate(() => window.chat.submit('second turn'))
  await waitMessages(page, 4)
  t.same(await messages(page), ['hello there world', 'hello there world', 'second turn', 'second turn'])
  noPageErrors(t, page)
})

t.test('the reply renders word by word as it streams', { skip }, async (t) => {
  const { base, clock } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'pipeline' })
  await page.evaluate(() => { void window.chat.submit('slowly') })
  const final = 'Researched, drafted and reviewed: slowly'
  const seen = new Set<string>()
  // The summary streams a word every 100 ms of hangar's clock: move it in such steps and look.
  await runClockUntil(clock, async () => {
    const texts = await messages(page)
    if (texts.length === 2) seen.add(texts[1])
    return texts[1] === final && !(await loading(page))
  }, 'the summary is complete', { stepMs: 100 })
  const partial = [...seen].filter((text) => text !== final)
  t.ok(partial.length >= 2, `the page showed the reply while it streamed (${JSON.stringify(partial)})`)
  t.ok(partial.every((text) => final.startsWith(text)), 'each partial text is the start of the reply')
  noPageErrors(t, page)
})

t.test('stop() cancels the run through the older cancel endpoint; the run ends interrupted', { skip }, async (t) => {
  const { base, api } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'pipeline' })
  await page.evaluate(() => { void window.chat.submit('cancel me') })
  await waitLoading(page, true)
  await page.waitForFunction(() => document.querySelector('#thread')!.textContent !== '')
  const threadId = (await page.textContent('#thread'))!
  // The run's first values show the question: its stream is open and the hook knows the run. (The
  // thread id shows before the run is even asked for: a stop() then, under load, aborted the request
  // before hangar had it, and no run was left to find.)
  await waitMessages(page, 1)
  await page.evaluate(() => window.chat.stop())
  await waitLoading(page, false)
  const runs = await api.get(`/threads/${threadId}/runs`)
  t.equal(runs.body[0].status, 'interrupted')
  noPageErrors(t, page)
})

t.test('an interrupt is shown and answered with respond()', { skip }, async (t) => {
  const { base } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'approval' })
  await page.evaluate(() => window.chat.submit('ship it'))
  await page.waitForFunction(() => document.querySelector('#interrupt')!.textContent !== '')
  t.same(JSON.parse((await page.textContent('#interrupt'))!), { question: 'Approve this request?', request: 'ship it' })
  await page.evaluate(() => window.chat.respond('yes'))
  await waitMessages(page, 2)
  t.same(await messages(page), ['ship it', 'You answered: yes'])
  await page.waitForFunction(() => document.querySelector('#interrupt')!.textContent === '')
  noPageErrors(t, page)
})

t.test('a failed run shows its error', { skip }, async (t) => {
  const { base } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'flaky' })
  await page.evaluate(() => window.chat.submit('please fail now'))
  await page.waitForFunction(() => document.querySelector('#error')!.textContent !== '')
  t.match(await page.textContent('#error'), /FlakyError/)
  t.match(await page.textContent('#error'), /The flaky graph failed on request: please fail now/)
  t.equal(await loading(page), false)
  noPageErrors(t, page)
})

t.test('a reload mid-run re-attaches: the page shows the run going on, then its end', { skip }, async (t) => {
  const { base, clock } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'pipeline' })
  await page.evaluate(() => { void window.chat.submit('keep going') })
  await waitLoading(page, true)
  await page.reload()
  await page.waitForFunction(() => typeof window.chat === 'object')
  await waitLoading(page, true)
  await runClockUntil(clock, async () => (await messages(page)).length === 2 && !(await loading(page)), 'the re-attached page shows the run\'s end')
  t.same(await messages(page), ['keep going', 'Researched, drafted and reviewed: keep going'])
  noPageErrors(t, page)
})

t.test('one submit over transport "websocket" (hangar with auth off, as a browser socket carries no key)', { skip }, async (t) => {
  const { base } = await serveApp(t, { auth: 'off' })
  const page = await openChat(t, base, { assistant: 'agent', transport: 'websocket', key: '' })
  await page.evaluate(() => window.chat.submit('over the socket'))
  await waitMessages(page, 2)
  // The answer arrives in chunks: read it once the run has ended, not when its first chunk shows.
  await waitLoading(page, false)
  t.same(await messages(page), ['over the socket', 'over the socket'])
  noPageErrors(t, page)
})

// The older hook (`@langchain/langgraph-sdk/react`): POST /threads, then run streams.

t.test('older hook: submit renders the reply; a second turn keeps the history', { skip }, async (t) => {
  const { base } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'agent', hook: 'legacy' })
  await page.evaluate(() => window.chat.submit('hello there world'))
  await waitMessages(page, 2)
  await waitLoading(page, false)
  await page.evaluate(() => window.chat.submit('second turn'))
  await waitMessages(page, 4)
  t.same(await messages(page), ['hello there world', 'hello there world', 'second turn', 'second turn'])
  t.ok((await page.evaluate(() => window.loadingHistory)).includes(true))
  noPageErrors(t, page)
})

t.test('older hook: an interrupt is shown and resumed with a command; an error is shown', { skip }, async (t) => {
  const { base } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'approval', hook: 'legacy' })
  await page.evaluate(() => window.chat.submit('ship it'))
  await page.waitForFunction(() => document.querySelector('#interrupt')!.textContent !== '')
  t.same(JSON.parse((await page.textContent('#interrupt'))!), { question: 'Approve this request?', request: 'ship it' })
  await page.evaluate(() => window.chat.respond('yes'))
  await page.waitForFunction(() => Array.from(document.querySelectorAll('#messages li'), (li) => li.textContent).includes('You answered: yes'))
  noPageErrors(t, page)

  const failing = await openChat(t, base, { assistant: 'flaky', hook: 'legacy' })
  await failing.evaluate(() => window.chat.submit('please fail now'))
  await failing.waitForFunction(() => document.querySelector('#error')!.textContent !== '')
  t.match(await failing.textContent('#error'), /The flaky graph failed on request: please fail now/)
  noPageErrors(t, failing)
})

t.test('older hook: stop() cancels the run', { skip }, async (t) => {
  const { base, api } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'pipeline', hook: 'legacy' })
  await page.evaluate(() => { void window.chat.submit('cancel me') })
  await waitLoading(page, true)
  await page.waitForFunction(() => document.querySelector('#thread')!.textContent !== '')
  const threadId = (await page.textContent('#thread'))!
  await page.evaluate(() => window.chat.stop())
  await waitLoading(page, false)
  await until(async () => (await api.get(`/threads/${threadId}/runs`)).body[0]?.status === 'interrupted', 'the run ends interrupted')
  noPageErrors(t, page)
})

/** Each message's text with its branch position (`index/count`, `-` for a message with one branch). */
const branchView = (page: Page) => page.locator('#messages li').evaluateAll((items) =>
  items.map((li) => `${li.textContent} ${Number(li.getAttribute('data-branches')) > 1 ? `${li.getAttribute('data-branch')}/${li.getAttribute('data-branches')}` : '-'}`))
const waitTexts = (page: Page, texts: string[]) => page.waitForFunction(
  (want) => JSON.stringify(Array.from(document.querySelectorAll('#messages li'), (li) => li.textContent)) === want, JSON.stringify(texts))

t.test('older hook: edit the first message forks the thread; regenerate the answer; switch back with the branch helpers', { skip }, async (t) => {
  const { base, api } = await serveApp(t)
  const page = await openChat(t, base, { assistant: 'agent', hook: 'legacy' })
  await page.evaluate(() => window.chat.submit('first'))
  await waitMessages(page, 2)
  await waitLoading(page, false)
  await page.evaluate(() => window.chat.submit('second'))
  await waitTexts(page, ['first', 'first', 'second', 'second'])
  await waitLoading(page, false)
  const threadId = (await page.textContent('#thread'))!

  // Edit: the thread goes on from before the first message, not from its head.
  await page.evaluate(() => window.chat.edit(0, 'first, edited'))
  await waitTexts(page, ['first, edited', 'first, edited'])
  await waitLoading(page, false)
  await page.waitForFunction(() => document.querySelector('#messages li')!.getAttribute('data-branches') === '2')
  t.same(await branchView(page), ['first, edited 1/2', 'first, edited -'], 'the edited message shows the second of two branches')
  const state = (await api.get(`/threads/${threadId}/state`)).body
  t.same(state.values.messages.map((m: { content: string }) => m.content), ['first, edited', 'first, edited'], 'the thread\'s head is the new branch')

  // Regenerate the answer: a new branch at the answer, the question kept.
  await page.evaluate(() => window.chat.regenerate(1))
  await page.waitForFunction(() => document.querySelectorAll('#messages li')[1]?.getAttribute('data-branches') === '2')
  await waitLoading(page, false)
  t.same(await branchView(page), ['first, edited 1/2', 'first, edited 1/2'], 'the answer now has two branches, the new one shown')

  // Switch the first message back to its first branch: the original two turns come back.
  await page.evaluate(() => window.chat.setBranch(0, 0))
  await waitTexts(page, ['first', 'first', 'second', 'second'])
  t.same(await branchView(page), ['first 0/2', 'first -', 'second -', 'second -'])
  const history = (await api.post(`/threads/${threadId}/history`, { limit: 100 })).body as { checkpoint: { checkpoint_id: string }; parent_checkpoint: { checkpoint_id: string } | null }[]
  const ids = new Set(history.map((s) => s.checkpoint.checkpoint_id))
  t.ok(history.every((s) => s.parent_checkpoint === null || ids.has(s.parent_checkpoint.checkpoint_id)), 'every branch hangs off a checkpoint of the thread')
  t.equal(history.filter((s) => s.parent_checkpoint === null).length, 1, 'one root')
  noPageErrors(t, page)
})

for (const hook of ['current', 'legacy'] as const) {
  t.test(`${hook === 'legacy' ? 'older' : 'current'} hook: a tool-calling agent's calls render with their results, as against the real server`, { skip }, async (t) => {
    const { base } = await serveApp(t)
    const page = await openChat(t, base, { assistant: 'tools_agent', ...(hook === 'legacy' ? { hook } : {}) })
    await page.evaluate(() => window.chat.submit('Paris broken'))
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#messages li'), (li) => li.textContent).some((text) => text?.startsWith('Here is what I found')))
    await waitLoading(page, false)
    // The older hook marks the failing call `error` (its ToolMessage has status error); the current
    // one (1.1.0) ends every call `finished`, the failing one too: against the real JS server 1.5.1
    // it renders exactly the same.
    const done = hook === 'legacy' ? 'completed' : 'finished'
    await page.waitForFunction((want) => JSON.stringify(Array.from(document.querySelectorAll('#tools li'), (li) => li.textContent)) === want,
      JSON.stringify([`get_weather:${done}`, `search:${done}`, `broken:${hook === 'legacy' ? 'error' : 'finished'}`]))
    const texts = await messages(page)
    t.match(texts.at(-1), /^Here is what I found: It is sunny and 21 degrees in Paris broken\. \| Found 2 results for Paris broken\. \| Error: The broken tool failed on: Paris broken/)
    noPageErrors(t, page)
  })
}
