// Build and deploy logs: the public `GET /v2/deployments/{id}/revisions/{rid}/logs` (as newer docs of
// the real service describe it, field for field) and the routes `langgraph deploy` calls
// (`POST /v1/projects/{id}/…build_logs|deploy_logs`, whose body carries the same filters).

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { LogLevel, LogType } from '../lifecycle/revision-logs.js'
import { DateTime, Nullable, StringEnum } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))

const filters = {
  start_time: opt(DateTime({ description: 'Lines at or after this instant.' })),
  end_time: opt(DateTime({ description: 'Lines at or before this instant.' })),
  order: Type.Optional(StringEnum(['asc', 'desc'], { default: 'asc' })),
  offset: opt(Type.String({ description: 'The `next_offset` of an earlier page.' })),
  query: opt(Type.String({ description: 'Text the message holds (case does not matter).' })),
  level: opt(StringEnum(LogLevel, { description: 'This level and the ones above it.' })),
  run_id: opt(Type.String({ description: 'The lines of one run (no build or deploy line belongs to a run).' })),
}

export const RevisionLogsQuery = Type.Object({
  start_time: filters.start_time,
  end_time: filters.end_time,
  order: filters.order,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  offset: filters.offset,
  query: filters.query,
  level: filters.level,
  run_id: filters.run_id,
  type: StringEnum(LogType, { description: 'Which logs to return: build-time or deploy-time.' }),
})
export type RevisionLogsQuery = Static<typeof RevisionLogsQuery>

/** The body `langgraph deploy` and `langgraph deploy logs` send (no body at all reads as all defaults). */
export const LogsRequest = Nullable(Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  ...filters,
}, { title: 'LogsRequest' }))
export type LogsRequest = Static<typeof LogsRequest>

export const LogEntry = Type.Object({
  id: Type.String({ description: 'Stable across reads: clients following a log de-duplicate by it.' }),
  timestamp: Type.Integer({ description: 'Epoch milliseconds.' }),
  level: StringEnum(LogLevel),
  message: Type.String(),
}, { title: 'LogEntry' })

export const LogsResponse = Type.Object({
  logs: Type.Array(LogEntry),
  next_offset: Nullable(Type.String(), { description: 'Pass as `offset` for the next page; null when there is none.' }),
}, { title: 'LogsResponse', description: 'Log lines plus a pagination cursor.' })
export type LogsResponse = Static<typeof LogsResponse>
