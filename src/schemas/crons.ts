// The agent server's crons: request and response schemas, as the real server's OpenAPI document gives
// them (CronCreate, ThreadCronCreate, CronPatch, CronSearch, CronCountRequest, Cron), with what the
// SDK sends besides (`metadata` in search and count, `multitask_strategy` and `checkpoint_during` in a
// stateless create, `end_time: null` in a patch to clear it). The run fields take RunCreate's schemas.

import { Type, type TSchema } from '@sinclair/typebox'
import { RunCreate } from './agent.js'
import { AnyDict, DateTime, Nullable, StringEnum, Uuid } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))
const run = RunCreate.properties

/** What each occurrence's run is made of: a run body's fields. */
const runFields = {
  assistant_id: Type.String({ title: 'Assistant Id', description: 'The assistant ID or graph name to run. If using graph name, will default to the assistant automatically created from that graph by the server.' }),
  input: run.input,
  metadata: opt(AnyDict({ title: 'Metadata', description: 'Metadata to assign to the cron job runs.' })),
  config: run.config,
  context: run.context,
  webhook: run.webhook,
  interrupt_before: run.interrupt_before,
  interrupt_after: run.interrupt_after,
  stream_mode: run.stream_mode,
  stream_subgraphs: run.stream_subgraphs,
  stream_resumable: run.stream_resumable,
  durability: run.durability,
  checkpoint_during: run.checkpoint_during,
  feedback_keys: run.feedback_keys,
  multitask_strategy: run.multitask_strategy,
}

const Schedule = Type.String({ title: 'Schedule', description: 'The cron schedule to execute this job on (5 fields, or 6 with seconds last, as croniter reads them).' })
const cronFields = {
  schedule: Schedule,
  timezone: opt(Type.String({ title: 'Timezone', description: "IANA timezone for the cron schedule (e.g. 'America/New_York'). Defaults to null, which is treated as UTC." })),
  end_time: opt(DateTime({ title: 'End Time', description: 'The end date to stop running the cron.' })),
  enabled: Type.Optional(Type.Boolean({ title: 'Enabled', description: 'Whether the cron job should be enabled. Disabled crons are not executed.', default: true })),
}
const OnRunCompleted = (options: { default?: string } = {}) => StringEnum(['delete', 'keep'], {
  title: 'On Run Completed',
  description: "What to do with the thread after the run completes. 'delete' removes the thread after execution. 'keep' creates a new thread for each execution but does not clean them up.",
  ...options,
})

export const CronCreate = Type.Object({
  ...cronFields,
  ...runFields,
  on_run_completed: Type.Optional(OnRunCompleted({ default: 'delete' })),
}, { title: 'CronCreate', description: 'Payload for creating a stateless cron job (creates a new thread for each execution).' })

export const ThreadCronCreate = Type.Object({
  ...cronFields,
  ...runFields,
}, { title: 'ThreadCronCreate', description: 'Payload for creating a thread-specific cron job (runs on the same thread).' })

const { assistant_id: _assistant, metadata: _metadata, multitask_strategy: _strategy, ...patchableRunFields } = runFields
export const CronPatch = Type.Object({
  schedule: Type.Optional(Schedule),
  timezone: cronFields.timezone,
  end_time: opt(DateTime({ title: 'End Time', description: 'The end date to stop running the cron (null clears it).' })),
  ...patchableRunFields,
  metadata: opt(AnyDict({ title: 'Metadata', description: 'Metadata to merge with existing cron job metadata.' })),
  on_run_completed: Type.Optional(OnRunCompleted()),
  enabled: Type.Optional(Type.Boolean({ title: 'Enabled', description: 'Enable or disable the cron job.' })),
}, { title: 'CronPatch', description: 'Payload for updating a cron job. All fields are optional.' })

export const CRON_SORT_FIELDS = ['cron_id', 'assistant_id', 'thread_id', 'next_run_date', 'end_time', 'created_at', 'updated_at'] as const
export const CRON_FIELDS = [
  'cron_id', 'assistant_id', 'thread_id', 'on_run_completed', 'end_time', 'schedule', 'timezone',
  'created_at', 'updated_at', 'user_id', 'payload', 'next_run_date', 'metadata', 'enabled',
] as const

const filters = {
  assistant_id: Type.Optional(Uuid({ title: 'Assistant Id', description: 'The assistant ID to filter by using exact match.' })),
  thread_id: Type.Optional(Uuid({ title: 'Thread Id', description: 'The thread ID to search for.' })),
  metadata: opt(AnyDict({ title: 'Metadata', description: 'Crons whose metadata holds these keys and values.' })),
}
export const CronSearch = Type.Object({
  ...filters,
  enabled: Type.Optional(Type.Boolean({ title: 'Enabled', description: 'Filter by enabled status. If not provided, returns both enabled and disabled crons.' })),
  limit: Type.Optional(Type.Integer({ title: 'Limit', description: 'The maximum number of results to return.', default: 10, minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ title: 'Offset', description: 'The number of results to skip.', default: 0, minimum: 0 })),
  sort_by: Type.Optional(StringEnum(CRON_SORT_FIELDS, { title: 'Sort By', description: 'The field to sort by.', default: 'created_at' })),
  sort_order: Type.Optional(StringEnum(['asc', 'desc'], { title: 'Sort Order', description: 'The order to sort by.', default: 'desc' })),
  select: Type.Optional(Type.Array(StringEnum(CRON_FIELDS), { title: 'Select', description: 'Specify which fields to return. If not provided, all fields are returned.' })),
}, { title: 'CronSearch', description: 'Payload for listing crons' })

export const CronCount = Type.Object(filters, { title: 'CronCountRequest', description: 'Payload for counting crons' })

export const CronParams = Type.Object({ cron_id: Uuid({ title: 'Cron Id' }) })

const cronShape = {
  cron_id: Uuid({ description: 'The ID of the cron.' }),
  assistant_id: Type.String({ description: 'The ID of the assistant.' }),
  thread_id: Nullable(Uuid(), { description: 'The ID of the thread (null for a stateless cron).' }),
  on_run_completed: Nullable(StringEnum(['delete', 'keep']), { description: 'Stateless crons: what happens to the thread of each run when it ends.' }),
  end_time: Nullable(DateTime(), { description: 'The end date to stop running the cron.' }),
  schedule: Type.String({ description: 'The schedule to run, cron format.' }),
  timezone: Nullable(Type.String(), { description: 'The IANA timezone the schedule is read in (null: UTC).' }),
  created_at: DateTime({ description: 'The time the cron was created.' }),
  updated_at: DateTime({ description: 'The last time the cron was updated.' }),
  user_id: Nullable(Type.String(), { description: 'The ID of the user.' }),
  payload: AnyDict({ description: 'The run payload to use for creating new run.' }),
  next_run_date: Nullable(DateTime(), { description: 'The next run date of the cron (null: none before its end time).' }),
  metadata: AnyDict({ description: 'The cron metadata.' }),
  enabled: Type.Boolean({ description: 'Whether the cron job should be enabled. Disabled crons are not executed.' }),
}
export const Cron = Type.Object(cronShape, { title: 'Cron', description: 'Represents a scheduled task.' })
/** A search answer: each cron with only the selected fields, or all of them. */
export const CronList = Type.Array(Type.Partial(Type.Object(cronShape)), { title: 'Response Search Crons Search Post' })
