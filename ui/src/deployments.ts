// Deployments per workspace, with their revisions moving and the time left to each one's next step
// at its speed, and the sources uploaded for remote builds. Read through the control plane (the
// list) and the admin API (each revision's schedule, each upload); moved with the admin API (speed,
// advance, force).

import { admin, adminHeaders, call, send, type BusMessage, type Deployment, type RevisionSchedule, type RevisionStep, type SourceUpload, type Workspace } from './api.js'
import { badge, byId, duration, empty, h, replace, shortId, table, trackEdits } from './dom.js'
import { act, clock, known, loadWorkspaces, refresher } from './shared.js'

const SPEEDS = ['fast', 'realistic', 'instant', 'poll', 'manual']
const FORCEABLE = ['DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'INTERRUPTED']
/** The newest revisions shown per deployment. */
const SHOWN_REVISIONS = 5

interface Loaded {
  workspace: Workspace
  deployments: { deployment: Deployment; schedule: RevisionSchedule | null; uploads: SourceUpload[] }[]
}

export function deploymentsView(onLoaded: () => void) {
  const container = byId('deployments')
  trackEdits(container)
  /** performance.now() when the schedules on screen were read (their `next_in_ms` count from then). */
  let readAt = 0

  const load = async () => {
    const workspaces = await loadWorkspaces()
    const loaded: Loaded[] = await Promise.all(workspaces.map(async (workspace) => {
      const list = await call<{ resources: Deployment[] }>('GET', '/v2/deployments?limit=100', { tenant: workspace.id })
      const schedules = await Promise.all(list.resources.map((d) => admin.get<RevisionSchedule>(`/deployments/${d.id}/revisions`).catch(() => null)))
      // Only remote builds (internal_source) upload sources.
      const uploads = await Promise.all(list.resources.map((d) => d.source !== 'internal_source' ? []
        : admin.get<{ uploads: SourceUpload[] }>(`/deployments/${d.id}/uploads`).then((r) => r.uploads, () => [])))
      return { workspace, deployments: list.resources.map((deployment, i) => ({ deployment, schedule: schedules[i], uploads: uploads[i] })) }
    }))
    readAt = performance.now()
    known.deployments = new Map(loaded.map(({ workspace, deployments }) => [workspace.id, deployments.map((d) => d.deployment)]))
    replace(container, loaded.map(renderWorkspace))
    countDown()
    onLoaded()
  }
  const refresh = refresher(load)

  const renderWorkspace = ({ workspace, deployments }: Loaded) =>
    h('section', { class: 'workspace', 'aria-labelledby': `ws-${workspace.id}` },
      h('h3', { id: `ws-${workspace.id}` }, workspace.name ?? 'Workspace', ' ', h('code', {}, workspace.id), workspace.default ? h('span', { class: 'badge muted' }, 'default') : null),
      deployments.length === 0 ? empty('No deployments.') : deployments.map(({ deployment, schedule, uploads }) => renderDeployment(deployment, schedule, uploads)))

  const renderDeployment = (d: Deployment, schedule: RevisionSchedule | null, uploads: SourceUpload[]) => {
    const speedId = `speed-${d.id}`
    const speedButton = h('button', { type: 'button', id: `set-speed-${d.id}` }, 'Set speed')
    speedButton.addEventListener('click', () => {
      const select = byId<HTMLSelectElement>(speedId)
      void act(speedButton, 'Setting the speed', `${d.name} now moves at ${select.value} speed.`, async () => {
        await admin.post(`/deployments/${d.id}/speed`, { speed: select.value })
        delete select.dataset.dirty
      })
    })
    const revisions = schedule?.revisions ?? []
    return h('article', { class: 'card deployment', 'aria-labelledby': `dep-${d.id}` },
      h('div', { class: 'row' },
        h('h4', { id: `dep-${d.id}` }, d.name), badge(d.status), h('span', { class: 'muted' }, d.source), h('code', { class: 'muted' }, d.id)),
      h('p', { class: 'controls' },
        h('label', { for: speedId }, 'Speed'),
        h('select', { id: speedId }, SPEEDS.map((s) => h('option', { value: s, selected: s === schedule?.speed }, s))),
        speedButton),
      schedule === null ? empty('Its revisions could not be read (deleted a moment ago?).')
        : table(`Revisions of ${d.name}, newest first`, ['Revision', 'Status', 'Speed', 'Next step', 'Time left', 'Actions'],
          revisions.slice(0, SHOWN_REVISIONS).map((r) => renderRevision(d, r)), 'revisions'),
      revisions.length > SHOWN_REVISIONS ? h('p', { class: 'muted' }, `${revisions.length - SHOWN_REVISIONS} older revisions not shown.`) : null,
      uploads.length === 0 ? null
        : table(`Sources uploaded for ${d.name}, newest first`, ['Upload', 'Uploaded', 'Size', 'Archive', ''], uploads.map((u) => renderUpload(d, u)), 'uploads'))
  }

  const renderUpload = (d: Deployment, u: SourceUpload) => {
    const archive = u.uploaded_at === null ? '—' : u.archive_error ?? (u.gzip ? `${u.files} files` : 'not gzip')
    let download: Node = document.createTextNode('')
    if (u.uploaded_at !== null) {
      const button = h('button', { type: 'button', 'aria-label': `Download upload ${u.id.slice(0, 8)}` }, 'Download')
      button.addEventListener('click', () => void act(button, 'Downloading the upload', `Upload ${u.id.slice(0, 8)} downloaded.`, async () => {
        const bytes = await (await send('GET', `/_hangar/deployments/${d.id}/uploads/${u.id}/content`, adminHeaders())).blob()
        const link = h('a', { href: URL.createObjectURL(bytes), download: u.object_path.split('/').pop() ?? 'source.tar.gz' })
        link.click()
        // The download has started from the blob; its URL is let go once this task is over.
        setTimeout(() => URL.revokeObjectURL(link.href))
      }))
      download = button
    }
    return h('tr', { 'data-upload': u.id },
      h('td', { title: u.object_path }, shortId(u.id)),
      h('td', {}, u.uploaded_at ?? `not yet (the URL expires ${u.expires_at})`),
      h('td', {}, u.size === null ? '—' : `${u.size} bytes`),
      h('td', {}, archive),
      h('td', {}, download))
  }

  const renderRevision = (d: Deployment, r: RevisionStep) => {
    const forceId = `force-${r.id}`
    const advance = h('button', { type: 'button', id: `advance-${r.id}`, 'aria-label': `Advance revision ${r.id.slice(0, 8)} to ${r.next_status}` }, `Advance to ${r.next_status}`)
    advance.addEventListener('click', () =>
      void act(advance, 'Advancing the revision', `Revision ${r.id.slice(0, 8)} advanced.`, () => admin.post(`/deployments/${d.id}/revisions/${r.id}/advance`)))
    const force = h('button', { type: 'button', id: `force-button-${r.id}` }, 'Force')
    force.addEventListener('click', () => {
      const select = byId<HTMLSelectElement>(forceId)
      void act(force, 'Forcing the revision', `Revision ${r.id.slice(0, 8)} forced to ${select.value}.`, async () => {
        await admin.post(`/deployments/${d.id}/revisions/${r.id}/status`, { status: select.value })
        delete select.dataset.dirty
      })
    })
    const active = d.active_revision_id === r.id ? h('span', { class: 'badge good' }, 'active') : null
    const actions = r.next_status === null ? '—' : h('div', { class: 'controls' },
      advance,
      h('label', { for: forceId, class: 'visually-hidden' }, `End revision ${r.id.slice(0, 8)} as`),
      h('select', { id: forceId }, FORCEABLE.map((s) => h('option', { value: s }, s))),
      force)
    return h('tr', { 'data-revision': r.id },
      h('td', {}, shortId(r.id), ' ', active),
      h('td', { class: 'revision-status' }, badge(r.status)),
      h('td', {}, r.speed),
      h('td', {}, r.next_status ?? '—'),
      h('td', r.next_in_ms === null ? {} : { 'data-due-in': r.next_in_ms, class: 'countdown' }, r.next_in_ms === null ? waitsFor(r) : ''),
      h('td', {}, actions))
  }

  /** Writes the time left in every countdown cell: it runs down with the clock, and stands still while the clock is frozen. */
  const countDown = () => {
    for (const cell of container.querySelectorAll<HTMLElement>('[data-due-in]')) {
      const dueIn = Number(cell.dataset.dueIn)
      if (clock.state.frozen) cell.textContent = `${duration(dueIn)} (clock frozen)`
      else {
        const left = dueIn - (performance.now() - readAt)
        cell.textContent = left > 0 ? duration(left) : 'due now'
      }
    }
  }
  setInterval(countDown, 250)

  return {
    refresh,
    onMessage(message: BusMessage) {
      if (message.topic === 'deployments' || message.topic === 'state' || message.topic === 'clock') refresh()
    },
  }
}

function waitsFor(r: RevisionStep): string {
  if (r.next_status === null) return '—'
  if (r.speed === 'manual') return 'waits to be moved (manual)'
  if (r.speed === 'poll') return 'moves when read (poll)'
  return '—'
}
