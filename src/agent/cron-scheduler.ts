// What makes crons fire over hangar's clock. While some enabled cron has an occurrence ahead, the
// scheduler listens to the clock: every jump (a test's `advance`, the admin API's clock) fires what
// fell due, synchronously and in time order across every cron, each occurrence once, however far
// the clock jumped; on a running clock a timer wakes it at the next occurrence as well. With no cron
// scheduled it does not listen at all (so nothing "waits on the clock" for no reason). Reads never
// depend on it: a cron's next_run_date is derived from its schedule and the clock.

import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { DomainError } from '../domain/errors.js'
import type { CronRecord, CronRepository } from '../store/crons.js'
import { nextOccurrence } from './cron-schedule.js'

/** At most this many missed occurrences of one cron fire in one sweep; the older rest are skipped (and logged). */
export const MAX_CATCH_UP = 1000
/** setTimeout's longest delay. */
const LONGEST_TIMER = 2 ** 31 - 1

export interface CronSchedulerOptions {
  crons: CronRepository
  clock: Clock
  log: Logger
  /** Creates the run of one occurrence; a domain error (an assistant since deleted, a busy thread) skips it. */
  fire: (cron: CronRecord) => unknown
  /** Runs `fn` in one database transaction. */
  transaction: <T>(fn: () => T) => T
}

export class CronScheduler {
  readonly #o: CronSchedulerOptions
  #listening = false
  #timer: NodeJS.Timeout | undefined
  #sweeping = false
  #stopped = false
  readonly #onClock = () => this.sweep()

  constructor(options: CronSchedulerOptions) {
    this.#o = options
  }

  /**
   * Fires every occurrence due at the clock's now, earliest first (ties: the older cron first),
   * then looks again at what is scheduled. Returns how many occurrences fired. Never throws.
   */
  sweep(): number {
    if (this.#sweeping || this.#stopped) return 0
    this.#sweeping = true
    let fired = 0
    try {
      const now = this.#o.clock.now()
      const caughtUp = new Map<number, number>()
      for (let cron = this.#o.crons.nextDue(now); cron; cron = this.#o.crons.nextDue(now)) {
        const count = (caughtUp.get(cron.seq) ?? 0) + 1
        caughtUp.set(cron.seq, count)
        if (count > MAX_CATCH_UP) {
          this.#o.log.warn({ cron_id: cron.cronId, skipped_from: new Date(cron.nextRunAt!).toISOString() }, 'cron: too many missed occurrences; the rest are skipped')
          this.#o.crons.setNextRun(cron.seq, nextOccurrence(cron.schedule, cron.timezone, now, cron.endTime))
          continue
        }
        this.#fireOne(cron)
        fired++
      }
    } catch (error) {
      this.#o.log.error({ err: error }, 'cron: a sweep failed')
    } finally {
      this.#sweeping = false
    }
    this.rearm()
    return fired
  }

  /** Looks at what is scheduled: listens to the clock (and on a running clock sets a timer) while anything is. */
  rearm(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const earliest = this.#stopped ? undefined : this.#o.crons.earliestOccurrence()
    if (earliest === undefined) {
      if (this.#listening) this.#o.clock.off('change', this.#onClock)
      this.#listening = false
      return
    }
    if (!this.#listening) this.#o.clock.on('change', this.#onClock)
    this.#listening = true
    if (!this.#o.clock.frozen) {
      this.#timer = setTimeout(this.#onClock, Math.min(Math.max(0, earliest - this.#o.clock.now()), LONGEST_TIMER)).unref()
    }
  }

  /** Stops listening for good (shutdown). */
  stop(): void {
    this.#stopped = true
    this.rearm()
  }

  /** One occurrence: the cron moves to its next one and its run is created, together. */
  #fireOne(cron: CronRecord): void {
    const due = cron.nextRunAt!
    this.#o.transaction(() => {
      this.#o.crons.setNextRun(cron.seq, nextOccurrence(cron.schedule, cron.timezone, due, cron.endTime))
      try {
        this.#o.fire(cron)
      } catch (error) {
        // The occurrence is spent either way: a failure must not make the cron fire it again and again.
        const where = { cron_id: cron.cronId, due: new Date(due).toISOString() }
        if (error instanceof DomainError) this.#o.log.warn({ ...where, reason: error.message }, 'cron: an occurrence created no run')
        else this.#o.log.error({ ...where, err: error }, 'cron: an occurrence failed')
      }
    })
  }
}
