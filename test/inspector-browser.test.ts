// The inspector page in a real browser (Debian's Chromium, headless, driven by playwright-core)
// against a listening hangar on a manual clock: a deployment created through the API reaches
// DEPLOYED when the page advances the clock; a streamed run's events and feedback URLs appear; a
// thumbs-up sent from the page comes back as a feedback record. Nothing sleeps: every wait is for
// something to appear on the page. Takes a 1280×800 screenshot; with HANGAR_WRITE_SCREENSHOT=1 it
// replaces docs/inspector.png (the README's picture), otherwise it goes to the test's own directory,
// so a test run leaves the checkout clean (the picture holds ids and times that change every run).

import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { Client } from '@langchain/langgraph-sdk'
import { startHangar, type RunningHangar } from '../src/embed.js'
import { buildInspector } from './inspector-build.js'
import { dockerDeployment, TENANT_A } from './helpers.js'

// Functions given to page.evaluate run in the page; these are its globals (the project's type check has no DOM library).
declare const document: any
declare const getComputedStyle: (element: any) => { color: string; backgroundColor: string }
declare const Node: { TEXT_NODE: number }

const CHROMIUM = '/usr/bin/chromium'
const DOCS_SCREENSHOT = new URL('../docs/inspector.png', import.meta.url).pathname
const VIEWPORT = { width: 1280, height: 800 }
/** How long a wait for the page may take before the test fails (real time; the page answers in milliseconds). */
const WAIT_MS = 15_000
const KEY = 'browser-test'

const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (Debian: apt-get install -y chromium); the inspector's browser tests need it`
if (skip) console.log(`# inspector browser tests skipped: ${skip}`)

let browser: Browser
t.before(async () => {
  if (skip) return
  await buildInspector()
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
})
t.teardown(async () => browser?.close())

/** The page, loaded; `errors` collects what it throws (each test ends by checking there is none). */
async function open(t: Test, hangar: RunningHangar): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORT })
  t.teardown(() => context.close())
  // The tests' loader (tsx, esbuild's keepNames) wraps named inner functions in `__name(fn, "name")`;
  // a function handed to page.evaluate carries those calls into the page, so the page gets the helper.
  await context.addInitScript('globalThis.__name = (fn) => fn')
  const page = await context.newPage()
  page.setDefaultTimeout(WAIT_MS)
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${hangar.url}/_hangar/ui`)
  return { page, errors }
}

async function started(t: Test, config: Parameters<typeof startHangar>[0] = {}) {
  const hangar = await startHangar(config)
  t.teardown(() => hangar.close())
  return hangar
}

t.test('deployments move, a run streams, and a thumbs-up comes back as feedback', { skip }, async (t) => {
  const hangar = await started(t)
  const { page, errors } = await open(t, hangar)
  await page.locator('#connection', { hasText: 'Live' }).waitFor()

  // A deployment created through the API appears, counting down to its next step on the frozen clock.
  const created = await fetch(`${hangar.url}/v2/deployments`, {
    method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(dockerDeployment({ name: 'support_bot' })),
  })
  const deployment = await created.json() as { id: string; latest_revision_id: string }
  const revision = page.locator(`tr[data-revision="${deployment.latest_revision_id}"]`)
  await revision.locator('.revision-status', { hasText: 'CREATING' }).waitFor()
  t.equal(await revision.locator('.countdown').textContent(), '1.0 s (clock frozen)', 'the time left to QUEUED, standing still')

  // Advancing the clock from the page walks it to DEPLOYED.
  await page.getByRole('button', { name: 'Advance the clock by 10 s' }).click()
  await revision.locator('.revision-status', { hasText: 'DEPLOYED' }).waitFor()
  await page.locator('article.deployment', { hasText: 'support_bot' }).locator('.badge', { hasText: 'READY' }).waitFor()
  t.pass('the revision reached DEPLOYED and the deployment is READY')
  await page.locator('#status', { hasText: 'Clock advanced by 10 s' }).waitFor()

  // A run streamed by the official SDK: its events and feedback URLs appear on the page.
  const client = new Client({ apiUrl: hangar.url, apiKey: KEY })
  const thread = await client.threads.create()
  let runId = ''
  let url = ''
  for await (const part of client.runs.stream(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'where is my parcel?' }] }, streamMode: ['values', 'messages-tuple'], feedbackKeys: ['helpful'],
  })) {
    if (part.event === 'metadata') runId = (part.data as { run_id: string }).run_id
    if (part.event === 'feedback') url = (part.data as Record<string, string>).helpful
  }
  t.ok(runId && url, 'the SDK saw the run id and a feedback URL')

  await page.getByRole('tab', { name: 'Threads & runs' }).click()
  const run = page.locator(`article[data-run="${runId}"]`)
  await run.locator('.badge', { hasText: 'success' }).waitFor()
  await run.locator('.events .event-name', { hasText: 'feedback' }).waitFor()
  const names = await run.locator('.events .event-name').allTextContents()
  t.equal(names[0], 'metadata', 'the events as streamed, from the first')
  t.ok(names.includes('messages'), 'the messages events are there')
  await run.locator('.url', { hasText: url }).waitFor()
  t.pass('the feedback URL the run handed out is shown')

  // An event's data, pretty-printed, opens on demand.
  const metadata = run.locator('.events details').first()
  await metadata.locator('summary').click()
  t.match(await metadata.locator('pre').textContent(), `"run_id": "${runId}"`)
  await metadata.locator('summary').click()

  // Thumbs up with a comment: the record comes back on the run.
  await run.getByLabel('Comment').fill('spot on')
  await run.getByRole('button', { name: 'Thumbs up for helpful' }).click()
  const record = run.locator('tbody tr', { hasText: 'spot on' })
  await record.waitFor()
  t.same(await record.locator('td').allTextContents().then((cells) => cells.slice(0, 4)), ['helpful', '1', '', 'spot on'])
  const stored = await (await fetch(`${hangar.url}/api/v1/feedback?run=${runId}`, { headers: { 'x-api-key': KEY } })).json() as { score: number; comment: string }[]
  t.match(stored, [{ score: 1, comment: 'spot on' }], 'the record is what the API holds')

  await page.mouse.move(0, 0)
  const screenshot = process.env.HANGAR_WRITE_SCREENSHOT === '1' ? DOCS_SCREENSHOT : `${t.testdir()}/inspector.png`
  const png = await page.screenshot({ path: screenshot })
  t.same([png.readUInt32BE(16), png.readUInt32BE(20)], [VIEWPORT.width, VIEWPORT.height], `a 1280×800 PNG saved to ${screenshot}`)
  t.ok(existsSync(screenshot))

  // The feedback view lists it too, and the journal shows the round trip.
  await page.getByRole('tab', { name: 'Feedback' }).click()
  await page.locator('#feedback tbody tr', { hasText: 'spot on' }).waitFor()
  await page.getByRole('tab', { name: 'Requests' }).click()
  const submission = page.locator('#requests tbody tr', { hasText: '/api/v1/feedback/tokens/' })
  await submission.getByRole('button').click()
  await page.locator('#request-detail pre', { hasText: 'spot on' }).waitFor()
  t.pass('the submission is in the request journal, with its body')
  t.same(errors, [], 'the page threw no errors')
})

t.test('a remote build\'s uploads show under its deployment, with what unpacking found, and download as uploaded', { skip }, async (t) => {
  const hangar = await started(t)
  const { page, errors } = await open(t, hangar)
  await page.locator('#connection', { hasText: 'Live' }).waitFor()
  const created = await fetch(`${hangar.url}/v2/deployments`, {
    method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'remote_build', source: 'internal_source', source_config: { deployment_type: 'dev' }, source_revision_config: { langgraph_config_path: 'langgraph.json' }, secrets: [] }),
  })
  const deployment = await created.json() as { id: string }
  const target = await (await fetch(`${hangar.url}/v2/deployments/${deployment.id}/upload-url`, { method: 'POST', headers: { 'x-api-key': KEY } })).json() as { upload_url: string; object_path: string }
  const upload = page.locator(`tr[data-upload="${target.object_path.split('/').pop()!.replace('.tar.gz', '')}"]`)
  await upload.locator('td', { hasText: 'not yet' }).waitFor()
  t.pass('an upload URL handed out shows, waiting for its upload')

  const bytes = gzipSync('a gzip of something that is not a tar archive')
  const put = await fetch(target.upload_url, {
    method: 'PUT', headers: { 'Content-Type': 'application/gzip', 'X-Goog-Content-Length-Range': '0,209715200' }, body: new Uint8Array(bytes),
  })
  t.equal(put.status, 200)
  await upload.locator('td', { hasText: 'it holds no tar archive' }).waitFor()
  t.match(await upload.textContent(), `${bytes.length} bytes`)
  const [download] = await Promise.all([page.waitForEvent('download'), upload.getByRole('button', { name: /^Download upload/ }).click()])
  t.same(await readFile((await download.path())!), bytes, 'the bytes as uploaded')
  t.same(errors, [], 'the page threw no errors')
})

t.test("a deployment's own agent server is inspected the same way, its feedback read in its workspace", { skip }, async (t) => {
  const hangar = await started(t, { config: { revisionSpeed: 'instant' } })
  const { page, errors } = await open(t, hangar)
  await page.locator('#connection', { hasText: 'Live' }).waitFor()
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json', 'x-tenant-id': TENANT_A }
  const deployment = await (await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers, body: JSON.stringify(dockerDeployment({ name: 'deployed_bot' })) })).json() as { id: string; url: string }

  await page.getByRole('tab', { name: 'Threads & runs' }).click()
  await page.locator('#agent-server option', { hasText: 'deployed_bot' }).waitFor({ state: 'attached' })
  await page.getByLabel('Agent server').selectOption(deployment.id)
  const thread = await (await fetch(`${deployment.url}/threads`, { method: 'POST', headers, body: '{}' })).json() as { thread_id: string }
  await fetch(`${deployment.url}/threads/${thread.thread_id}/runs/wait`, {
    method: 'POST', headers, body: JSON.stringify({ assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] }, feedback_keys: ['correct'] }),
  })
  const run = page.locator('article.run')
  await run.locator('.events .event-name', { hasText: 'feedback' }).waitFor()
  await run.getByRole('button', { name: 'Thumbs down for correct' }).click()
  await run.locator('tbody tr', { hasText: 'correct' }).locator('td.score', { hasText: '0' }).waitFor()
  t.pass("the thumbs-down on the deployment's run came back, read with its workspace")
  t.same(errors, [], 'the page threw no errors')
})

t.test('with an admin token, API keys and a required workspace, the page asks for its credentials and then works', { skip }, async (t) => {
  const hangar = await started(t, { config: { adminToken: 'open-sesame', apiKeys: ['team-key'], requireTenant: true } })
  const { page, errors } = await open(t, hangar)
  await page.locator('#connection', { hasText: 'Admin token needed' }).waitFor()
  await page.getByLabel('Admin token').fill('open-sesame')
  await page.getByLabel('API key').fill('team-key')
  await page.getByRole('button', { name: 'Save and reconnect' }).click()
  await page.locator('#connection', { hasText: 'Live' }).waitFor()

  const headers = { 'x-api-key': 'team-key', 'content-type': 'application/json', 'x-tenant-id': TENANT_A }
  await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers, body: JSON.stringify(dockerDeployment({ name: 'behind_a_key' })) })
  await page.locator('article.deployment', { hasText: 'behind_a_key' }).waitFor()
  t.pass('the deployments were read with the API key, in their workspace')

  await page.getByRole('tab', { name: 'Faults' }).click()
  await page.getByLabel('Path (glob or /regex/)').fill('/v2/listeners')
  await page.getByLabel('Answer status').fill('503')
  await page.getByRole('button', { name: 'Add fault' }).click()
  await page.locator('#faults tbody tr', { hasText: '/v2/listeners' }).waitFor()
  t.match(hangar.app.emulator.faults.list(), [{ path: '/v2/listeners', status: 503 }], 'the fault was added through the admin API, with the token')
  t.equal(await page.locator('#status').getAttribute('data-tone'), 'ok', 'no call failed')
  t.same(errors, [], 'the page threw no errors')
})

t.test('state exported from the page, reset, and imported back from the file', { skip }, async (t) => {
  const hangar = await started(t, { config: { revisionSpeed: 'instant' } })
  const { page, errors } = await open(t, hangar)
  await page.locator('#connection', { hasText: 'Live' }).waitFor()
  await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(dockerDeployment({ name: 'keep_me' })) })
  const kept = page.locator('article.deployment', { hasText: 'keep_me' })
  await kept.waitFor()

  await page.getByRole('tab', { name: 'Clock & state' }).click()
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export state (JSON)' }).click()])
  const file = await download.path()
  t.match(JSON.parse(await readFile(file, 'utf8')), { tables: { deployments: [{ name: 'keep_me' }] } }, 'the file is the state document')

  await page.getByRole('button', { name: 'Reset everything' }).click()
  await page.locator('#status', { hasText: 'Everything reset.' }).waitFor()
  await page.getByRole('tab', { name: 'Deployments' }).click()
  await kept.waitFor({ state: 'detached' })
  t.pass('the reset took the deployment away')

  await page.getByRole('tab', { name: 'Clock & state' }).click()
  await page.getByLabel('State document to import').setInputFiles(file)
  await page.getByRole('button', { name: 'Import (replaces all state)' }).click()
  await page.locator('#status', { hasText: 'State imported' }).waitFor()
  await page.getByRole('tab', { name: 'Deployments' }).click()
  await kept.waitFor()
  t.pass('the import brought it back')
  t.same(errors, [], 'the page threw no errors')
})

/** Visible texts whose contrast with their background is under 4.5:1 (run in the page). */
function lowContrast(): string[] {
  const rgb = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number)
  const luminance = ([r, g, b]: number[]) => {
    const linear = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
  }
  const background = (element: any): number[] => {
    for (let e = element; e; e = e.parentElement) {
      const color = rgb(getComputedStyle(e).backgroundColor)
      if (color.length === 3 || color[3] > 0) return color.slice(0, 3)
    }
    return [255, 255, 255]
  }
  const low: string[] = []
  for (const element of document.querySelectorAll('body *') as any[]) {
    const own = [...element.childNodes].some((n: any) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '')
    if (!own || !element.checkVisibility?.() || element.disabled) continue
    const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(background(element))]
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
    if (ratio < 4.5) low.push(`${element.tagName.toLowerCase()} "${element.textContent.trim().slice(0, 40)}": ${ratio.toFixed(2)}:1`)
  }
  return low
}

t.test('every control is labelled, the tabs work from the keyboard, and every text has enough contrast', { skip }, async (t) => {
  const hangar = await started(t)
  const { page, errors } = await open(t, hangar)
  await page.locator('#connection', { hasText: 'Live' }).waitFor()
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea') as any[]]
    .filter((field) => field.labels?.length === 0 && !field.getAttribute('aria-label'))
    .map((field) => field.id || field.outerHTML))
  t.same(unlabelled, [], 'every field has a label')
  await page.getByRole('tab', { name: 'Deployments' }).focus()
  await page.keyboard.press('ArrowRight')
  t.equal(await page.evaluate(() => document.activeElement?.id), 'tab-runs')
  t.equal(await page.getByRole('tab', { name: 'Threads & runs' }).getAttribute('aria-selected'), 'true')
  t.equal(await page.locator('#panel-runs').isVisible(), true)
  t.equal(await page.locator('#panel-deployments').isVisible(), false)
  await page.keyboard.press('End')
  t.equal(await page.evaluate(() => document.activeElement?.id), 'tab-state', 'End: the last tab')

  // Text contrast (WCAG AA: 4.5:1) of everything visible on every tab, with some data on it.
  await fetch(`${hangar.url}/v2/deployments`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(dockerDeployment()) })
  await fetch(`${hangar.url}/v2/nowhere`, { headers: { 'x-api-key': KEY } })
  for (const tab of ['Deployments', 'Threads & runs', 'Feedback', 'Requests', 'Faults', 'Clock & state']) {
    await page.getByRole('tab', { name: tab }).click()
    t.same(await page.evaluate(lowContrast), [], `${tab}: every text at 4.5:1 or more`)
  }
  t.same(errors, [], 'the page threw no errors')
})
