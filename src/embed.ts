// The in-process API: a test suite starts hangar inside its own process, on a free port, with a
// clock it moves itself, and waits for revisions without sleeping.

import { setImmediate as nextTurn } from 'node:timers/promises'
import { buildApp, type App } from './app.js'
import { Clock } from './clock.js'
import { DEFAULT_TENANT, type Config } from './config.js'
import { isTerminal, type RevisionStatus } from './lifecycle/revisions.js'

export interface StartOptions {
  /** Settings; by default an in-memory database, no logs, and any non-empty API key accepted. */
  config?: Partial<Config>
  /** Defaults to a frozen clock at the real "now": nothing moves until the test moves it. */
  clock?: Clock
  /** Defaults to 0: a free port, read back from `url`. */
  port?: number
  /** Defaults to 127.0.0.1. */
  host?: string
}

/**
 * A hangar started in this process. It is also a `HangarTarget` carrying what its own helpers need
 * whatever the settings: `waitForRevision(hangar, …)` and `reset()` work with `apiKeys`,
 * `adminToken` and `requireTenant` set.
 */
export interface RunningHangar extends HangarTarget {
  /** Where hangar listens, e.g. `http://127.0.0.1:40123`; point the SDKs and your code at it. */
  readonly url: string
  /** An API key hangar accepts: the first of `apiKeys`, or any key when none are configured. */
  readonly apiKey: string
  /** The default workspace (`defaultTenant`), sent as `X-Tenant-Id`. */
  readonly tenantId: string
  /** The admin token when one is configured, else undefined (the admin API is open). */
  readonly adminToken: string | undefined
  /** The clock everything that moves over time reads: `advance(ms)`, `set(at)`, `freeze()`, `unfreeze()`. */
  readonly clock: Clock
  /** The Fastify instance, for `inject()` without a socket. */
  readonly app: App
  /** Everything back to a fresh start: all data, faults and the request journal go; fixtures are seeded again. */
  reset(): Promise<void>
  /** Stops runs, ends open streams, closes the database and lets go of the server (see `release`). */
  close(): Promise<void>
}

/** Starts hangar in this process and resolves once it listens. */
export async function startHangar(options: StartOptions = {}): Promise<RunningHangar> {
  const clock = options.clock ?? Clock.manual(Date.now())
  const app = buildApp({ clock, config: { db: ':memory:', logLevel: 'silent', ...options.config } })
  const host = options.host ?? '127.0.0.1'
  try {
    await app.listen({ port: options.port ?? 0, host })
  } catch (error) {
    await app.close()
    throw error
  }
  const { port } = app.server.address() as { port: number }
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const admin = async (path: string, body: unknown) => {
    const response = await app.inject({ method: 'POST', url: `/_hangar${path}`, payload: body as object, headers: adminHeaders(app.config.adminToken) })
    if (response.statusCode >= 400) throw new Error(`hangar: POST /_hangar${path} answered ${response.statusCode}: ${response.body}`)
  }
  const { apiKeys, defaultTenant, adminToken } = app.config
  return {
    url, clock, app,
    apiKey: apiKeys[0] ?? ANY_API_KEY,
    tenantId: defaultTenant,
    adminToken: adminToken === '' ? undefined : adminToken,
    reset: () => admin('/reset', {}),
    close: async () => {
      await app.close()
      await release()
    },
  }
}

/**
 * Waits for the event loop's close phase to pass. A closed server's handle is freed there, and
 * until then it holds the whole app: hangars started and closed back to back, with no I/O between
 * them, all stayed in memory (40 of them held 104 MB of heap after a full collection; 27 MB with
 * this wait). One setImmediate may come before that phase (in the same turn); the second after it.
 */
const release = async () => {
  await nextTurn()
  await nextTurn()
}

/** What the helpers send as `X-Api-Key` when hangar accepts any non-empty key. */
const ANY_API_KEY = 'hangar'

const adminHeaders = (token?: string): Record<string, string> => (token ? { 'x-hangar-admin-token': token } : {})

export interface HangarTarget {
  /** hangar's base URL (a `startHangar()` result, or a hangar in Docker: `http://localhost:8123`). */
  url: string
  /** Sent as `X-Api-Key`; any non-empty key unless hangar was started with `HANGAR_API_KEYS`. */
  apiKey?: string
  /** The workspace the deployment lives in; hangar's default workspace when left out. */
  tenantId?: string
  /** When hangar was started with `HANGAR_ADMIN_TOKEN`. */
  adminToken?: string
}

export interface WaitOptions {
  /** How far hangar's clock moves between polls (default 5 s of clock time). */
  stepMs?: number
  /** Give up after this many polls (default 2000: over 2¾ hours of clock time at the default step). */
  maxPolls?: number
}

/**
 * Polls a revision the way a CI script does, but instead of sleeping between polls it moves hangar's
 * clock forward (through the admin API, so it works with a hangar in another process too). Resolves
 * with the revision once it reaches `status`; rejects when it ends in another terminal status
 * (`BUILD_FAILED`, ...) or when the deployment or revision does not exist.
 */
export async function waitForRevision(
  target: HangarTarget,
  deploymentId: string,
  revisionId: string,
  status = 'DEPLOYED',
  options: WaitOptions = {},
): Promise<{ id: string; status: string; [field: string]: unknown }> {
  const base = target.url.replace(/\/+$/, '')
  const headers = { 'x-api-key': target.apiKey ?? ANY_API_KEY, 'x-tenant-id': target.tenantId ?? DEFAULT_TENANT }
  const stepMs = options.stepMs ?? 5000
  const maxPolls = options.maxPolls ?? 2000
  for (let poll = 0; poll < maxPolls; poll++) {
    const response = await fetch(`${base}/v2/deployments/${deploymentId}/revisions/${revisionId}`, { headers })
    const body = await response.json() as { id: string; status: string; detail?: unknown }
    if (!response.ok) throw new Error(`hangar: revision ${revisionId} of deployment ${deploymentId}: ${response.status} ${JSON.stringify(body.detail ?? body)}`)
    if (body.status === status) return body
    if (isTerminal(body.status as RevisionStatus)) throw new Error(`hangar: revision ${revisionId} ended ${body.status}, not ${status}`)
    const moved = await fetch(`${base}/_hangar/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...adminHeaders(target.adminToken) },
      body: JSON.stringify({ action: 'advance', ms: stepMs }),
    })
    if (!moved.ok) throw new Error(`hangar: could not advance the clock: ${moved.status} ${await moved.text()}`)
  }
  throw new Error(`hangar: revision ${revisionId} was not ${status} after ${maxPolls} polls`)
}
