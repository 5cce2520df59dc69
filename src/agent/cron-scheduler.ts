// What makes crons fire over hangar's clock. While some enabled cron has an occurrence ahead, the
// scheduler listens to the clock: every jump (a test's `advance`, the admin API's clock) sweeps,
// synchronously; on a running clock a timer also wakes it at the next occurrence. A sweep fires,
// for each cron that is due, one run, earliest due first, and schedules the cron's next occurrence
// after now: occurrences a jump (or a stopped hangar) passed over are caught up by that one run,
// never one run each, as the real server's scheduler does (it wakes every few seconds and fires one
// run per due cron, next date from now). With no cron scheduled it does not listen at all (so
// nothing "waits on the clock" for no reason). Reads never depend on it: a cron's next_run_date is
// derived from its schedule and the clock.

import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { DomainError } from '../domain/errors.js'
import type { CronRecord, CronRepository } from '../store/crons.js'
import { nextOccurrence } from './cron-schedule.js'

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
   * Fires one run for each cron due at the clock's now, earliest due first (ties: the older cron
   * first), then looks again at what is scheduled. Returns how many runs it started (at most one
   * per cron). Never throws.
   */
  sweep(): number {
    if (this.#sweeping || this.#stopped) return 0
    this.#sweeping = true
    let fired = 0
    try {
      const now = this.#o.clock.now()
      // A fired cron's next occurrence is after now, so no cron comes back in this sweep.
      for (let cron = this.#o.crons.nextDue(now); cron; cron = this.#o.crons.nextDue(now)) {
        this.#fireOne(cron, now)
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

  /**
   * One run for a due cron, however many of its occurrences fell by `now`: the cron moves to its
   * first occurrence after now and its run is created, together.
   */
  #fireOne(cron: CronRecord, now: number): void {
    const due = cron.nextRunAt!
    const missed = nextOccurrence(cron.schedule, cron.timezone, due, cron.endTime)
    if (missed !== null && missed <= now) {
      this.#o.log.info({ cron_id: cron.cronId, due: new Date(due).toISOString(), now: new Date(now).toISOString() }, 'cron: one run catches up every occurrence missed since it was due')
    }
    this.#o.transaction(() => {
      this.#o.crons.setNextRun(cron.seq, nextOccurrence(cron.schedule, cron.timezone, now, cron.endTime))
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
