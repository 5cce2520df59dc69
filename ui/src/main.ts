// The inspector page: tabs, settings, and the live connection. It follows GET /_hangar/events and
// hands each message to the views, which read again (through the documented APIs) what it changed.

import { adminHeaders, HttpError, saveSettings, send, settings, type BusMessage } from './api.js'
import { controlsView } from './controls.js'
import { deploymentsView } from './deployments.js'
import { byId } from './dom.js'
import { faultsView } from './faults.js'
import { feedbackView } from './feedback.js'
import { requestsView } from './requests.js'
import { runsView } from './runs.js'
import { describe, fillWorkspaces, loadWorkspaces, say } from './shared.js'
import { readEvents } from './sse.js'

const RETRY_MS = 2000

const controls = controlsView()
const runs = runsView()
const feedback = feedbackView()
const requests = requestsView()
const faults = faultsView()
const deployments = deploymentsView(() => {
  runs.updateServers()
  controls.onWorkspaces()
  fillWorkspaces(byId<HTMLSelectElement>('fault-workspace'), { any: 'any' })
  fillWorkspaces(byId<HTMLSelectElement>('feedback-workspace'))
})
const views = [controls, deployments, runs, feedback, requests, faults]

// ---- Tabs (arrow keys, Home and End move between them) ----

const tabs = [...document.querySelectorAll<HTMLButtonElement>('[role=tab]')]
function choose(tab: HTMLButtonElement, focus: boolean): void {
  for (const other of tabs) {
    const selected = other === tab
    other.setAttribute('aria-selected', String(selected))
    other.tabIndex = selected ? 0 : -1
    byId(other.getAttribute('aria-controls')!).hidden = !selected
  }
  if (focus) tab.focus()
  history.replaceState(null, '', `#${tab.id.slice('tab-'.length)}`)
}
for (const tab of tabs) {
  tab.addEventListener('click', () => choose(tab, false))
  tab.addEventListener('keydown', (event) => {
    const at = tabs.indexOf(tab)
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key]
    if (next === undefined) return
    event.preventDefault()
    choose(tabs[(next + tabs.length) % tabs.length], true)
  })
}
const fromHash = tabs.find((tab) => tab.id === `tab-${location.hash.slice(1)}`)
if (fromHash) choose(fromHash, false)

// ---- Settings ----

const token = byId<HTMLInputElement>('settings-admin-token')
const apiKey = byId<HTMLInputElement>('settings-api-key')
token.value = settings.adminToken
apiKey.value = settings.apiKey
byId<HTMLFormElement>('settings-form').addEventListener('submit', (event) => {
  event.preventDefault()
  saveSettings({ adminToken: token.value.trim(), apiKey: apiKey.value.trim() || 'inspector' })
  say('Settings saved; reconnecting.')
  void connect()
})

// ---- The live connection ----

const connection = byId('connection')
const setConnection = (state: string, text: string) => {
  connection.dataset.state = state
  connection.textContent = text
}
let current: AbortController | undefined

async function connect(): Promise<void> {
  current?.abort()
  const controller = new AbortController()
  current = controller
  setConnection('connecting', 'Connecting…')
  try {
    const response = await send('GET', '/_hangar/events', adminHeaders(), { signal: controller.signal })
    setConnection('live', 'Live')
    // Subscribed before the answer came: whatever changes from here on is heard, so one read of
    // everything suffices. The workspaces first: the views name one in their reads.
    await loadWorkspaces()
    for (const view of [deployments, runs, feedback, requests, faults]) view.refresh()
    await readEvents(response, (message) => {
      const parsed: BusMessage = { topic: message.event, data: JSON.parse(message.data) }
      for (const view of views) view.onMessage(parsed)
    })
    throw new Error('hangar ended the event stream')
  } catch (error) {
    if (controller.signal.aborted) return
    if (error instanceof HttpError && error.status === 401) {
      setConnection('denied', 'Admin token needed: enter it in Settings')
      byId<HTMLDetailsElement>('settings-form').closest('details')!.open = true
      token.focus()
      return
    }
    setConnection('lost', `Disconnected (${describe(error)}); retrying…`)
    setTimeout(() => {
      if (current === controller) void connect()
    }, RETRY_MS)
  }
}
void connect()
