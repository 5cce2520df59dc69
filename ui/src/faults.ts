// Fault rules: the list (in the order they are tried, with how often each applied), adding one,
// removing one or all.

import { admin, type BusMessage, type Fault } from './api.js'
import { byId, empty, h, replace, table } from './dom.js'
import { act, fillWorkspaces, refresher } from './shared.js'

export function faultsView() {
  const container = byId('faults')
  const form = byId<HTMLFormElement>('fault-form')
  const workspace = byId<HTMLSelectElement>('fault-workspace')
  const field = (id: string) => byId<HTMLInputElement>(id).value.trim()
  const number = (id: string) => (field(id) === '' ? undefined : Number(field(id)))
  let count = 0

  const load = async () => {
    fillWorkspaces(workspace, { any: 'any' })
    const faults = (await admin.get<{ faults: Fault[] }>('/faults')).faults
    count = faults.length
    replace(container, faults.length === 0 ? empty('No fault rules: every request is answered normally.')
      : table('Fault rules, in the order they are tried', ['Method', 'Path', 'Workspace', 'Does', 'Probability', 'Applied', ''], faults.map(row)))
  }
  const refresh = refresher(load, 200)

  const row = (f: Fault) => {
    const remove = h('button', { type: 'button', id: `remove-${f.id}`, 'aria-label': `Remove the fault on ${f.method} ${f.path}` }, 'Remove')
    remove.addEventListener('click', () => void act(remove, 'Removing the fault', `Fault on ${f.path} removed.`, () => admin.delete(`/faults/${f.id}`)))
    const latency = f.latency === null ? null : 'ms' in f.latency ? `wait ${f.latency.ms} ms` : `wait ${f.latency.min_ms}–${f.latency.max_ms} ms`
    const does = [latency, f.status === null ? null : `answer ${f.status}${f.detail ? ` "${f.detail}"` : ''}`,
      f.drop_after_events === null ? null : `cut streams after ${f.drop_after_events} events`].filter(Boolean).join(', ')
    return h('tr', {},
      h('td', {}, f.method), h('td', {}, h('code', {}, f.path)), h('td', {}, f.workspace ?? 'any'), h('td', {}, does),
      h('td', { class: 'number' }, String(f.probability)),
      h('td', { class: 'number' }, `${f.matched}${f.times === null ? '' : ` of ${f.times}`}`),
      h('td', {}, remove))
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const latency = number('fault-latency')
    const rule = {
      method: byId<HTMLSelectElement>('fault-method').value,
      path: field('fault-path'),
      workspace: workspace.value || undefined,
      status: number('fault-status'),
      detail: field('fault-detail') || undefined,
      latency: latency === undefined ? undefined : { ms: latency },
      probability: number('fault-probability'),
      times: number('fault-times'),
      drop_after_events: number('fault-drop'),
    }
    void act(form.querySelector('button[type=submit]'), 'Adding the fault', `Fault on ${rule.path} added.`, () => admin.post('/faults', rule))
  })
  const clear = byId<HTMLButtonElement>('faults-clear')
  clear.addEventListener('click', () => void act(clear, 'Removing the faults', 'Every fault removed.', () => admin.delete('/faults')))

  return {
    refresh,
    onMessage(message: BusMessage) {
      // Requests change how often each rule applied.
      if (message.topic === 'faults' || message.topic === 'state' || (message.topic === 'request' && count > 0)) refresh()
    },
  }
}
