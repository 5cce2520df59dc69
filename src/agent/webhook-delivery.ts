// Delivering runs' webhooks: when a run that named a webhook ends, its payload is POSTed there, and
// tried again on hangar's clock when the receiver fails (see RETRY_DELAYS_MS). A delivery never
// blocks or fails its run and never throws: whatever happens is logged and reported to `onAttempt`
// (the request journal and the event bus). Deliveries live in memory only: one in progress when
// hangar stops is dropped, and is not resumed by the next start.

import { performance } from 'node:perf_hooks'
import type { Clock } from '../clock.js'
import type { Stateful } from '../stateful.js'
import { ATTEMPT_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS, retriableStatus, webhookPayload, webhookTarget, type RunEnd } from './webhooks.js'

/** One attempt at delivering a run's webhook, as the journal records it. */
export interface WebhookAttempt {
  run_id: string
  thread_id: string
  /** Whose agent server: '' for the root one, else the deployment's id. */
  scope: string
  url: string
  /** 1 for the first attempt. */
  attempt: number
  max_attempts: number
  /** When it was sent, on hangar's clock (epoch ms). */
  time: number
  request_headers: Record<string, string>
  body: string
  /** The receiver's answer; 0 when none came (refused, unreachable, timed out). */
  status: number
  /** Real time from sending to the answer. */
  latency_ms: number
  response_headers: Record<string, string>
  /** Why no answer came; null when one did. */
  error: string | null
  /** `retrying` when another attempt follows (at `next_attempt_at`). */
  outcome: 'delivered' | 'retrying' | 'failed'
  next_attempt_at: number | null
}

export interface WebhookDeliveryOptions {
  clock: Clock
  /** Sent as `User-Agent`. */
  userAgent: string
  log: { warn: (obj: object, msg: string) => void; info: (obj: object, msg: string) => void }
  /** Hears of every attempt once it has its outcome. */
  onAttempt?: (attempt: WebhookAttempt) => void
}

interface Answer {
  status: number
  headers: Record<string, string>
  error: string | null
  latency: number
}

export class WebhookDelivery implements Stateful {
  readonly #o: WebhookDeliveryOptions
  /** Aborted at shutdown, and on a reset of everything (then replaced): stops the deliveries in progress. */
  #stop = new AbortController()
  #closed = false
  readonly #inProgress = new Set<Promise<void>>()

  constructor(options: WebhookDeliveryOptions) {
    this.#o = options
  }

  /** How many deliveries are in progress (sending or waiting to try again). */
  get pending(): number {
    return this.#inProgress.size
  }

  /** Starts delivering the webhook of a run that ended, if it named one; returns at once. */
  runEnded(end: RunEnd): void {
    const url = end.run.kwargs.webhook
    if (!url || this.#closed) return
    const delivery = this.#deliver(end, webhookTarget(url, end.publicBase), this.#stop.signal)
      .catch((error: unknown) => this.#o.log.warn({ err: error, run_id: end.run.run_id }, 'a webhook delivery failed unexpectedly'))
      .finally(() => this.#inProgress.delete(delivery))
    this.#inProgress.add(delivery)
  }

  /** At shutdown: no new deliveries; those in progress stop (a request on the wire is cut). */
  async shutdown(): Promise<void> {
    this.#closed = true
    this.#stop.abort(new Error('hangar is shutting down'))
    await Promise.all(this.#inProgress)
  }

  /** A reset of everything drops the deliveries in progress (their runs are gone). */
  afterReset(workspace: string | undefined, kind: 'reset' | 'import'): void {
    if (workspace !== undefined || kind !== 'reset') return
    this.#stop.abort(new Error('hangar was reset'))
    this.#stop = new AbortController()
  }

  async #deliver(end: RunEnd, url: string, stop: AbortSignal): Promise<void> {
    const { clock } = this.#o
    const { run } = end
    // Built once, as on the hosted server: every attempt sends the same body.
    const body = JSON.stringify(webhookPayload(end, clock.now()))
    const headers = { 'content-type': 'application/json', 'user-agent': this.#o.userAgent }
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const time = clock.now()
      const answer = await this.#post(url, headers, body, stop)
      if (stop.aborted) return
      const delivered = answer.error === null && answer.status < 300
      const again = !delivered && attempt < MAX_ATTEMPTS && (answer.error !== null || retriableStatus(answer.status))
      const nextAt = again ? clock.now() + RETRY_DELAYS_MS[attempt - 1] : null
      this.#o.onAttempt?.({
        run_id: run.run_id, thread_id: run.thread_id, scope: run.scope, url, attempt, max_attempts: MAX_ATTEMPTS, time,
        request_headers: headers, body, status: answer.status, latency_ms: answer.latency, response_headers: answer.headers,
        error: answer.error, outcome: delivered ? 'delivered' : again ? 'retrying' : 'failed', next_attempt_at: nextAt,
      })
      const logged = { run_id: run.run_id, webhook: url, attempt, status: answer.status, error: answer.error }
      if (delivered) return this.#o.log.info(logged, 'called the run\'s webhook')
      if (nextAt === null) return this.#o.log.warn(logged, 'the run\'s webhook failed; no more attempts')
      try {
        await clock.until(nextAt, stop)
      } catch {
        return
      }
    }
  }

  /** One POST, cut after ATTEMPT_TIMEOUT_MS of hangar's clock or when `stop` aborts. */
  async #post(url: string, headers: Record<string, string>, body: string, stop: AbortSignal): Promise<Answer> {
    const { clock } = this.#o
    const settled = new AbortController()
    const timedOut = new AbortController()
    clock.until(clock.now() + ATTEMPT_TIMEOUT_MS, settled.signal).then(() => timedOut.abort(), () => {})
    const started = performance.now()
    const latency = () => Math.round((performance.now() - started) * 1000) / 1000
    try {
      const response = await fetch(url, { method: 'POST', headers, body, redirect: 'follow', signal: AbortSignal.any([stop, timedOut.signal]) })
      // Only the status and headers matter; the body is not read.
      await response.body?.cancel().catch(() => {})
      const answered: Record<string, string> = {}
      response.headers.forEach((value, name) => (answered[name] = value))
      return { status: response.status, headers: answered, error: null, latency: latency() }
    } catch (error) {
      const reason = timedOut.signal.aborted ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : describe(error)
      return { status: 0, headers: {}, error: reason, latency: latency() }
    } finally {
      settled.abort()
    }
  }
}

/** What a failed fetch says, as briefly as it can (`ECONNREFUSED`, `ENOTFOUND`, …). */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error)
}
