// The agent server: request and response schemas (shapes as the SDK's types and
// docs/agent-server-wire.md describe them). Requests are validated pydantic-style like the rest
// of hangar, so a bad request is a FastAPI 422, as the hosted server answers.

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { AnyDict, DateTime, Dict, Nullable, StringEnum, Uuid } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))
const Any = () => Type.Unknown()

/**
 * A run's stream modes. `tools` (tool-call progress: `on_tool_start`, `on_tool_event`, `on_tool_end`,
 * `on_tool_error`) is accepted as the real JS server 1.5.1 accepts it; hangar's scripted graphs call no
 * tools yet, so it adds no events. `lifecycle` is refused, as there.
 */
export const STREAM_MODES = ['values', 'messages', 'messages-tuple', 'updates', 'events', 'tasks', 'checkpoints', 'debug', 'custom', 'tools'] as const
const StreamMode = StringEnum(STREAM_MODES)
const Limit = (max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: 10 }))
const Offset = () => Type.Optional(Type.Integer({ minimum: 0, default: 0 }))
const SortOrder = opt(StringEnum(['asc', 'desc']))

// ---- assistants -------------------------------------------------------------------------------

export const Assistant = Type.Object(
  {
    assistant_id: Type.String(),
    graph_id: Type.String(),
    config: AnyDict(),
    context: Any(),
    created_at: DateTime(),
    updated_at: DateTime(),
    metadata: AnyDict(),
    version: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
  },
  { title: 'Assistant' },
)
export const AssistantVersion = Type.Object(
  {
    assistant_id: Type.String(),
    version: Type.Integer(),
    graph_id: Type.String(),
    config: AnyDict(),
    context: Any(),
    name: Type.String(),
    description: Nullable(Type.String()),
    metadata: AnyDict(),
    created_at: DateTime(),
  },
  { title: 'AssistantVersion' },
)
export const AssistantCreate = Type.Object({
  graph_id: Type.String(),
  assistant_id: opt(Uuid()),
  config: opt(AnyDict()),
  context: opt(Any()),
  metadata: opt(AnyDict()),
  if_exists: opt(StringEnum(['raise', 'do_nothing'])),
  name: opt(Type.String()),
  description: opt(Type.String()),
})
export type AssistantCreate = Static<typeof AssistantCreate>
export const AssistantPatch = Type.Object({
  graph_id: opt(Type.String()),
  config: opt(AnyDict()),
  context: opt(Any()),
  metadata: opt(AnyDict()),
  name: opt(Type.String()),
  description: opt(Type.String()),
})
export type AssistantPatch = Static<typeof AssistantPatch>
export const AssistantSearch = Nullable(Type.Object({
  metadata: opt(AnyDict()),
  graph_id: opt(Type.String()),
  name: opt(Type.String()),
  limit: Limit(1000),
  offset: Offset(),
  sort_by: opt(StringEnum(['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'])),
  sort_order: SortOrder,
  select: opt(Type.Array(Type.String())),
}))
export const AssistantCount = Nullable(Type.Object({ metadata: opt(AnyDict()), graph_id: opt(Type.String()), name: opt(Type.String()) }))
export const AssistantVersionsQuery = Nullable(Type.Object({ metadata: opt(AnyDict()), limit: Limit(1000), offset: Offset() }))
export const AssistantParams = Type.Object({ assistant_id: Type.String() })
export const DeleteAssistantQuery = Type.Object({ delete_threads: Type.Optional(Type.Boolean({ default: false })) })
export const SetLatest = Type.Object({ version: Type.Integer() })
/** `GET /assistants/{id}/graph`: `xray` expands subgraphs, every level (`true`) or that many (a number). */
export const AssistantGraphQuery = Type.Object({
  xray: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Boolean()], { default: false, description: 'Include the subgraphs: every level (true) or that many levels (a number).' })),
})
export const AssistantSubgraphsParams = Type.Object({ assistant_id: Type.String(), namespace: Type.String() })
export const AssistantSubgraphsQuery = Type.Object({ recurse: Type.Optional(Type.Boolean({ default: false, description: 'Include the subgraphs of subgraphs.' })) })

// ---- threads ----------------------------------------------------------------------------------

export const ThreadStatus = StringEnum(['idle', 'busy', 'interrupted', 'error'])
export const Thread = Type.Object(
  {
    thread_id: Uuid(),
    created_at: DateTime(),
    updated_at: DateTime(),
    state_updated_at: DateTime(),
    metadata: AnyDict(),
    status: ThreadStatus,
    config: AnyDict(),
    values: Any(),
    interrupts: AnyDict(),
    error: Any(),
  },
  { title: 'Thread' },
)
const Superstep = Type.Object({
  updates: Type.Array(Type.Object({ values: opt(Any()), command: opt(AnyDict()), as_node: Type.String() })),
})
export const ThreadCreate = Nullable(Type.Object({
  thread_id: opt(Uuid()),
  metadata: opt(AnyDict()),
  if_exists: opt(StringEnum(['raise', 'do_nothing'])),
  supersteps: opt(Type.Array(Superstep)),
  ttl: opt(Any()),
}))
export const ThreadSearch = Nullable(Type.Object({
  metadata: opt(AnyDict()),
  values: opt(AnyDict()),
  status: opt(ThreadStatus),
  ids: opt(Type.Array(Uuid())),
  limit: Limit(1000),
  offset: Offset(),
  sort_by: opt(StringEnum(['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'])),
  sort_order: SortOrder,
  select: opt(Type.Array(Type.String())),
  /** Alias → path into the thread (`values.messages[-1].content`); each found thread gets `extracted`. At most 10 (checked by the route). */
  // The example is what the docs page's try-it sends: a path hangar can read (a bare "string" is not).
  extract: opt(Dict(Type.String(), { examples: [{ last_message: 'values.messages[-1].content' }] })),
}))
export const ThreadCount = Nullable(Type.Object({ metadata: opt(AnyDict()), values: opt(AnyDict()), status: opt(ThreadStatus) }))
export const ThreadPatch = Type.Object({ metadata: AnyDict(), ttl: opt(Any()) })
/** `PATCH /threads/{id}/state`: metadata merged into a checkpoint's (the latest, or the one named). */
export const StatePatch = Type.Object({
  metadata: AnyDict(),
  checkpoint_id: opt(Type.String()),
  checkpoint: opt(AnyDict()),
})
export const ThreadPrune = Type.Object({
  thread_ids: Type.Array(Uuid()),
  strategy: Type.Optional(StringEnum(['delete', 'keep_latest'], { default: 'delete' })),
})
export const ThreadPruneResult = Type.Object({ pruned_count: Type.Integer() }, { title: 'ThreadPruneResponse' })
export const ThreadParams = Type.Object({ thread_id: Uuid({ title: 'Thread ID' }) })
export const CheckpointParams = Type.Object({ thread_id: Uuid(), checkpoint_id: Type.String() })
export const SubgraphsQuery = Type.Object({ subgraphs: Type.Optional(Type.Boolean({ default: false })) })

const CheckpointRef = Type.Object({
  thread_id: Type.String(),
  checkpoint_ns: Type.String(),
  checkpoint_id: Nullable(Type.String()),
  checkpoint_map: Nullable(AnyDict()),
})
export const ThreadState = Type.Object(
  {
    values: Any(),
    next: Type.Array(Type.String()),
    tasks: Type.Array(Any()),
    metadata: Nullable(AnyDict()),
    created_at: Nullable(DateTime()),
    checkpoint: Nullable(CheckpointRef),
    parent_checkpoint: Nullable(CheckpointRef),
    interrupts: Type.Array(Any()),
    checkpoint_id: Nullable(Type.String()),
    parent_checkpoint_id: Nullable(Type.String()),
  },
  { title: 'ThreadState' },
)
export const StateUpdate = Type.Object({
  values: opt(Any()),
  as_node: opt(Type.String()),
  checkpoint_id: opt(Type.String()),
  checkpoint: opt(AnyDict()),
})
/**
 * A checkpoint as a request names it: by id, and/or by the graph it belongs to (`checkpoint_ns`: ''
 * the root graph, `<node>:<task id>` a subgraph), as the real server's schema has it.
 */
export const CheckpointConfig = Type.Object({
  checkpoint_id: opt(Type.String()),
  checkpoint_ns: opt(Type.String()),
  checkpoint_map: opt(AnyDict()),
})
export type CheckpointConfig = Static<typeof CheckpointConfig>
export const StateCheckpointQuery = Type.Object({ checkpoint: opt(CheckpointConfig), subgraphs: opt(Type.Boolean()) })
export const StateUpdateResult = Type.Object({ checkpoint: Type.Object({ thread_id: Type.String(), checkpoint_ns: Type.String(), checkpoint_id: Type.String() }) })
export const HistoryRequest = Nullable(Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
  before: opt(Any()),
  metadata: opt(AnyDict()),
  checkpoint: opt(CheckpointConfig),
}))
export const HistoryQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, default: 10 })), before: opt(Type.String()) })

// ---- runs -------------------------------------------------------------------------------------

/** When a run's checkpoints are persisted (LangGraph's durability modes). */
export const DURABILITIES = ['sync', 'async', 'exit'] as const
export const RunStatus = StringEnum(['pending', 'running', 'error', 'success', 'timeout', 'interrupted'])
export const Run = Type.Object(
  {
    run_id: Uuid(),
    thread_id: Uuid(),
    assistant_id: Type.String(),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: RunStatus,
    metadata: AnyDict(),
    kwargs: AnyDict(),
    multitask_strategy: Nullable(Type.String()),
  },
  { title: 'Run' },
)
export const RunCreate = Type.Object({
  assistant_id: Type.String(),
  input: opt(Any()),
  command: opt(Type.Object({ resume: opt(Any()), update: opt(Any()), goto: opt(Any()) })),
  metadata: opt(AnyDict()),
  config: opt(AnyDict()),
  context: opt(AnyDict()),
  checkpoint_id: opt(Type.String()),
  checkpoint: opt(AnyDict()),
  stream_mode: opt(Type.Union([StreamMode, Type.Array(StreamMode)])),
  stream_subgraphs: opt(Type.Boolean()),
  stream_resumable: opt(Type.Boolean()),
  feedback_keys: opt(Type.Union([Type.String(), Type.Array(Type.String())])),
  interrupt_before: opt(Any()),
  interrupt_after: opt(Any()),
  webhook: opt(Type.String({ minLength: 1, maxLength: 65536 })),
  multitask_strategy: opt(StringEnum(['reject', 'interrupt', 'rollback', 'enqueue'])),
  if_not_exists: opt(StringEnum(['reject', 'create'])),
  after_seconds: opt(Type.Number({ minimum: 0 })),
  on_disconnect: opt(StringEnum(['cancel', 'continue'])),
  on_completion: opt(StringEnum(['delete', 'keep'])),
  langsmith_tracer: opt(Any()),
  /** Deprecated for `durability`: true is `async`, false is `exit`. */
  checkpoint_during: opt(Type.Boolean()),
  durability: opt(StringEnum(DURABILITIES)),
})
export type RunCreate = Static<typeof RunCreate>
export const RunParams = Type.Object({ thread_id: Uuid(), run_id: Uuid() })
export const RunListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
  offset: Offset(),
  status: opt(RunStatus),
  select: opt(Type.String()),
})
export const CancelQuery = Type.Object({
  wait: Type.Optional(Type.Boolean({ default: false })),
  action: Type.Optional(StringEnum(['interrupt', 'rollback'], { default: 'interrupt' })),
})
export const JoinStreamQuery = Type.Object({
  cancel_on_disconnect: Type.Optional(Type.Boolean({ default: false })),
  /** Only these modes' events (repeat the parameter for several); absent: all the run's events. */
  stream_mode: Type.Optional(Type.Array(Type.String())),
})
/** `POST /runs/cancel`: runs of one thread by id, or every run with a status (`all`: pending and running). */
export const RunsCancel = Type.Object({
  thread_id: opt(Uuid()),
  run_ids: opt(Type.Array(Uuid())),
  status: opt(StringEnum(['pending', 'running', 'all'])),
})
export const CancelManyQuery = Type.Object({
  action: Type.Optional(StringEnum(['interrupt', 'rollback'], { default: 'interrupt' })),
})
export const LastEventIdHeader = Type.Object({ 'last-event-id': Type.Optional(Type.Integer({ minimum: -1 })) })

// ---- the thread join stream (GET /threads/{thread_id}/stream) ------------------------------------

/** What a thread's join stream carries: each run's events and its end, runs' starts and ends only, or the thread's state after each run. */
export const THREAD_STREAM_MODES = ['lifecycle', 'run_modes', 'state_update'] as const
const ThreadStreamMode = StringEnum(THREAD_STREAM_MODES)
/** The spec names the parameter `stream_modes`; both SDKs send `stream_mode` (repeated for several). Either, or both, may be given. */
export const ThreadStreamQuery = Type.Object({
  stream_mode: Type.Optional(Type.Array(ThreadStreamMode)),
  stream_modes: Type.Optional(Type.Array(ThreadStreamMode)),
})
/** `-` resumes from the thread's first run; an id this stream sent (`<run seq>-<position>`) after that event; empty is as absent. */
export const ThreadLastEventIdHeader = Type.Object({ 'last-event-id': Type.Optional(Type.String({ pattern: '^(-|[0-9]+-[0-9]+)?$' })) })
