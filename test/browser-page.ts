// A React app of test/browser/ in a real browser (Debian's Chromium, headless, driven by
// playwright-core), as a frontend developer runs one: bundled with esbuild, served from its own
// origin (another port than hangar's, so every call to hangar is cross-origin), opened with the
// query string that says where hangar is. Uncaught errors on a page are collected; waits on a page
// are bounded and fail loudly. Never downloads a browser: without Chromium the tests skip.

import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { API_KEY } from './helpers.js'

export const CHROMIUM = '/usr/bin/chromium'
/** How long a wait on a page may take before the test fails (real time; the page answers in milliseconds). */
export const WAIT_MS = 15_000

/** `false`, or why the browser tests of `what` skip. */
export const skipWithoutChromium = (what: string) =>
  existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (Debian: apt-get install -y chromium); ${what} needs it`

export interface BrowserApp {
  /** Opens the app with `params` (and hangar's `api` and `key`); resolves once `ready` holds on the page. */
  open(t: Test, base: string, params: Record<string, string>, ready: string): Promise<Page>
  close(): Promise<void>
}

const pageErrors = new WeakMap<Page, string[]>()

/** Asserts that a page opened by `open` has thrown no uncaught error so far. */
export const noPageErrors = (t: Test, page: Page) => t.same(pageErrors.get(page), [], 'no uncaught error on the page')

/** Bundles test/browser/<entry>, serves it from its own origin and launches Chromium. */
export async function startBrowserApp(entry: string): Promise<BrowserApp> {
  const { build } = await import('esbuild')
  const bundle = await build({
    entryPoints: [new URL(`./browser/${entry}`, import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  })
  const script = bundle.outputFiles[0].text
  const html = '<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>'
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/app.js')) res.writeHead(200, { 'content-type': 'text/javascript' }).end(script)
    else res.writeHead(200, { 'content-type': 'text/html' }).end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://localhost:${(server.address() as { port: number }).port}`
  let browser: Browser
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
  } catch (error) {
    server.close()
    throw error
  }
  return {
    async open(t, base, params, ready) {
      const context = await browser.newContext()
      t.teardown(() => context.close())
      const page = await context.newPage()
      page.setDefaultTimeout(WAIT_MS)
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      if (process.env.DEBUG_PAGE) logTraffic(page)
      pageErrors.set(page, errors)
      await page.goto(`${origin}/?${new URLSearchParams({ api: base, key: API_KEY, ...params })}`)
      await page.waitForFunction(ready)
      return page
    },
    async close() {
      await browser.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** With DEBUG_PAGE=1: the page's console, requests, responses and socket frames, on the test's output. */
function logTraffic(page: Page) {
  page.on('console', (m) => console.log('# console', m.text()))
  page.on('request', (r) => console.log('# >>', r.method(), r.url(), r.postData()?.slice(0, 200)))
  page.on('response', (r) => console.log('# <<', r.status(), r.url()))
  page.on('websocket', (ws) => {
    console.log('# ws', ws.url())
    ws.on('framesent', (f) => console.log('# ws>', String(f.payload).slice(0, 200)))
    ws.on('framereceived', (f) => console.log('# ws<', String(f.payload).slice(0, 200)))
    ws.on('close', () => console.log('# ws closed'))
    ws.on('socketerror', (e) => console.log('# ws error', e))
  })
}
