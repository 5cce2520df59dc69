// Every call the page makes: the admin API (with the admin token, when one is set) and the public
// APIs (with an API key and, where it matters, the workspace). No other way in.

const STORE = 'hangar-inspector'

export interface Settings {
  adminToken: string
  apiKey: string
}

/** Kept for this browser tab only (sessionStorage). */
export const settings: Settings = { adminToken: '', apiKey: 'inspector', ...JSON.parse(sessionStorage.getItem(STORE) ?? '{}') }

export function saveSettings(next: Settings): void {
  Object.assign(settings, next)
  sessionStorage.setItem(STORE, JSON.stringify(settings))
}

/** Marks the page's own requests, so the Requests view can leave them out. */
const CLIENT = { 'x-hangar-client': 'inspector' }

export class HttpError extends Error {
  constructor(readonly status: number, readonly detail: string) {
    super(`${status}: ${detail}`)
  }
}

export interface CallOptions {
  body?: unknown
  /** The workspace (`X-Tenant-Id`) of a public call. */
  tenant?: string
  headers?: Record<string, string>
  signal?: AbortSignal
}

export const adminHeaders = (): Record<string, string> => ({ ...CLIENT, ...(settings.adminToken ? { 'x-hangar-admin-token': settings.adminToken } : {}) })

export function publicHeaders(tenant?: string): Record<string, string> {
  return { ...CLIENT, 'x-api-key': settings.apiKey || 'inspector', ...(tenant ? { 'x-tenant-id': tenant } : {}) }
}

/** Sends a request and answers the response, throwing an HttpError for any status of 400 or more. */
export async function send(method: string, url: string, headers: Record<string, string>, options: CallOptions = {}): Promise<Response> {
  const init: RequestInit = { method, headers: { ...headers, ...options.headers }, signal: options.signal }
  if (options.body !== undefined) {
    init.body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
  }
  const response = await fetch(url, init)
  if (response.status >= 400) throw new HttpError(response.status, await detailOf(response))
  return response
}

async function detailOf(response: Response): Promise<string> {
  const text = await response.text()
  try {
    const detail = JSON.parse(text).detail
    if (typeof detail === 'string') return detail
    if (Array.isArray(detail)) return detail.map((e: { loc?: unknown[]; msg?: string }) => `${(e.loc ?? []).join('.')}: ${e.msg}`).join('; ')
  } catch {
    // not JSON: the text itself
  }
  return text || response.statusText
}

const json = async <T>(response: Response): Promise<T> => (response.status === 204 ? (undefined as T) : ((await response.json()) as T))

/** The admin API under /_hangar. */
export const admin = {
  get: async <T>(path: string) => json<T>(await send('GET', `/_hangar${path}`, adminHeaders())),
  post: async <T>(path: string, body?: unknown) => json<T>(await send('POST', `/_hangar${path}`, adminHeaders(), { body: body ?? {} })),
  put: async <T>(path: string, body: unknown) => json<T>(await send('PUT', `/_hangar${path}`, adminHeaders(), { body })),
  delete: async (path: string) => void (await send('DELETE', `/_hangar${path}`, adminHeaders())),
}

/** The public APIs: the control plane, the agent servers, feedback. */
export async function call<T>(method: string, url: string, options: CallOptions = {}): Promise<T> {
  return json<T>(await send(method, url, publicHeaders(options.tenant), options))
}

export interface ClockState {
  now: string
  now_ms: number
  frozen: boolean
}

export interface Workspace {
  id: string
  name: string | null
  self_hosted_enterprise: boolean
  default: boolean
}

export interface Deployment {
  id: string
  name: string
  source: string
  status: string
  tenant_id: string
  latest_revision_id: string | null
  active_revision_id: string | null
}

export interface RevisionStep {
  id: string
  status: string
  speed: string
  next_status: string | null
  next_at: string | null
  next_in_ms: number | null
}

/** A source upload of a deployment (`GET /_hangar/deployments/{id}/uploads`). */
export interface SourceUpload {
  id: string
  object_path: string
  issued_at: string
  expires_at: string
  uploaded_at: string | null
  size: number | null
  sha256: string | null
  gzip: boolean | null
  files: number | null
  archive_error: string | null
}

export interface RevisionSchedule {
  deployment_id: string
  workspace: string
  speed: string
  now: string
  revisions: RevisionStep[]
}

export interface Thread {
  thread_id: string
  status: string
  created_at: string
  updated_at: string
  metadata: Record<string, unknown>
}

export interface Run {
  run_id: string
  thread_id: string
  assistant_id: string
  status: string
  created_at: string
  updated_at: string
}

export interface Feedback {
  id: string
  run_id: string | null
  key: string
  score: unknown
  value: unknown
  comment: string | null
  correction: unknown
  created_at: string
}

export interface JournalEntry {
  id: number
  time: string
  method: string
  path: string
  query: string
  status: number
  latency_ms: number
  workspace: string | null
  request_headers: Record<string, string | string[]>
  request_body: string | null
  response_headers: Record<string, string | string[]>
}

export interface Fault {
  id: string
  method: string
  path: string
  workspace: string | null
  latency: { ms: number } | { min_ms: number; max_ms: number } | null
  status: number | null
  detail: string | null
  probability: number
  seed: number
  times: number | null
  drop_after_events: number | null
  matched: number
}

/** A message of `GET /_hangar/events`. */
export interface BusMessage {
  topic: string
  data: Record<string, unknown>
}
