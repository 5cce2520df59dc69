// Feedback (the tracing service's subset in test/reference/feedback-openapi.json): presigned
// tokens, submissions with a token, feedback records, and the run's trace.

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { AnyDict, DateTime, Nullable, StringEnum, Uuid } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))

const Score = Type.Union([Type.Number(), Type.Integer(), Type.Boolean()])
const Value = Type.Union([Type.Number(), Type.Integer(), Type.Boolean(), Type.String()])
const Correction = Type.Union([AnyDict(), Type.String()])

export const FeedbackConfig = Type.Object({
  type: StringEnum(['continuous', 'categorical', 'freeform']),
  min: opt(Type.Number()),
  max: opt(Type.Number()),
  categories: opt(Type.Array(Type.Object({ value: Type.Number(), label: opt(Type.String({ minLength: 1 })) }))),
}, { title: 'FeedbackConfig' })

const TimedeltaInput = Type.Object({
  days: Type.Optional(Type.Integer({ default: 0 })),
  hours: Type.Optional(Type.Integer({ default: 0 })),
  minutes: Type.Optional(Type.Integer({ default: 0 })),
})
export const FeedbackIngestTokenCreate = Type.Object({
  expires_in: opt(TimedeltaInput),
  expires_at: opt(DateTime()),
  run_id: Uuid(),
  feedback_key: Type.String(),
  feedback_config: opt(FeedbackConfig),
}, { title: 'FeedbackIngestTokenCreateSchema' })
export type FeedbackIngestTokenCreate = Static<typeof FeedbackIngestTokenCreate>
export const TokenCreateBody = Type.Union([FeedbackIngestTokenCreate, Type.Array(FeedbackIngestTokenCreate)])

export const FeedbackIngestToken = Type.Object(
  { id: Uuid(), url: Type.String(), expires_at: DateTime(), feedback_key: Type.String() },
  { title: 'FeedbackIngestTokenSchema' },
)
export const TokenListQuery = Type.Object({
  run_id: Uuid(),
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
})
export const TokenParams = Type.Object({ token: Uuid({ title: 'Token' }) })

export const FeedbackWithToken = Type.Object({
  score: opt(Score),
  value: opt(Value),
  comment: opt(Type.String()),
  correction: opt(Correction),
  metadata: opt(AnyDict()),
}, { title: 'FeedbackCreateWithTokenExtendedSchema' })
export const FeedbackWithTokenQuery = Type.Object({
  score: opt(Score),
  value: opt(Value),
  comment: opt(Type.String()),
  correction: opt(Type.String({ description: 'URL-encoded JSON text (or plain text)' })),
})

const FeedbackSource = Type.Object({
  type: Nullable(Type.String()),
  metadata: Nullable(AnyDict()),
  user_id: Nullable(Type.String()),
  ls_user_id: Nullable(Type.String()),
  user_name: Nullable(Type.String()),
})
export const Feedback = Type.Object({
  created_at: DateTime(),
  modified_at: DateTime(),
  key: Type.String(),
  score: Nullable(Score),
  value: Nullable(Type.Union([Value, AnyDict()])),
  comment: Nullable(Type.String()),
  correction: Nullable(Correction),
  feedback_group_id: Nullable(Uuid()),
  comparative_experiment_id: Nullable(Uuid()),
  run_id: Nullable(Uuid()),
  session_id: Nullable(Uuid()),
  id: Uuid(),
  trace_id: Nullable(Uuid()),
  start_time: Nullable(DateTime()),
  is_root: Type.Boolean(),
  feedback_source: Nullable(FeedbackSource),
  extra: Nullable(AnyDict()),
  feedback_thread_id: Nullable(Type.String()),
}, { title: 'FeedbackSchema' })

export const FeedbackCreate = Type.Object({
  key: Type.String({ maxLength: 180 }),
  score: opt(Score),
  value: opt(Type.Union([Value, AnyDict()])),
  comment: opt(Type.String()),
  correction: opt(Correction),
  run_id: opt(Uuid()),
  id: opt(Uuid()),
  feedback_source: opt(Type.Object({ type: opt(Type.String()), metadata: opt(AnyDict()) })),
  feedback_config: opt(FeedbackConfig),
  session_id: opt(Uuid()),
}, { title: 'FeedbackCreateSchema' })

/** A PATCH of a record: the fields it names change (null clears), the others stay. */
export const FeedbackUpdate = Type.Object({
  score: opt(Score),
  value: opt(Type.Union([Value, AnyDict()])),
  comment: opt(Type.String()),
  correction: opt(Correction),
  feedback_config: opt(FeedbackConfig),
}, { title: 'FeedbackUpdateSchema' })

export const FeedbackListQuery = Type.Object({
  run: Type.Optional(Type.Array(Uuid())),
  key: Type.Optional(Type.Array(Type.String())),
  source: Type.Optional(Type.Array(StringEnum(['api', 'model', 'app', 'auto_eval']))),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  has_comment: opt(Type.Boolean()),
  has_score: opt(Type.Boolean()),
})
export const FeedbackParams = Type.Object({ feedback_id: Uuid() })
