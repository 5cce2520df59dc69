// A cron's schedule over time, as pure functions of the schedule, its timezone and an instant: which
// schedules and timezones are accepted, and when the next occurrence after an instant falls (before
// the cron's end time, or none). No clock, no SQL: the cron service and the reads call these.
//
// The real server parses schedules with Python's croniter; hangar uses cron-parser. Both read the
// five classic fields (minute hour day-of-month month day-of-week), names (`mon`, `jan`), ranges,
// steps, lists and `@daily`-style shorthands. croniter reads a sixth field as *seconds at the end*;
// cron-parser reads six fields with seconds first, so a six-field schedule is rotated before parsing.

import { CronExpressionParser } from 'cron-parser'
import type { PydanticError } from '../validation/pydantic-error.js'

/** Why a schedule or timezone was refused: the message names it. */
export class ScheduleError extends Error {}

/** How many fields a schedule may have: croniter's five, or six with seconds last. */
const FIELD_COUNTS: ReadonlySet<number> = new Set([5, 6])

/** The schedule in cron-parser's form (a six-field one with its seconds moved to the front). */
function parserForm(schedule: string): string {
  const trimmed = schedule.trim()
  if (trimmed.startsWith('@')) return trimmed
  const fields = trimmed.split(/\s+/)
  if (!FIELD_COUNTS.has(fields.length)) {
    throw new ScheduleError(`Invalid cron schedule '${schedule}': expected 5 fields (minute hour day month weekday) or 6 (with seconds last), got ${trimmed === '' ? 0 : fields.length}`)
  }
  return fields.length === 6 ? [fields[5], ...fields.slice(0, 5)].join(' ') : fields.join(' ')
}

/** Whether `timezone` is an IANA zone the runtime knows (null: UTC). */
export function checkTimezone(timezone: string | null): void {
  if (timezone === null) return
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
  } catch {
    throw new ScheduleError(`Invalid timezone '${timezone}': not an IANA timezone (e.g. 'America/New_York')`)
  }
}

/** Throws a ScheduleError naming the schedule when it cannot be parsed, or has no occurrence at all. */
export function checkSchedule(schedule: string, timezone: string | null): void {
  checkTimezone(timezone)
  const form = parserForm(schedule)
  try {
    CronExpressionParser.parse(form, { tz: timezone ?? 'UTC', currentDate: 0, strict: false }).next()
  } catch (error) {
    throw new ScheduleError(`Invalid cron schedule '${schedule}': ${(error as Error).message}`)
  }
}

/**
 * The first occurrence of the schedule strictly after `after` (epoch ms), in the timezone (null:
 * UTC); null when there is none before `endTime` (epoch ms, inclusive; null: no end).
 */
export function nextOccurrence(schedule: string, timezone: string | null, after: number, endTime: number | null): number | null {
  if (endTime !== null && after >= endTime) return null
  try {
    const expression = CronExpressionParser.parse(parserForm(schedule), { tz: timezone ?? 'UTC', currentDate: after })
    const next = expression.next().getTime()
    return endTime !== null && next > endTime ? null : next
  } catch {
    // A schedule that was accepted but has no further occurrence (cron-parser gives up after its loop limit).
    return null
  }
}

/** What is wrong with a schedule and its timezone, in pydantic's form (empty: nothing), at `loc` (e.g. ['body']). */
export function scheduleProblems(fields: { schedule?: string; timezone?: string | null }, loc: string[]): PydanticError[] {
  const problems: PydanticError[] = []
  const refuse = (field: string, input: unknown, error: unknown) => {
    const message = (error as Error).message
    problems.push({ type: 'value_error', loc: [...loc, field], msg: `Value error, ${message}`, input, ctx: { error: message } })
  }
  const timezone = fields.timezone ?? null
  try {
    checkTimezone(timezone)
  } catch (error) {
    if (!(error instanceof ScheduleError)) throw error
    refuse('timezone', timezone, error)
    return problems
  }
  if (fields.schedule !== undefined) {
    try {
      checkSchedule(fields.schedule, timezone)
    } catch (error) {
      if (!(error instanceof ScheduleError)) throw error
      refuse('schedule', fields.schedule, error)
    }
  }
  return problems
}
