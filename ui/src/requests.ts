// The request journal: the last requests, newest first; choosing one shows everything recorded of it.

import { admin, type BusMessage, type JournalEntry } from './api.js'
import { byId, empty, h, pretty, replace, table } from './dom.js'
import { act, refresher } from './shared.js'

const SHOWN = 100

export function requestsView() {
  const container = byId('requests')
  const detail = byId('request-detail')
  const hideOwn = byId<HTMLInputElement>('requests-hide-own')
  const clear = byId<HTMLButtonElement>('requests-clear')
  let entries: JournalEntry[] = []
  let chosen: number | null = null

  const own = (e: JournalEntry) => e.request_headers['x-hangar-client'] === 'inspector'

  const load = async () => {
    entries = (await admin.get<{ requests: JournalEntry[] }>('/requests?limit=1000')).requests
    draw()
  }
  const refresh = refresher(load, 200)

  const draw = () => {
    const shown = entries.filter((e) => !(hideOwn.checked && own(e))).slice(0, SHOWN)
    replace(container, shown.length === 0 ? empty('No requests recorded.') : table('Requests, newest first', ['#', 'Method', 'Path', 'Status', 'Latency'],
      shown.map((e) => {
        const open = h('button', { type: 'button', id: `request-${e.id}`, class: 'link', 'aria-pressed': String(e.id === chosen), 'aria-label': `Details of request ${e.id}: ${e.method} ${e.path}` }, e.path)
        open.addEventListener('click', () => {
          chosen = e.id
          draw()
        })
        return h('tr', { class: e.id === chosen ? 'chosen' : '' },
          h('td', {}, String(e.id)), h('td', {}, e.method), h('td', { class: 'path' }, open, e.query ? h('span', { class: 'muted' }, `?${e.query}`) : null),
          h('td', {}, h('span', { class: `badge ${e.status >= 400 ? 'bad' : 'good'}` }, String(e.status))), h('td', { class: 'number' }, `${e.latency_ms.toFixed(1)} ms`))
      })))
    const entry = entries.find((e) => e.id === chosen)
    replace(detail, h('h3', { id: 'request-detail-title' }, entry ? `Request ${entry.id}` : 'Request'),
      entry ? h('dl', {},
        h('dt', {}, 'Request'), h('dd', {}, h('code', {}, `${entry.method} ${entry.path}${entry.query ? `?${entry.query}` : ''}`)),
        h('dt', {}, 'Status'), h('dd', {}, String(entry.status)),
        h('dt', {}, 'Time (hangar clock)'), h('dd', {}, entry.time),
        h('dt', {}, 'Latency'), h('dd', {}, `${entry.latency_ms} ms`),
        h('dt', {}, 'Workspace'), h('dd', {}, entry.workspace ?? '—'),
        h('dt', {}, 'Request headers'), h('dd', {}, h('pre', {}, pretty(entry.request_headers))),
        h('dt', {}, 'Request body'), h('dd', {}, entry.request_body === null ? '—' : h('pre', {}, body(entry.request_body))),
        h('dt', {}, 'Response headers'), h('dd', {}, h('pre', {}, pretty(entry.response_headers))))
        : empty('Choose a request to see its headers and body.'))
  }

  hideOwn.addEventListener('change', draw)
  clear.addEventListener('click', () => void act(clear, 'Clearing the journal', 'The journal is empty.', async () => {
    await admin.delete('/requests')
    chosen = null
    refresh()
  }))

  return {
    refresh,
    onMessage(message: BusMessage) {
      if (message.topic === 'request' || message.topic === 'state') refresh()
    },
  }
}

/** A JSON body pretty-printed; any other text as it is. */
function body(text: string): string {
  try {
    return pretty(JSON.parse(text))
  } catch {
    return text
  }
}
