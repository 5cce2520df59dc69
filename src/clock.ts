import { EventEmitter } from 'node:events'

/**
 * The one source of "now" for everything that moves over time (revisions, run delays, token expiry).
 *
 * A clock follows system time, optionally shifted by an offset, or stands still (frozen). Tests use
 * a frozen clock and move it with `advance`/`set`; the admin API moves the running server's clock the
 * same way. Every jump emits `change`, so whatever waits on the clock can look again.
 */
export class Clock extends EventEmitter<{ change: [now: number] }> {
  #offset = 0
  #frozenAt: number | undefined

  constructor() {
    super()
    // Every waiter (an open stream's heartbeat, a long poll) listens for jumps; a thousand of them
    // is normal load, not a leak, so Node's default warning at eleven would only be noise.
    this.setMaxListeners(0)
  }

  /** A clock that follows system time. */
  static system(): Clock {
    return new Clock()
  }

  /** A frozen clock that only moves when told; `start` is epoch milliseconds. */
  static manual(start: number | Date = Date.UTC(2025, 0, 1)): Clock {
    const clock = new Clock()
    clock.#frozenAt = typeof start === 'number' ? start : start.getTime()
    return clock
  }

  now(): number {
    return this.#frozenAt ?? Date.now() + this.#offset
  }

  get frozen(): boolean {
    return this.#frozenAt !== undefined
  }

  /** Stop the clock at the current instant. */
  freeze(): void {
    this.#frozenAt = this.now()
    this.emit('change', this.now())
  }

  /** Let the clock run again from where it stands (time does not jump back to the system time). */
  unfreeze(): void {
    if (this.#frozenAt === undefined) return
    this.#offset = this.#frozenAt - Date.now()
    this.#frozenAt = undefined
    this.emit('change', this.now())
  }

  /** Jump to an instant (epoch milliseconds); a running clock keeps running from there. */
  set(to: number): void {
    if (this.#frozenAt !== undefined) this.#frozenAt = to
    else this.#offset = to - Date.now()
    this.emit('change', this.now())
  }

  /** Move forward (or back, with a negative value) by `ms` milliseconds. */
  advance(ms: number): void {
    this.set(this.now() + ms)
  }

  /**
   * Resolves once the clock reads `at` or later: on a running clock after the remaining real time,
   * on any clock as soon as it is moved past `at`. Rejects with the signal's reason when aborted.
   */
  until(at: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const finish = (error?: unknown) => {
        clearTimeout(timer)
        this.off('change', check)
        signal?.removeEventListener('abort', abort)
        if (error === undefined) resolve()
        else reject(error)
      }
      const abort = () => finish(signal!.reason)
      const check = () => {
        clearTimeout(timer)
        const remaining = at - this.now()
        if (remaining <= 0) return finish()
        if (!this.frozen) timer = setTimeout(check, Math.min(remaining, 2 ** 31 - 1))
      }
      if (signal?.aborted) return reject(signal.reason)
      signal?.addEventListener('abort', abort, { once: true })
      this.on('change', check)
      check()
    })
  }
}
