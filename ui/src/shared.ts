// What the views share: the clock as last heard, the workspaces and deployments, the status line,
// and helpers for refreshing and for actions.

import { admin, HttpError, type ClockState, type Deployment, type Workspace } from './api.js'
import { byId } from './dom.js'

export const clock = {
  state: { now: '', now_ms: 0, frozen: true } as ClockState,
  /** performance.now() when `state` was heard. */
  heardAt: 0,
  /** The clock's "now" (epoch ms) at this moment, counting on from what was heard when it runs. */
  now(): number {
    return this.state.frozen ? this.state.now_ms : this.state.now_ms + (performance.now() - this.heardAt)
  },
  set(state: ClockState): void {
    this.state = state
    this.heardAt = performance.now()
  },
}

export const known = {
  workspaces: [] as Workspace[],
  /** Deployments by workspace, as last read. */
  deployments: new Map<string, Deployment[]>(),
}

export async function loadWorkspaces(): Promise<Workspace[]> {
  known.workspaces = (await admin.get<{ workspaces: Workspace[] }>('/workspaces')).workspaces
  return known.workspaces
}

export const defaultWorkspace = () => known.workspaces.find((w) => w.default)?.id

export const workspaceLabel = (w: Workspace) => `${w.name ?? 'Workspace'} (${w.id.slice(0, 8)})${w.default ? ' — default' : ''}`

/** Fills a workspace `<select>`, keeping its choice when that workspace is still there. */
export function fillWorkspaces(select: HTMLSelectElement, options: { any?: string } = {}): void {
  const chosen = select.value
  const items = known.workspaces.map((w) => new Option(workspaceLabel(w), w.id))
  if (options.any !== undefined) items.unshift(new Option(options.any, ''))
  select.replaceChildren(...items)
  if ([...select.options].some((o) => o.value === chosen)) select.value = chosen
}

/** Says something in the status line (read out by screen readers). */
export function say(text: string, tone: 'ok' | 'error' = 'ok'): void {
  const status = byId('status')
  status.textContent = text
  status.dataset.tone = tone
}

export const describe = (error: unknown) =>
  error instanceof HttpError ? `${error.status} ${error.detail}` : error instanceof Error ? error.message : String(error)

/**
 * A refresh that runs at most once at a time, a moment after it was asked for: a burst of changes
 * (a run's events, a revision's steps) costs one read, and a change during a read causes one more.
 */
export function refresher(work: () => Promise<void>, delayMs = 100): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined
  let running = false
  let again = false
  const run = async () => {
    timer = undefined
    if (running) {
      again = true
      return
    }
    running = true
    try {
      await work()
    } catch (error) {
      say(`Could not refresh: ${describe(error)}`, 'error')
    } finally {
      running = false
      if (again) {
        again = false
        schedule()
      }
    }
  }
  const schedule = () => {
    timer ??= setTimeout(run, delayMs)
  }
  return schedule
}

/**
 * Runs an action from a button: the button is busy meanwhile, and the outcome goes to the status
 * line (`done`, or "<what> failed: <why>"). Answers whether it worked.
 */
export async function act(button: HTMLButtonElement | null, what: string, done: string, action: () => Promise<unknown>): Promise<boolean> {
  if (button) button.disabled = true
  try {
    await action()
    say(done)
    return true
  } catch (error) {
    say(`${what} failed: ${describe(error)}`, 'error')
    return false
  } finally {
    if (button) button.disabled = false
  }
}
