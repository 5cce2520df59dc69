// The interactive API docs (/docs) in a real browser (Debian's Chromium, headless, driven by
// playwright-core), as a person uses them: "Authorize" with an API key, then "Execute" an
// operation and read its answer on the page. Nothing sleeps: every wait is for the page.

import { existsSync } from 'node:fs'
import t, { type Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startHangar } from '../src/embed.js'

const CHROMIUM = '/usr/bin/chromium'
/** How long a wait for the page may take before the test fails (real time; the page answers in milliseconds). */
const WAIT_MS = 15_000
const KEY = 'docs-key'

const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (Debian: apt-get install -y chromium); the docs page's browser test needs it`
if (skip) console.log(`# docs browser test skipped: ${skip}`)

let browser: Browser
t.before(async () => {
  if (skip) return
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
})
t.teardown(async () => browser?.close())

async function openDocs(t: Test, url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  page.setDefaultTimeout(WAIT_MS)
  await page.goto(`${url}/docs`)
  return page
}

/** Runs one operation from the page ("Execute") and returns the status code the page shows (without
 * swagger-ui's "Undocumented" note on codes the document does not list, as the real one lists no 401). */
async function execute(page: Page, method: string, path: string): Promise<string> {
  const operation = page.locator(`.opblock-${method}`, { has: page.locator(`[data-path="${path}"]`) })
  if (!(await operation.locator('.opblock-body').isVisible())) await operation.locator('.opblock-summary').click()
  const answers = operation.locator('.live-responses-table')
  // An earlier answer is cleared first, so the one read is this call's.
  if (await answers.isVisible()) {
    await operation.getByRole('button', { name: 'Clear' }).click()
    await answers.waitFor({ state: 'detached' })
  }
  await operation.getByRole('button', { name: 'Execute' }).click()
  const status = answers.locator('tbody .response-col_status')
  await status.waitFor()
  return /^\s*(\d{3})/.exec((await status.textContent())!)?.[1] ?? `no status code in ${await status.textContent()}`
}

t.test('a key entered under "Authorize" is sent by try-it: GET /v2/deployments answers 200 on the page', { skip }, async (t) => {
  const hangar = await startHangar({ config: { apiKeys: [KEY] } })
  t.teardown(() => hangar.close())
  const page = await openDocs(t, hangar.url)

  t.equal(await execute(page, 'get', '/v2/deployments'), '401', 'before authorizing, the control plane turns the call away')

  await page.locator('button.authorize').first().click()
  const apiKey = page.locator('.auth-container', { has: page.locator('h4', { hasText: 'API Key' }) })
  await apiKey.getByLabel('Value:').fill(KEY)
  await apiKey.getByRole('button', { name: 'Apply credentials' }).click()
  await apiKey.locator('h6', { hasText: 'Authorized' }).waitFor()
  await page.locator('.modal-ux').getByRole('button', { name: 'Close' }).first().click()

  t.equal(await execute(page, 'get', '/v2/deployments'), '200', 'with the key, the page shows 200')
  t.equal(await execute(page, 'post', '/threads/search'), '200', 'the same key opens the agent server')
})
