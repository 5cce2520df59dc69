// Feedback records, newest first, for a workspace (its deployments' runs, and the root agent
// server's, which belong to no workspace), optionally of one run and one key.

import { call, type BusMessage, type Feedback } from './api.js'
import { byId, empty, h, replace, table } from './dom.js'
import { defaultWorkspace, fillWorkspaces, refresher } from './shared.js'
import { isFeedbackWrite, show, time } from './runs.js'

export function feedbackView() {
  const container = byId('feedback')
  const form = byId<HTMLFormElement>('feedback-filter')
  const workspace = byId<HTMLSelectElement>('feedback-workspace')
  const run = byId<HTMLInputElement>('feedback-run')
  const key = byId<HTMLInputElement>('feedback-key')

  const load = async () => {
    fillWorkspaces(workspace)
    const query = new URLSearchParams({ limit: '100' })
    if (run.value.trim()) query.append('run', run.value.trim())
    if (key.value.trim()) query.append('key', key.value.trim())
    const records = await call<Feedback[]>('GET', `/api/v1/feedback?${query}`, { tenant: workspace.value || defaultWorkspace() })
    replace(container, records.length === 0 ? empty('No feedback matches.') : table('Feedback, newest first', ['When', 'Run', 'Key', 'Score', 'Value', 'Comment', 'Correction'],
      records.map((f) => h('tr', {},
        h('td', {}, time(f.created_at)), h('td', {}, f.run_id ? h('code', {}, f.run_id) : '—'), h('td', {}, f.key),
        h('td', {}, show(f.score)), h('td', {}, show(f.value)), h('td', {}, f.comment ?? ''), h('td', {}, show(f.correction))))))
  }
  const refresh = refresher(load)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    refresh()
  })
  workspace.addEventListener('change', refresh)

  return {
    refresh,
    onMessage(message: BusMessage) {
      if (message.topic === 'state' || (message.topic === 'request' && isFeedbackWrite(message))) refresh()
    },
  }
}
