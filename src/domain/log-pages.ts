// One page of log lines: filtered (time window, level and above, text), ordered, and cut after an
// opaque cursor. The cursor is the position of the last line returned, so paging is stable while
// lines keep arriving: lines only ever appear after every line already shown (in time order).

import { LogLevel, type LogLine } from '../lifecycle/revision-logs.js'
import { RuleViolation } from './errors.js'

export interface LogQuery {
  order: 'asc' | 'desc'
  limit: number
  /** A `next_offset` of an earlier page. */
  offset: string | null
  /** This level and the ones above it. */
  level: LogLevel | null
  /** Text the message holds (case does not matter). */
  query: string | null
  /** ISO instants; both ends are included. */
  startTime: string | null
  endTime: string | null
  /** The lines of one run: no build or deploy line belongs to a run, so none match. */
  runId: string | null
}

export interface LogEntry {
  id: string
  timestamp: number
  level: LogLevel
  message: string
}

export interface LogPage {
  logs: LogEntry[]
  next_offset: string | null
}

type Position = readonly [timestamp: number, ordinal: number, index: number]

const positionOf = (line: LogLine): Position => [line.timestamp, line.ordinal, line.index]
const compare = (a: Position, b: Position) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]
const cursorOf = (position: Position) => Buffer.from(position.join('.')).toString('base64url')

function readCursor(offset: string): Position {
  const match = /^(-?\d{1,16})\.(\d{1,16})\.(\d{1,9})$/.exec(Buffer.from(offset, 'base64url').toString('utf8'))
  if (!match) throw new RuleViolation(`Invalid offset '${offset}': pass the next_offset of an earlier page.`)
  return [Number(match[1]), Number(match[2]), Number(match[3])]
}

/**
 * The page of `lines` the query asks for. `growing` says whether more lines may still come: then
 * an ascending read that reached the end still answers a cursor, to ask for what comes next.
 */
export function pageOf(lines: readonly LogLine[], q: LogQuery, growing: boolean): LogPage {
  const after = q.offset === null ? null : readCursor(q.offset)
  const from = q.startTime === null ? -Infinity : Date.parse(q.startTime)
  const until = q.endTime === null ? Infinity : Date.parse(q.endTime)
  const minimum = q.level === null ? 0 : LogLevel.indexOf(q.level)
  const text = q.query?.toLowerCase() ?? null
  const sign = q.order === 'asc' ? 1 : -1
  const matched = lines
    .filter((line) => q.runId === null && line.timestamp >= from && line.timestamp <= until && LogLevel.indexOf(line.level) >= minimum)
    .filter((line) => text === null || line.message.toLowerCase().includes(text))
    .filter((line) => after === null || sign * compare(positionOf(line), after) > 0)
    .sort((a, b) => sign * compare(positionOf(a), positionOf(b)))
  const page = matched.slice(0, q.limit)
  const last = page.at(-1)
  const more = matched.length > page.length || (growing && q.order === 'asc')
  return {
    logs: page.map(({ id, timestamp, level, message }) => ({ id, timestamp, level, message })),
    next_offset: !more ? null : last ? cursorOf(positionOf(last)) : q.offset,
  }
}
