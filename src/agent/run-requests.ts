// A run request (the API's RunCreate body) becomes a run: its assistant and thread are found (or
// the thread created), the request's settings become the run's stored kwargs and metadata, and the
// run is handed to the executor under its multitask strategy. One transaction per request: a run
// refused (a busy thread) leaves the thread as it was, and no thread it would have created.

import { randomUUID } from 'node:crypto'
import { v7 as uuid7 } from 'uuid'
import type { Clock } from '../clock.js'
import { authConfigurable, owns, withOwner, type AuthUser } from '../domain/agent-users.js'
import { NotFound, Unprocessable } from '../domain/errors.js'
import type { RunCreate } from '../schemas/agent.js'
import type { Assistant, AssistantRepository } from '../store/assistants.js'
import type { Run, RunKwargs } from '../store/runs.js'
import type { Thread, ThreadRepository } from '../store/threads.js'
import type { MultitaskStrategy, RunExecutor } from './run-executor.js'
import { resolveAssistantId } from './system-assistants.js'
import type { GraphEngine } from './types.js'
import { webhookRefusal } from './webhooks.js'

export interface RunRequestsOptions {
  assistants: AssistantRepository
  threads: ThreadRepository
  engine: GraphEngine
  executor: RunExecutor
  clock: Clock
  /** Runs `fn` in one database transaction: all of it is written, or none. */
  transaction: <T>(fn: () => T) => T
  /** Whether a run may name a webhook on this machine (HANGAR_WEBHOOK_LOOPBACK). */
  allowLoopbackWebhooks: boolean
}

/** Where a request came from, as far as a run cares. */
export interface RequestContext {
  /** Whose agent server: '' for the root one, else the deployment's id. */
  scope: string
  headers: Record<string, string | string[] | undefined>
  /** The base URL the client reached hangar at (for the URLs a run hands out). */
  publicBase: string
  /**
   * The agent server's user the request acts as (`HANGAR_AGENT_AUTH=users`): a run reaches its
   * threads only, the threads it creates are its, and its config carries the user.
   */
  user?: AuthUser | null
}

export const threadNotFound = (id: string) => new NotFound(`Thread with ID ${id} not found`)

/** Request headers a run copies into `configurable`, as the real server does. */
export function headerConfig(headers: RequestContext['headers']): Record<string, string> {
  const copied: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') continue
    if ((name.startsWith('x-') && !['x-api-key', 'x-tenant-id', 'x-service-key'].includes(name)) || name === 'user-agent') copied[name] = value
  }
  return copied
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const configurableOf = (config: Record<string, unknown> | null | undefined) => (isObject(config?.configurable) ? config.configurable : {})

/**
 * The settings a run keeps from its request (what `/runs/{id}` shows as `kwargs`). `inherited` is
 * what it takes from its thread and assistant, as the real server merges them: the `configurable`
 * the thread kept from earlier runs, and the assistant's `context` under the request's. A user's
 * run has the user stamped over whatever the client sent for it (`langgraph_auth_*`).
 */
export function runSettings(
  body: RunCreate,
  context: Pick<RequestContext, 'headers' | 'user'>,
  threadless: boolean,
  inherited: { configurable?: Record<string, unknown>; context?: unknown } = {},
): RunKwargs {
  const modes = body.stream_mode == null ? ['values'] : Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode]
  const feedbackKeys = body.feedback_keys == null ? null : [body.feedback_keys].flat()
  const config = { ...(body.config ?? {}) } as Record<string, unknown>
  // The checkpoint a run starts from, given as `checkpoint_id` or `checkpoint: {checkpoint_id}`.
  const named = body.checkpoint_id ?? (typeof body.checkpoint?.checkpoint_id === 'string' ? body.checkpoint.checkpoint_id : null)
  config.configurable = {
    ...inherited.configurable,
    ...configurableOf(body.config),
    ...headerConfig(context.headers),
    ...(named ? { checkpoint_id: named } : {}),
    ...(context.user ? authConfigurable(context.user) : {}),
  }
  const durability = body.durability ?? (body.checkpoint_during == null ? null : body.checkpoint_during ? 'async' : 'exit')
  return {
    input: body.input ?? null,
    // Only the command fields the client gave (the validator fills absent ones with null).
    command: body.command ? Object.fromEntries(Object.entries(body.command).filter(([, v]) => v !== null)) : null,
    config,
    context: mergeContext(inherited.context, body.context),
    stream_mode: modes.length > 0 ? modes : ['values'],
    subgraphs: body.stream_subgraphs ?? false,
    resumable: body.stream_resumable ?? false,
    feedback_keys: feedbackKeys?.length ? feedbackKeys : null,
    interrupt_before: body.interrupt_before ?? null,
    interrupt_after: body.interrupt_after ?? null,
    on_disconnect: body.on_disconnect ?? null,
    after_seconds: body.after_seconds ?? null,
    temporary: threadless && (body.on_completion ?? 'delete') === 'delete',
    ...(durability === null ? {} : { durability }),
    ...(body.webhook ? { webhook: body.webhook } : {}),
  }
}

/** The run's context: the request's keys over the assistant's (an assistant context that is not an object wins whole). */
function mergeContext(assistantContext: unknown, requested: unknown): unknown {
  if (assistantContext != null && !isObject(assistantContext)) return assistantContext
  return { ...(assistantContext as object | null | undefined), ...(isObject(requested) ? requested : {}) }
}

/**
 * The config a thread keeps after a run is created on it (GET /threads/{id} shows it): the
 * assistant's, then what the thread kept, then the run's, `configurable` merged key by key. A
 * thread that is busy keeps its config (the run only queues). The real JS server also keeps a
 * run's `checkpoint_id`, so that every later run forks from that checkpoint again; hangar does not.
 */
export function threadConfigAfter(thread: Thread, assistant: Assistant, run: RunKwargs): Record<string, unknown> {
  if (thread.status === 'busy') return thread.config ?? {}
  const { checkpoint_id: _fork, ...configurable } = {
    ...configurableOf(assistant.config),
    ...configurableOf(thread.config),
    ...configurableOf(run.config),
  }
  return { ...assistant.config, ...thread.config, ...run.config, configurable }
}

export class RunRequests {
  readonly #o: RunRequestsOptions

  constructor(options: RunRequestsOptions) {
    this.#o = options
  }

  /** A run on a thread, or (`threadId` null) a stateless run on a temporary thread. */
  create(context: RequestContext, threadId: string | null, body: RunCreate): Run {
    this.checkWebhook(body.webhook)
    return this.#o.transaction(() => this.#start(context, threadId, body, this.#assistantFor(context.scope, body)))
  }

  /**
   * A run of the session protocol on a thread (created when new): the thread is bound to the
   * assistant of its first such run, and a run of another assistant is refused with `mismatch`.
   */
  startSession(context: RequestContext, threadId: string, body: RunCreate, mismatch: (bound: string, asked: string) => Error): Run {
    this.checkWebhook(body.webhook)
    return this.#o.transaction(() => {
      const assistant = this.#assistantFor(context.scope, body)
      const existing = this.#o.threads.get(context.scope, threadId)
      if (existing?.boundAssistantId) {
        const bound = this.#o.assistants.get(context.scope, resolveAssistantId(this.#o.engine, existing.boundAssistantId))
        if (bound?.assistant_id !== assistant.assistant_id) throw mismatch(existing.boundAssistantId, body.assistant_id)
      }
      const run = this.#start(context, threadId, body, assistant, { __protocol_stream_run: true })
      if (!existing?.boundAssistantId) this.#o.threads.bindAssistant(this.#o.threads.bySeq(run.thread_seq)!, body.assistant_id)
      return run
    })
  }

  /** Stateless runs, all or none: every item is checked before any run is created (one unknown assistant creates none). */
  createBatch(context: RequestContext, bodies: RunCreate[]): Run[] {
    const planned = bodies.map((body) => {
      this.checkWebhook(body.webhook)
      return { body, assistant: this.#assistantFor(context.scope, body) }
    })
    return this.#o.transaction(() => planned.map(({ body, assistant }) => this.#start(context, null, body, assistant)))
  }

  /**
   * Refuses a webhook a run may not call (422), before anything is written: a run the executor
   * was handed cannot be taken back by rolling the transaction back. Crons check theirs when they
   * are created or patched, so that no occurrence is spent on a refusal.
   */
  checkWebhook(webhook: string | null | undefined): void {
    const refused = webhook == null ? null : webhookRefusal(webhook, this.#o.allowLoopbackWebhooks)
    if (refused !== null) throw new Unprocessable(refused)
  }

  /** The assistant a run body names (its id, or a graph's name), as a run would find it; NotFound (404) when none is. */
  assistant(scope: string, assistantId: string): Assistant {
    return this.#assistantFor(scope, { assistant_id: assistantId })
  }

  #assistantFor(scope: string, body: Pick<RunCreate, 'assistant_id'>): Assistant {
    const assistant = this.#o.assistants.get(scope, resolveAssistantId(this.#o.engine, body.assistant_id))
    if (!assistant) {
      throw new NotFound(`No assistant found for "${body.assistant_id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`)
    }
    return assistant
  }

  #start(context: RequestContext, threadId: string | null, body: RunCreate, assistant: Assistant, extra: Partial<RunKwargs> = {}): Run {
    const { threads, executor, clock } = this.#o
    const user = context.user ?? null
    let thread: Thread | undefined
    if (threadId === null) thread = threads.create(context.scope, randomUUID(), withOwner(user, {}))
    else {
      thread = threads.get(context.scope, threadId)
      // Another user's thread is not there for this one, whatever `if_not_exists` says.
      if (thread && !owns(user, thread.metadata)) throw threadNotFound(threadId)
      if (!thread && body.if_not_exists === 'create') thread = threads.create(context.scope, threadId, withOwner(user, {}))
      if (!thread) throw threadNotFound(threadId)
    }
    thread = threads.patchMetadata(thread, { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id })
    const kwargs = { ...runSettings(body, context, threadId === null, { configurable: configurableOf(thread.config), context: assistant.context }), ...extra }
    threads.setConfig(thread, threadConfigAfter(thread, assistant, kwargs))
    return executor.create(context.scope, thread, uuid7({ msecs: clock.now() }), {
      assistant,
      kwargs,
      metadata: { ...assistant.metadata, ...thread.metadata, ...(body.metadata ?? {}) },
      strategy: (body.multitask_strategy ?? 'reject') as MultitaskStrategy,
      publicBase: context.publicBase,
    })
  }
}
