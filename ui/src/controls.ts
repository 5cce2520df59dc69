// The clock (shown in the header, moved from there or from the Clock & state view), resets, and
// export and import of the whole state.

import { admin, type BusMessage, type ClockState } from './api.js'
import { byId, duration } from './dom.js'
import { act, clock, fillWorkspaces, known, say } from './shared.js'

export function controlsView() {
  const now = byId('clock-now')
  const mode = byId('clock-mode')
  const toggle = byId<HTMLButtonElement>('clock-toggle')

  const showClock = (state: ClockState) => {
    clock.set(state)
    draw()
  }
  const draw = () => {
    const at = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z')
    now.textContent = at.replace('T', ' ')
    now.setAttribute('datetime', at)
    mode.textContent = clock.state.frozen ? 'frozen' : 'running'
    mode.className = `badge ${clock.state.frozen ? 'muted' : 'good'}`
    toggle.textContent = clock.state.frozen ? 'Run' : 'Freeze'
    toggle.setAttribute('aria-label', clock.state.frozen ? 'Let the clock run' : 'Freeze the clock')
  }
  // A running clock's display moves on by itself; a frozen one only when told.
  setInterval(() => {
    if (!clock.state.frozen) draw()
  }, 1000)

  const change = (button: HTMLButtonElement | null, body: object, what: string, done: string) =>
    act(button, what, done, async () => showClock(await admin.post<ClockState>('/clock', body)))
  const advance = (button: HTMLButtonElement | null, ms: number) =>
    change(button, { action: 'advance', ms }, 'Advancing the clock', `Clock ${ms < 0 ? 'moved back' : 'advanced'} by ${duration(Math.abs(ms))}.`)

  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-advance]')) {
    button.setAttribute('aria-label', `Advance the clock by ${button.textContent?.replace('+', '')}`)
    button.addEventListener('click', () => void advance(button, Number(button.dataset.advance)))
  }
  toggle.addEventListener('click', () => {
    const freeze = !clock.state.frozen
    void change(toggle, { action: freeze ? 'freeze' : 'unfreeze' }, 'Changing the clock', freeze ? 'Clock frozen.' : 'Clock running.')
  })

  const clockForm = byId<HTMLFormElement>('clock-form')
  clockForm.addEventListener('submit', (event) => {
    event.preventDefault()
    const seconds = Number(byId<HTMLInputElement>('clock-advance-seconds').value)
    if (!Number.isFinite(seconds)) return say('Advance by a number of seconds.', 'error')
    void advance(clockForm.querySelector('button[type=submit]'), Math.round(seconds * 1000))
  })
  const setButton = byId<HTMLButtonElement>('clock-set')
  setButton.addEventListener('click', () => {
    const to = byId<HTMLInputElement>('clock-set-to').value.trim()
    void change(setButton, { action: 'set', to }, 'Setting the clock', `Clock set to ${to}.`)
  })

  const resetForm = byId<HTMLFormElement>('reset-form')
  const resetWorkspace = byId<HTMLSelectElement>('reset-workspace')
  resetForm.addEventListener('submit', (event) => {
    event.preventDefault()
    const workspace = resetWorkspace.value
    const name = known.workspaces.find((w) => w.id === workspace)?.name ?? workspace
    void act(resetForm.querySelector('button[type=submit]'), 'Resetting the workspace', `Workspace ${name} reset.`, () => admin.post('/reset', { workspace }))
  })
  const resetAll = byId<HTMLButtonElement>('reset-all')
  resetAll.addEventListener('click', () => void act(resetAll, 'Resetting', 'Everything reset.', () => admin.post('/reset')))

  const exportButton = byId<HTMLButtonElement>('state-export')
  exportButton.addEventListener('click', () => void act(exportButton, 'Exporting', 'State exported.', async () => {
    const state = await admin.get<object>('/state')
    const link = document.createElement('a')
    link.href = URL.createObjectURL(new Blob([JSON.stringify(state, null, 2)], { type: 'application/json' }))
    link.download = `hangar-state-${new Date(clock.now()).toISOString().replace(/[:.]/g, '-')}.json`
    link.click()
    URL.revokeObjectURL(link.href)
  }))
  const importForm = byId<HTMLFormElement>('import-form')
  importForm.addEventListener('submit', (event) => {
    event.preventDefault()
    const file = byId<HTMLInputElement>('state-file').files?.[0]
    if (!file) return say('Choose a state document to import.', 'error')
    void act(importForm.querySelector('button[type=submit]'), 'Importing', `State imported from ${file.name}.`, async () => admin.put('/state', await file.text()))
  })

  return {
    showClock,
    /** The workspaces are known again (the deployments were read). */
    onWorkspaces: () => fillWorkspaces(resetWorkspace),
    onMessage(message: BusMessage) {
      if (message.topic === 'clock') showClock(message.data as unknown as ClockState)
    },
  }
}
