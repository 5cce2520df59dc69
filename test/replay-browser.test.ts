// useStream renders a replayed agent as it rendered the real one (issue 16). A chat page in
// Chromium (test/browser/chat-app.tsx, served from another origin) talks to the real JS agent server
// through `hangar record` — with the older hook (run streams) and with the current one (the session
// protocol, over SSE and over a WebSocket) — asks about the weather, sees the tool call and the interrupt, answers it; the
// recording is closed and the upstream stopped; the same page, pointed at hangar replaying the
// recording, is driven the same way, and what it shows at each point is compared.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import type { ReplayFile } from '../src/agent/replay-file.js'
import { buildRecorder } from '../src/record/proxy.js'
import { serveApp } from './helpers.js'
import { noPageErrors, skipWithoutChromium, startBrowserApp, type BrowserApp } from './browser-page.js'
import { startUpstream } from './upstream-server.js'

const skip = skipWithoutChromium('the replay browser test')
if (skip) console.log(`# replay browser test skipped: ${skip}`)

let app: BrowserApp
t.before(async () => {
  if (!skip) app = await startBrowserApp('chat-app.tsx')
})
t.teardown(async () => app?.close())

/** What the page shows, as an expression the page evaluates: each message (type and text), each tool call, the pending interrupt, the error. */
const SHOWN = `({
  messages: Array.from(document.querySelectorAll('#messages li')).map((li) => li.dataset.type + ': ' + li.textContent),
  tools: Array.from(document.querySelectorAll('#tools li')).map((li) => li.textContent),
  interrupt: document.querySelector('#interrupt').textContent,
  error: document.querySelector('#error').textContent,
})`
interface Shown { messages: string[]; tools: (string | null)[]; interrupt: string | null; error: string | null }
const shown = (page: Page) => page.evaluate<Shown>(SHOWN)

const idle = (page: Page) => page.waitForFunction(() => document.querySelector('#loading')!.textContent === 'false')

/**
 * Waits (bounded) until the page shows `want`, so that a render still on its way is not taken for
 * the answer; when it never does, what it shows then is returned, and the comparison fails with it.
 */
async function settled(page: Page, want: Shown | undefined): Promise<Shown> {
  if (want) await page.waitForFunction(`JSON.stringify(${SHOWN}) === ${JSON.stringify(JSON.stringify(want))}`).catch(() => undefined)
  return shown(page)
}

/**
 * A person's conversation: a question, the interrupt it stops at, the answer; what the page showed
 * at each stop (given what the live page showed, each stop waits for the page to settle on it).
 */
async function converse(t: Test, base: string, hook: Hook, live?: Shown[]): Promise<Shown[]> {
  const page = await app.open(t, base, { assistant: 'recorded_agent', ...HOOKS[hook] }, "typeof window.chat === 'object'")
  await page.evaluate(() => window.chat.submit('Paris'))
  await page.waitForFunction(() => document.querySelector('#interrupt')!.textContent !== '')
  await idle(page)
  const asked = await settled(page, live?.[0])
  await page.evaluate(() => window.chat.respond('yes'))
  await page.waitForFunction(() => Array.from(document.querySelectorAll('#messages li')).some((li) => li.textContent === 'Forecast sent: yes.'))
  await idle(page)
  const answered = await settled(page, live?.[1])
  noPageErrors(t, page)
  // Closed now, so that the recorder writes the page's open event streams before it stops.
  await page.context().close()
  return [asked, answered]
}

/**
 * The page's query for each hook: the older one (run streams), the current one over SSE, and over a
 * WebSocket (with no key: a browser's socket carries none, so the replay runs with auth off).
 */
const HOOKS = { legacy: { hook: 'legacy' }, current: {}, 'current over a WebSocket': { transport: 'websocket', key: '' } }
type Hook = keyof typeof HOOKS

t.test('useStream shows the replay as it showed the real agent: both hooks, the current one over SSE and over a WebSocket', { skip }, async (t) => {
  const upstream = await startUpstream(t)
  const out = mkdtempSync(join(tmpdir(), 'hangar-replay-browser-'))
  t.teardown(() => (process.env.KEEP_RECORDING ? console.log(`# recording kept in ${out}`) : rmSync(out, { recursive: true, force: true })))
  const recorder = buildRecorder({ upstream: upstream.url, out, logLevel: 'silent' })
  let closed = false
  t.teardown(() => (closed ? undefined : recorder.close()))
  await recorder.listen({ port: 0, host: '127.0.0.1' })
  const recorderUrl = `http://127.0.0.1:${(recorder.server.address() as { port: number }).port}`
  const live: Record<string, Shown[]> = {}
  for (const hook of Object.keys(HOOKS) as Hook[]) live[hook] = await converse(t, recorderUrl, hook)
  await recorder.close()
  closed = true
  await upstream.stop()

  for (const hook of Object.keys(HOOKS) as Hook[]) {
    t.equal(live[hook][0].interrupt, '{"question":"Send the forecast for Paris?"}', `${hook}: and the interrupt`)
  }
  const replay = JSON.parse(readFileSync(join(out, 'replay', 'recorded_agent.json'), 'utf8')) as ReplayFile
  t.same(replay.turns.map((turn) => [turn.input, turn.streams.length > 0, turn.protocol.length > 0]), [
    [{ human: 'Paris' }, true, false], [{ resume: 'yes' }, true, false],
    [{ human: 'Paris' }, false, true], [{ resume: 'yes' }, false, true],
    [{ human: 'Paris' }, false, true], [{ resume: 'yes' }, false, true],
  ], "the older hook's runs were streamed; the current hook's came as the thread's protocol events, over SSE and over a WebSocket")
  const { base } = await serveApp(t, { replay: out, replaySpeed: 'instant', auth: 'off' })
  for (const hook of Object.keys(HOOKS) as Hook[]) {
    const replayed = await converse(t, base, hook, live[hook])
    t.same(replayed, live[hook], `${hook} hook: the page shows the replay as it showed the real agent, at the interrupt and after the answer`)
  }
})
