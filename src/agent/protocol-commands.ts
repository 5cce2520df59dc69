// The session protocol's commands (`POST /threads/{id}/commands`, and frames on the thread's
// WebSocket): each answers a success or an error envelope, with the thread's last `seq` in `meta`.
// A run a command starts is an ordinary run of the executor, so the older endpoints list, join and
// cancel it; the thread's log (thread-log.ts) carries its events to both protocols.

import { v7 as uuid7 } from 'uuid'
import type { Clock } from '../clock.js'
import type { RunRepository } from '../store/runs.js'
import type { Thread, ThreadRepository } from '../store/threads.js'
import { type RequestContext, type RunRequests, threadNotFound } from './run-requests.js'
import { type EventFilter, matches, type ThreadLog } from './thread-log.js'
import { eventTree } from './protocol-tree.js'

/** A command as the clients send it. */
export interface ProtocolCommand {
  id: number
  method: string
  params: Record<string, unknown>
}

export type ProtocolErrorCode = 'invalid_argument' | 'no_such_run' | 'unknown_command' | 'no_such_subscription' | 'not_supported'

export interface ProtocolMeta {
  thread_id: string
  applied_through_seq: number
}

export type ProtocolAnswer =
  | { type: 'success'; id: number; result: unknown; meta: ProtocolMeta }
  | { type: 'error'; id: number | null; error: ProtocolErrorCode; message: string; meta?: ProtocolMeta }

/**
 * A command refused: answered as an error envelope (the HTTP status stays 200). Refusals of the
 * thread's run session carry `meta`; those of `run.start`, `input.respond`, `state.get` and of a
 * thread with no run do not (as on the real server).
 */
export class ProtocolRefusal extends Error {
  constructor(readonly code: ProtocolErrorCode, message: string, readonly withMeta = false) {
    super(message)
  }
}

/** The subscriptions of one transport (an HTTP thread, or a socket). */
export interface Subscriptions {
  /** Adds a subscription (its filter already checked); answers its result, or null to answer later. */
  subscribe(command: ProtocolCommand, filter: EventFilter, current: CurrentRun | null): SubscribeResult | null
  /** Removes one; false when the transport has no such subscription. */
  unsubscribe(subscriptionId: string): boolean
}

export interface SubscribeResult {
  subscription_id: string
  replayed_events: number
}

export interface CurrentRun {
  thread: Thread
  runId: string
}

/** Where a command is heard: the request's context and the thread the path names. */
export interface CommandContext extends RequestContext {
  threadId: string
}

/** The channels a subscription or stream may name. */
export const CHANNELS: ReadonlySet<string> = new Set(['values', 'updates', 'messages', 'tools', 'custom', 'lifecycle', 'input', 'checkpoints', 'tasks'])

/** What every run the protocol starts asks of the engine (what `/runs/{id}` shows in its kwargs, as on the real server). */
const SESSION_RUN = { stream_mode: ['values', 'updates', 'messages', 'tools', 'custom', 'tasks'] as never, stream_subgraphs: true, stream_resumable: true }
const STRATEGIES: ReadonlySet<string> = new Set(['reject', 'interrupt', 'rollback', 'enqueue'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const invalid = (message: string) => new ProtocolRefusal('invalid_argument', message)
const NO_ASSISTANT = 'Thread has no active assistant; call run.start first.'
const NO_RUN = 'No active run is bound to this thread.'

export interface ProtocolCommandsOptions {
  threads: ThreadRepository
  runs: RunRepository
  runRequests: RunRequests
  threadLog: ThreadLog
  clock: Clock
}

export class ProtocolCommands {
  readonly #o: ProtocolCommandsOptions

  /** Over HTTP, subscriptions are kept by id only. */
  readonly http: HttpSubscriptions

  constructor(options: ProtocolCommandsOptions) {
    this.#o = options
    this.http = new HttpSubscriptions({ threadLog: options.threadLog, newId: () => this.subscriptionId() })
  }

  /** The highest seq the thread's log holds now: what an answer was applied through. */
  meta(context: CommandContext): ProtocolMeta {
    return { thread_id: context.threadId, applied_through_seq: this.#o.threadLog.lastSeq(context.scope, context.threadId) }
  }

  /**
   * Runs a command; subscriptions go to the transport's. Answers null when the transport answers
   * later (a socket's subscribe before the thread's first run). A thread or assistant that does
   * not exist is a NotFound: over HTTP a plain-text 404, as on the real server.
   */
  execute(context: CommandContext, command: ProtocolCommand, subscriptions: Subscriptions): ProtocolAnswer | null {
    try {
      const result = this.#dispatch(context, command, subscriptions)
      return result === null ? null : { type: 'success', id: command.id, result, meta: this.meta(context) }
    } catch (error) {
      if (!(error instanceof ProtocolRefusal)) throw error
      return this.refusal(context, command.id, error)
    }
  }

  refusal(context: CommandContext, id: number | null, error: ProtocolRefusal): ProtocolAnswer {
    const answer: ProtocolAnswer = { type: 'error', id, error: error.code, message: error.message }
    return error.withMeta ? { ...answer, meta: this.meta(context) } : answer
  }

  #dispatch(context: CommandContext, command: ProtocolCommand, subscriptions: Subscriptions): unknown {
    const { method, params } = command
    switch (method) {
      case 'run.start': return this.#runStart(context, params)
      case 'input.respond': return this.#inputRespond(context, params)
      case 'state.get': return this.#stateGet(context, params)
    }
    // Every other command is one of the thread's run session: there is none before a first run
    // (a socket's subscribe then waits for one).
    if (method === 'subscription.subscribe' && this.#current(context) === null) return subscriptions.subscribe(command, subscriptionFilter(params), null)
    const current = this.currentRun(context)
    const refuse = (code: ProtocolErrorCode, message: string) => new ProtocolRefusal(code, message, true)
    switch (method) {
      case 'agent.getTree': return { tree: eventTree(this.#o.threadLog.ofRun(current.thread, current.runId)) }
      case 'subscription.subscribe': return subscriptions.subscribe(command, subscriptionFilter(params), current)
      case 'subscription.unsubscribe': {
        const id = params.subscription_id
        if (typeof id !== 'string' || id === '') throw refuse('invalid_argument', 'subscription.unsubscribe requires a subscription_id.')
        if (!subscriptions.unsubscribe(id)) throw refuse('no_such_subscription', `Unknown subscription: ${id}`)
        return {}
      }
      case 'subscription.reconnect': throw refuse('not_supported', 'subscription.reconnect is not supported by this server yet.')
      default: throw refuse('unknown_command', `Unknown protocol command: ${method}`)
    }
  }

  /** Starts a run (creating the thread when new); on a thread waiting at an interrupt, a non-null input resumes it. */
  #runStart(context: CommandContext, params: Record<string, unknown>): { run_id: string } {
    const assistantId = params.assistant_id
    if (typeof assistantId !== 'string' || assistantId === '') throw invalid('run.start requires an assistant_id.')
    for (const key of ['config', 'metadata'] as const) {
      if (params[key] != null && !isObject(params[key])) throw invalid(`run.start received an invalid ${key}: an object is expected.`)
    }
    const strategy = params.multitaskStrategy ?? params.multitask_strategy ?? 'enqueue'
    if (typeof strategy !== 'string' || !STRATEGIES.has(strategy)) throw invalid('run.start received an invalid multitaskStrategy.')
    const thread = this.#o.threads.get(context.scope, context.threadId)
    const input = params.input ?? null
    const resumes = thread?.status === 'interrupted' && input !== null
    const run = this.#o.runRequests.startSession(context, context.threadId, {
      assistant_id: assistantId,
      input: resumes ? null : input,
      command: resumes ? { resume: input } : undefined,
      config: params.config as Record<string, unknown> | undefined,
      metadata: params.metadata as Record<string, unknown> | undefined,
      multitask_strategy: strategy as 'enqueue',
      if_not_exists: 'create',
      ...SESSION_RUN,
    }, (bound, asked) => invalid(`Thread ${context.threadId} is bound to assistant ${bound}; cannot run ${asked}.`))
    return { run_id: run.run_id }
  }

  /** Answers an interrupt: a new run on the thread's assistant resumes it (its events continue the thread's seq). */
  #inputRespond(context: CommandContext, params: Record<string, unknown>): Record<string, never> {
    const answers = Array.isArray(params.responses)
      ? params.responses.filter(isObject).map((r) => ({ id: r.interrupt_id, response: r.response }))
      : [{ id: params.interrupt_id, response: params.response }]
    if (answers.length === 0 || answers.some((a) => typeof a.id !== 'string' || a.id === '')) throw invalid('input.respond requires an interrupt_id.')
    const thread = this.#o.threads.get(context.scope, context.threadId)
    const assistantId = thread ? boundAssistant(thread) : null
    if (!thread || assistantId === null) throw new ProtocolRefusal('no_such_run', NO_ASSISTANT)
    if (thread.status !== 'interrupted') throw invalid('input.respond can only be used while the run is interrupted.')
    const pending = new Set(Object.values(thread.interrupts).flat().map((i) => i.id))
    const unknown = answers.find((a) => !pending.has(a.id as string))
    if (unknown) throw invalid(`input.respond received an interrupt_id that is not pending: ${String(unknown.id)}.`)
    // A map from interrupt id to response, as the real server sends it on (the engine picks each interrupt's entry).
    const resume = Object.fromEntries(answers.map((a) => [a.id, a.response]))
    this.#o.runRequests.startSession(context, context.threadId, {
      assistant_id: assistantId,
      command: { resume, ...(params.update !== undefined ? { update: params.update } : {}), ...(params.goto !== undefined ? { goto: params.goto } : {}) },
      config: isObject(params.config) ? params.config : undefined,
      metadata: isObject(params.metadata) ? params.metadata : undefined,
      multitask_strategy: 'enqueue',
      ...SESSION_RUN,
    }, () => invalid(NO_ASSISTANT))
    return {}
  }

  /** The thread's state, messages in their full serialization; `keys` narrows the values. */
  #stateGet(context: CommandContext, params: Record<string, unknown>) {
    const thread = this.#o.threads.get(context.scope, context.threadId)
    if (!thread) throw threadNotFound(context.threadId)
    const latest = this.#o.threads.latestCheckpoint(thread)
    const values = latest?.values ?? {}
    const keys = Array.isArray(params.keys) ? params.keys.filter((k): k is string => typeof k === 'string') : null
    return {
      values: keys ? Object.fromEntries(Object.entries(values).filter(([k]) => keys.includes(k))) : values,
      checkpoint: { id: latest?.checkpoint_id ?? null, ns: '' },
    }
  }

  /** The thread's current run, for subscriptions (which replay only its events). */
  currentRun(context: CommandContext): CurrentRun {
    const current = this.#current(context)
    if (current === null) throw new ProtocolRefusal('no_such_run', NO_RUN)
    return current
  }

  #current(context: CommandContext): CurrentRun | null {
    const thread = this.#o.threads.get(context.scope, context.threadId)
    const run = thread ? this.#o.runs.latest(thread.seq) : undefined
    return thread && run ? { thread, runId: run.run_id } : null
  }

  /** A fresh subscription id. */
  subscriptionId(): string {
    return uuid7({ msecs: this.#o.clock.now() })
  }
}

/** The assistant a thread answers with: the one its first `run.start` bound, else the one its last run used. */
function boundAssistant(thread: Thread): string | null {
  if (thread.boundAssistantId) return thread.boundAssistantId
  return typeof thread.metadata.assistant_id === 'string' ? thread.metadata.assistant_id : null
}

/** A subscription's filter from `subscription.subscribe`'s params: known channels (or `custom:<name>`), optional namespaces and depth. */
export function subscriptionFilter(params: Record<string, unknown>): EventFilter {
  const { channels, namespaces, depth } = params
  if (!Array.isArray(channels) || channels.length === 0) throw new ProtocolRefusal('invalid_argument', 'subscription.subscribe requires a non-empty channels array.', true)
  if (channels.some((c) => typeof c !== 'string' || !(CHANNELS.has(c) || c.startsWith('custom:')))) {
    throw new ProtocolRefusal('invalid_argument', 'subscription.subscribe received an unsupported channel.', true)
  }
  const validNamespaces = Array.isArray(namespaces) && namespaces.every((n) => Array.isArray(n) && n.every((segment) => typeof segment === 'string'))
  return {
    channels: channels as string[],
    ...(validNamespaces ? { namespaces: namespaces as string[][] } : {}),
    ...(Number.isInteger(depth) && (depth as number) >= 0 ? { depth: depth as number } : {}),
  }
}

/** How many HTTP subscription ids are remembered (for `unsubscribe`), oldest forgotten first. */
const HTTP_SUBSCRIPTIONS = 10_000

/**
 * Subscriptions made over HTTP: they change nothing that streams (each SSE stream has its own
 * filter), so only their ids are kept, for `unsubscribe` to know them.
 */
export class HttpSubscriptions {
  readonly #ids = new Set<string>()
  readonly #o: { threadLog: ThreadLog; newId: () => string }

  constructor(o: { threadLog: ThreadLog; newId: () => string }) {
    this.#o = o
  }

  /** The subscriptions of one thread as a transport. */
  of(context: CommandContext): Subscriptions {
    const key = (id: string) => `${context.scope}\u0000${context.threadId}\u0000${id}`
    return {
      subscribe: (_command, filter, current) => {
        if (current === null) throw new ProtocolRefusal('no_such_run', NO_RUN)
        const replayed = this.#o.threadLog.ofRun(current.thread, current.runId).filter((row) => matches(filter, row.method, JSON.parse(row.namespace) as string[])).length
        const id = this.#o.newId()
        this.#ids.add(key(id))
        if (this.#ids.size > HTTP_SUBSCRIPTIONS) this.#ids.delete(this.#ids.values().next().value!)
        return { subscription_id: id, replayed_events: replayed }
      },
      unsubscribe: (id) => this.#ids.delete(key(id)),
    }
  }
}
