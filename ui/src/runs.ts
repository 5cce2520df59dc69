// Threads and runs of one agent server (the root one, or a deployment's): each run's events as they
// were streamed (read back from the run's join stream, from its first event), its status, the
// feedback URLs it handed out, its feedback records, and thumbs up/down sent to those URLs by hand.

import { call, publicHeaders, send, type BusMessage, type Feedback, type Run, type Thread } from './api.js'
import { badge, byId, empty, h, pretty, replace, shortId, table, trackEdits } from './dom.js'
import { act, defaultWorkspace, known, refresher, say } from './shared.js'
import { readEvents, type SseMessage } from './sse.js'

const ACTIVE = ['pending', 'running']

interface RunLog {
  events: SseMessage[]
  /** loading: a stream is open; done: every event is here; broken: the stream ended early (resumed on the next refresh). */
  state: 'loading' | 'done' | 'broken'
}

/** Whether a request the journal recorded may have changed what this view shows (never one of the view's own reads). */
export const isFeedbackWrite = (m: BusMessage) => {
  const path = String(m.data.path)
  return /\/feedback\/tokens\/[^/]+$/.test(path) || (m.data.method === 'POST' && /\/feedback$/.test(path))
}
const isThreadWrite = (m: BusMessage) => m.data.method !== 'GET' && /\/threads(\/[^/]+)?$/.test(String(m.data.path)) && !String(m.data.path).endsWith('/search')

export function runsView() {
  const serverSelect = byId<HTMLSelectElement>('agent-server')
  const threadsBox = byId('threads')
  const runsBox = byId('runs')
  trackEdits(runsBox)
  /** The thread the person chose; null: follow the most recently updated one. */
  let chosen: string | null = null
  let threads: Thread[] = []
  let runs: Run[] = []
  let feedback = new Map<string, Feedback[]>()
  let logs = new Map<string, RunLog>()
  /** Ends the streams of the agent server on screen (when another is chosen, or state is replaced). */
  let streams = new AbortController()

  const scope = () => serverSelect.value
  const base = () => (scope() ? `/deployments/${scope()}/agent` : '')
  /**
   * The workspace to read feedback in: the deployment's, whose runs belong to it; for the root agent
   * server, whose runs belong to none, the default one (a workspace is needed with HANGAR_REQUIRE_TENANT).
   */
  const tenant = () => [...known.deployments.values()].flat().find((d) => d.id === scope())?.tenant_id ?? defaultWorkspace()

  const forget = () => {
    streams.abort()
    streams = new AbortController()
    logs = new Map()
  }

  const load = async () => {
    threads = await call<Thread[]>('POST', `${base()}/threads/search`, { body: { limit: 20, sort_by: 'updated_at', sort_order: 'desc' } })
    if (chosen !== null && !threads.some((t) => t.thread_id === chosen)) chosen = null
    const shown = chosen ?? threads[0]?.thread_id ?? null
    runs = shown === null ? [] : await call<Run[]>('GET', `${base()}/threads/${shown}/runs?limit=10`)
    const lists = await Promise.all(runs.map((r) => call<Feedback[]>('GET', `/api/v1/feedback?run=${r.run_id}`, { tenant: tenant() })))
    feedback = new Map(runs.map((r, i) => [r.run_id, lists[i]]))
    for (const run of runs) follow(run)
    draw(shown)
  }
  const refresh = refresher(load)
  const redraw = refresher(async () => draw(chosen ?? threads[0]?.thread_id ?? null), 50)

  /** Reads a run's events from its join stream: from the first (or after the last one here), then live until the run ends. */
  const follow = (run: Run) => {
    const log = logs.get(run.run_id) ?? { events: [], state: 'broken' }
    if (log.state !== 'broken') return
    logs.set(run.run_id, log)
    log.state = 'loading'
    const signal = streams.signal
    const after = log.events.at(-1)?.id ?? '-1'
    send('GET', `${base()}/threads/${run.thread_id}/runs/${run.run_id}/stream`, publicHeaders(), { headers: { 'last-event-id': after }, signal })
      .then((response) => readEvents(response, (event) => {
        log.events.push(event)
        redraw()
      }))
      .then(() => {
        // A stream cut short (a fault, a network error) while the run still runs is resumed on the next refresh.
        const current = runs.find((r) => r.run_id === run.run_id)
        log.state = current && ACTIVE.includes(current.status) ? 'broken' : 'done'
      }, () => {
        log.state = 'broken'
      })
      .finally(() => {
        if (!signal.aborted) redraw()
      })
  }

  const draw = (shown: string | null) => {
    replace(threadsBox, threads.length === 0 ? empty('No threads yet.') : [
      chosen === null ? h('p', { class: 'muted' }, 'Following the most recently updated thread.') : followButton(),
      table('Threads, most recently updated first', ['Thread', 'Status', 'Updated', ''], threads.map((t) => threadRow(t, t.thread_id === shown))),
    ])
    replace(runsBox, shown === null ? empty('No thread to show.') : runs.length === 0 ? empty('This thread has no runs.') : runs.map(renderRun))
  }

  const followButton = () => {
    const button = h('button', { type: 'button', id: 'follow-newest' }, 'Follow the newest thread')
    button.addEventListener('click', () => {
      chosen = null
      refresh()
    })
    return button
  }

  const threadRow = (t: Thread, shown: boolean) => {
    const button = h('button', { type: 'button', id: `show-${t.thread_id}`, 'aria-pressed': String(shown), 'aria-label': `Show the runs of thread ${t.thread_id}` }, shown ? 'Shown' : 'Show')
    button.addEventListener('click', () => {
      chosen = t.thread_id
      refresh()
    })
    return h('tr', { class: shown ? 'chosen' : '' }, h('td', {}, shortId(t.thread_id)), h('td', {}, badge(t.status)), h('td', {}, time(t.updated_at)), h('td', {}, button))
  }

  const renderRun = (run: Run) => {
    const log = logs.get(run.run_id)
    const events = log?.events ?? []
    const urls = events.filter((e) => e.event === 'feedback').map((e) => parse(e.data) as Record<string, string>).at(-1)
    const records = feedback.get(run.run_id) ?? []
    return h('article', { class: 'card run', 'aria-labelledby': `run-${run.run_id}`, 'data-run': run.run_id },
      h('div', { class: 'row' },
        h('h4', { id: `run-${run.run_id}` }, 'Run ', h('code', {}, run.run_id)),
        badge(run.status), h('span', { class: 'muted' }, `assistant ${run.assistant_id.slice(0, 8)} · `, time(run.created_at))),
      h('h5', {}, `Events (${events.length})`, log?.state === 'loading' ? ' · streaming' : ''),
      events.length === 0 ? empty(log?.state === 'loading' ? 'Waiting for events…' : 'No events.')
        : h('ol', { class: 'events' }, events.map((e) => renderEvent(run, e))),
      urls ? [h('h5', {}, 'Feedback URLs'), Object.entries(urls).map(([key, url]) => renderUrl(run, key, url))] : null,
      h('h5', {}, 'Feedback'),
      records.length === 0 ? empty('No feedback yet.') : table(`Feedback on run ${run.run_id}, newest first`, ['Key', 'Score', 'Value', 'Comment', 'Correction', 'When'],
        records.map((f) => h('tr', {}, h('td', {}, f.key), h('td', { class: 'score' }, show(f.score)), h('td', {}, show(f.value)), h('td', {}, f.comment ?? ''), h('td', {}, show(f.correction)), h('td', {}, time(f.created_at))))))
  }

  const renderEvent = (run: Run, e: SseMessage) => {
    const data = parse(e.data)
    const preview = e.data.length > 90 ? `${e.data.slice(0, 90)}…` : e.data
    return h('li', {},
      h('details', { id: `event-${run.run_id}-${e.id}` },
        h('summary', {}, h('span', { class: 'event-name' }, e.event), ' ', h('span', { class: 'muted' }, `id ${e.id ?? '—'}`), ' ', h('code', { class: 'preview' }, preview)),
        h('pre', {}, typeof data === 'string' ? data : pretty(data))))
  }

  const renderUrl = (run: Run, key: string, url: string) => {
    const commentId = `comment-${run.run_id}-${key}`
    const vote = (score: number, label: string) => {
      const button = h('button', { type: 'button', id: `vote-${score}-${run.run_id}-${key}`, class: 'vote', 'aria-label': `${label} for ${key}` }, thumb(score === 1 ? 'up' : 'down'), label)
      button.addEventListener('click', () => {
        const comment = byId<HTMLInputElement>(commentId)
        void act(button, 'Sending feedback', `Feedback recorded: ${key} = ${score}.`, async () => {
          // The URL is the whole authorization; sent as any client would (and so recorded in the journal).
          await send('POST', url, {}, { body: { score, ...(comment.value ? { comment: comment.value } : {}) } })
          comment.value = ''
          delete comment.dataset.dirty
          refresh()
        })
      })
      return button
    }
    return h('div', { class: 'feedback-url' },
      h('p', {}, h('strong', {}, key), ' ', h('code', { class: 'url' }, url)),
      h('p', { class: 'controls' },
        h('label', { for: commentId }, 'Comment'), h('input', { id: commentId, type: 'text', size: 30 }),
        vote(1, 'Thumbs up'), vote(0, 'Thumbs down')))
  }

  /** The agent servers: the root one, and each deployment that serves one (a revision of it DEPLOYED). */
  const updateServers = () => {
    const current = scope()
    const serving = [...known.deployments.values()].flat().filter((d) => d.status === 'READY')
    const options = [new Option('Root agent server', ''), ...serving.map((d) => new Option(`Deployment ${d.name} (${d.id.slice(0, 8)})`, d.id))]
    const listed = (list: HTMLOptionElement[]) => list.map((o) => `${o.value} ${o.text}`).join('\n')
    // Left alone when nothing changed, so that an open list is not pulled from under the person.
    if (listed(options) === listed([...serverSelect.options])) return
    serverSelect.replaceChildren(...options)
    serverSelect.value = serving.some((d) => d.id === current) ? current : ''
    if (serverSelect.value !== current) {
      say('The deployment whose agent server was shown no longer serves one: showing the root agent server.')
      switchServer()
    }
  }
  const switchServer = () => {
    forget()
    chosen = null
    threads = []
    runs = []
    refresh()
  }
  serverSelect.addEventListener('change', switchServer)

  return {
    refresh,
    updateServers,
    onMessage(message: BusMessage) {
      if (message.topic === 'run' && message.data.scope === scope()) refresh()
      else if (message.topic === 'state') {
        forget()
        refresh()
      } else if (message.topic === 'request' && (isFeedbackWrite(message) || isThreadWrite(message))) refresh()
    },
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const show = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value))
/** An instant as month, day and time of day (the whole instant as its title). */
export const time = (iso: string) => h('time', { datetime: iso, title: iso }, iso.slice(5, 19).replace('T', ' '))

/** A thumb pointing up or down, drawn (no icon font or emoji font needed). */
function thumb(direction: 'up' | 'down'): SVGSVGElement {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg')
  svg.setAttribute('viewBox', '0 0 20 20')
  svg.setAttribute('aria-hidden', 'true')
  svg.setAttribute('class', `thumb ${direction}`)
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path')
  path.setAttribute('d', 'M2 9h3v9H2zM7 18V9l4-7c1.2 0 2 .8 2 2v4h4.6a2 2 0 0 1 2 2.4l-1.2 6A2 2 0 0 1 16.4 18z')
  svg.appendChild(path)
  return svg
}
