// What changed inside hangar, as it happens: requests the journal recorded, runs' events and
// statuses, runs' webhook calls, revisions moving, clock jumps, fault rules, resets and imports. The admin API's event
// stream (`GET /_hangar/events`) forwards these to the inspector page, which then reads whatever
// it shows through the documented APIs. Messages name what changed, never carry its data.

import { EventEmitter } from 'node:events'
import type { Clock } from '../clock.js'

/** The clock as the admin API shows it. */
export interface ClockState {
  now: string
  now_ms: number
  frozen: boolean
}

export const clockState = (clock: Clock): ClockState => ({ now: new Date(clock.now()).toISOString(), now_ms: clock.now(), frozen: clock.frozen })

/** Each topic and the data of its messages. */
export interface Topics {
  /** The journal recorded a request. */
  request: { id: number; method: string; path: string; status: number; latency_ms: number }
  /** A run changed status (`status` set), or an event was appended to its log (`event`, `event_id` set). */
  run: { run_id: string; thread_id: string; scope: string; status: string | null; event: string | null; event_id: string | null }
  /**
   * An attempt at delivering a run's webhook has its outcome (`status` 0: no answer came);
   * `request_id` is its entry in the journal (null when the journal keeps none).
   */
  webhook: { run_id: string; thread_id: string; scope: string; attempt: number; status: number; outcome: 'delivered' | 'retrying' | 'failed'; request_id: number | null }
  /** The clock jumped, froze or started running. */
  clock: ClockState
  /** A deployment was written, or one of its revisions changed status (`revision_id`, `status` set). */
  deployments: { workspace: string; deployment_id: string; revision_id: string | null; status: string | null }
  /** A fault rule was added or removed, or all of them were. */
  faults: { action: 'added' | 'removed' | 'cleared'; fault_id: string | null }
  /** State was reset (all of it, or one workspace) or replaced by an import. */
  state: { action: 'reset' | 'import'; workspace: string | null }
}

export type Topic = keyof Topics
export type BusMessage = { [T in Topic]: { topic: T; data: Topics[T] } }[Topic]

/**
 * An in-process bus: `publish` hands a message to every subscriber, and costs nothing while there
 * is none. The clock is followed only while someone subscribes, so that when nobody watches nothing
 * waits on the clock.
 */
export class EventBus {
  readonly #emitter = new EventEmitter<{ message: [BusMessage] }>()
  readonly #clock: Clock
  readonly #onClock = () => this.publish('clock', clockState(this.#clock))

  constructor(clock: Clock) {
    this.#clock = clock
    // Each open inspector is one subscriber; many of them are normal, not a leak.
    this.#emitter.setMaxListeners(0)
  }

  /** How many subscribers there are. */
  get subscribers(): number {
    return this.#emitter.listenerCount('message')
  }

  publish<T extends Topic>(topic: T, data: Topics[T]): void {
    if (this.subscribers > 0) this.#emitter.emit('message', { topic, data } as BusMessage)
  }

  /** Calls `listener` with every message from now on; returns what ends that. */
  subscribe(listener: (message: BusMessage) => void): () => void {
    if (this.subscribers === 0) this.#clock.on('change', this.#onClock)
    this.#emitter.on('message', listener)
    return () => {
      this.#emitter.off('message', listener)
      if (this.subscribers === 0) this.#clock.off('change', this.#onClock)
    }
  }
}
