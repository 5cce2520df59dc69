// Webhooks of runs, the rules: which URLs a run may name (checked when it is created), what is
// POSTed when it ends, and when a failed delivery is tried again. The delivery itself, over HTTP on
// hangar's clock, is webhook-delivery.ts. See docs/agent-server-wire.md ("Webhooks") for the hosted
// server's behaviour these follow and where hangar chose.

import type { Run, RunStatus } from '../store/runs.js'
import type { State } from './types.js'
import { hostReason } from './webhook-hosts.js'

/** Longer URLs are refused (the hosted server's default `webhooks.url.max_url_length`). */
export const MAX_WEBHOOK_URL_LENGTH = 4096

/**
 * When a delivery is tried again: after the first attempt fails, wait 1 s; after the second, 2 s;
 * the third is the last. The hosted server makes 3 attempts with exponential waits of 1 s and 2 s
 * plus up to 1 s of random jitter; hangar leaves the jitter out so that tests know the times.
 */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 2000]
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1

/** How long one attempt may take, on hangar's clock, before it counts as failed (the hosted read timeout). */
export const ATTEMPT_TIMEOUT_MS = 30_000

/** An answer worth trying again: a server error or 429, as on the hosted server (other 4xx are final). */
export const retriableStatus = (status: number) => status >= 500 || status === 429

/** The hosted server's answer to a relative (in-process) webhook while loopback webhooks are off. */
const RELATIVE_REFUSED =
  'Loopback webhooks (relative URLs and localhost) are disabled by default. They bypass authentication via the ' +
  'in-process ASGI transport and can be abused to invoke internal routes as an unauthenticated caller. Set ' +
  'webhooks.url.disable_loopback to false (in langgraph.json or via LANGGRAPH_WEBHOOKS) to opt back in — only do so ' +
  'when you control the mounted routes.'

/**
 * Why a run may not name this webhook (the `detail` of the 422, the hosted server's sentence), or
 * null when it may. Relative URLs (`/path`) and hosts of this machine count as loopback: allowed
 * unless `allowLoopback` is off. Cloud metadata endpoints and Kubernetes-internal names are always
 * refused, as on the hosted server; private ranges are not (webhook-hosts.ts).
 */
export function webhookRefusal(url: string, allowLoopback: boolean): string | null {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return 'Webhook URL too long'
  if (url.startsWith('/')) return allowLoopback ? null : RELATIVE_REFUSED
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  const host = parsed?.hostname ?? ''
  if (!parsed || host === '') return `Invalid webhook hostname '${host}'`
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `Webhook host blocked: scheme '${parsed.protocol.slice(0, -1)}' not allowed`
  }
  const reason = hostReason(host)
  if (reason === undefined || (reason === 'localhost address' && allowLoopback)) return null
  return `Webhook host blocked: ${reason}`
}

/** Where a webhook goes: a relative one to this hangar, at the base the run's client reached it at. */
export const webhookTarget = (url: string, publicBase: string) => (url.startsWith('/') ? new URL(url, `${publicBase}/`).href : url)

/** How a run ended, as its webhook reports it. */
export interface RunEnd {
  /** The run as it was created: its ids and settings (`kwargs`). */
  run: Run
  /** The run as stored when it ended (read only when asked: most runs name no webhook). */
  stored: () => Run
  status: RunStatus
  /** The state it ended with; null for a run that was interrupted (cancelled). */
  values: State | null
  /** What a failed run failed with (`{error, message}`); absent otherwise. */
  error?: unknown
  /** When it started executing and when it ended, on hangar's clock (epoch ms). */
  startedAt: number
  endedAt: number
  /** The base URL the run's client reached hangar at (relative webhooks go there). */
  publicBase: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * What a run's webhook receives: the Run object with its final status, when it started and ended,
 * when the webhook was sent, its final `values` and, for a failed run, `error`.
 */
export function webhookPayload(end: RunEnd, sentAt: number): Record<string, unknown> {
  const { seq: _seq, thread_seq: _thread, scope: _scope, ...run } = end.stored()
  return {
    ...run,
    status: end.status,
    run_started_at: iso(end.startedAt),
    run_ended_at: iso(end.endedAt),
    webhook_sent_at: iso(sentAt),
    values: end.values,
    ...(end.error === undefined ? {} : { error: end.error }),
  }
}
