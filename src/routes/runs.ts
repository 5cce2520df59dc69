import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { v7 as uuid7 } from 'uuid'
import type { Clock } from '../clock.js'
import type { MultitaskStrategy, RunManager } from '../agent/runs.js'
import { resolveAssistantId } from '../agent/system-assistants.js'
import type { GraphEngine } from '../agent/types.js'
import { ApiError } from '../errors.js'
import { AnyDict, errorResponses } from '../schemas/common.js'
import { CancelQuery, JoinStreamQuery, LastEventIdHeader, Run, RunCreate, RunListQuery, RunParams, ThreadParams } from '../schemas/agent.js'
import type { AssistantRepository } from '../store/assistants.js'
import type { Run as RunRecord, RunKwargs, RunRepository } from '../store/runs.js'
import type { Thread, ThreadRepository } from '../store/threads.js'
import { SseWriter, type OpenStreams } from '../sse/writer.js'
import { publicBase } from '../public-url.js'
import { threadNotFound } from './threads.js'

export interface RunRoutesOptions {
  assistants: AssistantRepository
  threads: ThreadRepository
  runs: RunRepository
  engine: GraphEngine
  manager: RunManager
  clock: Clock
  heartbeatMs: number
  publicUrl: string
  /** Runs `fn` in one database transaction: all of it is written, or none. */
  transaction: <T>(fn: () => T) => T
  /** Where streams register, so that shutdown can end them. */
  openStreams: OpenStreams
  /** After how many events an injected fault cuts this request's stream (undefined: never). */
  dropAfter?: (request: FastifyRequest) => number | undefined
}

const tags = ['Thread Runs']
const statelessTags = ['Stateless Runs']
const runNotFound = () => ApiError.notFound('Run not found')
const noContent = { 202: Type.Null({ description: 'Accepted' }), 204: Type.Null({ description: 'Successful Response' }) }
const SseResponse = { description: 'A server-sent event stream', content: { 'text/event-stream': { schema: Type.String() } } }

/** The API's Run (the store's record without its handles). */
const presentRun = ({ seq: _seq, thread_seq: _thread, ...run }: RunRecord) => run

/** Request headers a run copies into `configurable`, as the real server does. */
function headerConfig(request: FastifyRequest): Record<string, string> {
  const copied: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value !== 'string') continue
    if ((name.startsWith('x-') && !['x-api-key', 'x-tenant-id', 'x-service-key'].includes(name)) || name === 'user-agent') copied[name] = value
  }
  return copied
}

export const runRoutes: FastifyPluginAsyncTypebox<RunRoutesOptions> = async (app, options) => {
  const { assistants, threads, runs, engine, manager, clock } = options

  const findThread = (scope: string, id: string) => {
    const thread = threads.get(scope, id)
    if (!thread) throw threadNotFound(id)
    return thread
  }
  const findRun = (thread: Thread, runId: string) => {
    const run = runs.get(thread.seq, runId)
    if (!run) throw runNotFound()
    return run
  }

  const assistantFor = (scope: string, body: RunCreate) => {
    const assistant = assistants.get(scope, resolveAssistantId(engine, body.assistant_id))
    if (!assistant) {
      throw ApiError.notFound(`No assistant found for "${body.assistant_id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`)
    }
    return assistant
  }

  /**
   * Creates a run from a RunCreate body on a thread (`null`: a stateless run on a temporary thread).
   * One transaction: a run refused (a busy thread) leaves the thread as it was, and no thread it
   * would have created. The run starts only after the transaction committed (it is scheduled).
   */
  const createRun = (request: FastifyRequest, threadId: string | null, body: RunCreate): RunRecord =>
    options.transaction(() => startRun(request, threadId, body, assistantFor(request.agentScope, body)))

  const startRun = (request: FastifyRequest, threadId: string | null, body: RunCreate, assistant: ReturnType<typeof assistantFor>): RunRecord => {
    const scope = request.agentScope
    let thread: Thread | undefined
    if (threadId === null) thread = threads.create(scope, randomUUID(), {})
    else {
      thread = threads.get(scope, threadId)
      if (!thread && body.if_not_exists === 'create') thread = threads.create(scope, threadId, {})
      if (!thread) throw threadNotFound(threadId)
    }
    thread = threads.patchMetadata(thread, { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id })
    const modes = body.stream_mode == null ? ['values'] : Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode]
    const feedbackKeys = body.feedback_keys == null ? null : [body.feedback_keys].flat()
    const config = { ...(body.config ?? {}) } as Record<string, unknown>
    config.configurable = { ...(config.configurable as object | undefined), ...headerConfig(request), ...(body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : {}) }
    const kwargs: RunKwargs = {
      input: body.input ?? null,
      // Only the command fields the client gave (the validator fills absent ones with null).
      command: body.command ? Object.fromEntries(Object.entries(body.command).filter(([, v]) => v !== null)) : null,
      config,
      context: body.context ?? {},
      stream_mode: modes.length > 0 ? modes : ['values'],
      subgraphs: body.stream_subgraphs ?? false,
      resumable: body.stream_resumable ?? false,
      feedback_keys: feedbackKeys?.length ? feedbackKeys : null,
      interrupt_before: body.interrupt_before ?? null,
      interrupt_after: body.interrupt_after ?? null,
      on_disconnect: body.on_disconnect ?? null,
      after_seconds: body.after_seconds ?? null,
      temporary: threadId === null && (body.on_completion ?? 'delete') === 'delete',
    }
    return manager.create(scope, thread, uuid7({ msecs: clock.now() }), {
      assistant,
      kwargs,
      metadata: { ...assistant.metadata, ...thread.metadata, ...(body.metadata ?? {}) },
      strategy: (body.multitask_strategy ?? 'reject') as MultitaskStrategy,
      publicBase: publicBase(request, options.publicUrl),
    })
  }

  /**
   * Streams a run's events over SSE, from after `afterIdx`, then live until it ends. A client
   * that leaves stops only its own stream, unless it asked to cancel the run on disconnect.
   */
  const stream = async (reply: FastifyReply, run: RunRecord, o: { afterIdx: number; headers: Record<string, string>; cancelOnDisconnect: boolean; ids: boolean }) => {
    const dropAfter = options.dropAfter?.(reply.request)
    reply.hijack()
    const writer = new SseWriter(reply.raw, { heartbeatMs: options.heartbeatMs, headers: { ...reply.getHeaders(), ...o.headers } as never })
    options.openStreams.track(writer)
    try {
      if (dropAfter === 0) writer.drop()
      let sent = 0
      for await (const event of manager.events(run, o.afterIdx, writer.signal)) {
        if (!(await writer.send(o.ids ? event : { event: event.event, data: event.data }))) break
        if (++sent === dropAfter) {
          writer.drop()
          break
        }
      }
    } catch (error) {
      reply.log.error({ err: error, run_id: run.run_id }, 'streaming a run failed')
    } finally {
      writer.close()
      if (writer.clientLeft && o.cancelOnDisconnect) manager.cancel(run, 'interrupt')
    }
  }
  const runLocation = (run: RunRecord) => `/threads/${run.thread_id}/runs/${run.run_id}`

  app.post('/threads/:thread_id/runs/stream', {
    schema: { tags, summary: 'Create Run, Stream Output', params: ThreadParams, body: RunCreate, response: { 200: SseResponse, ...errorResponses(404, 409, 422) } },
  }, async (request, reply) => {
    const run = createRun(request, request.params.thread_id, request.body)
    await stream(reply, run, {
      afterIdx: -1,
      headers: { location: `${runLocation(run)}/stream`, 'content-location': runLocation(run) },
      cancelOnDisconnect: request.body.on_disconnect === 'cancel',
      ids: true,
    })
  })

  app.post('/threads/:thread_id/runs', {
    schema: { tags, summary: 'Create Background Run', params: ThreadParams, body: RunCreate, response: { 200: Run, ...errorResponses(404, 409, 422) } },
  }, async (request, reply) => {
    const run = createRun(request, request.params.thread_id, request.body)
    return reply.header('content-location', runLocation(run)).send(presentRun(run))
  })

  app.post('/threads/:thread_id/runs/wait', {
    schema: { tags, summary: 'Create Run, Wait for Output', params: ThreadParams, body: RunCreate, response: { 200: AnyDict(), ...errorResponses(404, 409, 422) } },
  }, async (request, reply) => {
    const run = createRun(request, request.params.thread_id, request.body)
    reply.header('content-location', runLocation(run))
    return (await manager.join(run)) as Record<string, unknown>
  })

  app.get('/threads/:thread_id/runs', {
    schema: { tags, summary: 'List Runs', params: ThreadParams, querystring: RunListQuery, response: { 200: Type.Array(Run), ...errorResponses(404, 422) } },
  }, async (request) => {
    const thread = findThread(request.agentScope, request.params.thread_id)
    const q = request.query
    return runs.list(thread.seq, { status: q.status, limit: q.limit ?? 10, offset: q.offset ?? 0 }).map(presentRun)
  })

  app.get('/threads/:thread_id/runs/:run_id', {
    schema: { tags, summary: 'Get Run', params: RunParams, response: { 200: Run, ...errorResponses(404, 422) } },
  }, async (request) => presentRun(findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id)))

  app.delete('/threads/:thread_id/runs/:run_id', {
    schema: { tags, summary: 'Delete Run', params: RunParams, response: { 204: noContent[204], ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const run = findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id)
    manager.cancel(run, 'rollback')
    await manager.join(run)
    if (runs.bySeq(run.seq)) runs.delete(run)
    return reply.code(204).send(null)
  })

  app.get('/threads/:thread_id/runs/:run_id/join', {
    schema: { tags, summary: 'Join Run', params: RunParams, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request) => (await manager.join(findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id))) as Record<string, unknown>)

  app.get('/threads/:thread_id/runs/:run_id/stream', {
    schema: {
      tags, summary: 'Join Run Stream', params: RunParams, querystring: JoinStreamQuery, headers: LastEventIdHeader,
      response: { 200: SseResponse, ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const run = findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id)
    // Validated as an integer (>= -1) by the route's header schema.
    const header = request.headers['last-event-id']
    const lastEventId = typeof header === 'string' ? Number(header) : undefined
    // With Last-Event-ID: what came after it. Without: a running run from its start; a finished one has nothing more to say.
    const afterIdx = lastEventId ?? (manager.isLive(run) ? -1 : Number.MAX_SAFE_INTEGER)
    await stream(reply, run, { afterIdx, headers: { location: `${runLocation(run)}/stream` }, cancelOnDisconnect: request.query.cancel_on_disconnect ?? false, ids: true })
  })

  app.post('/threads/:thread_id/runs/:run_id/cancel', {
    schema: { tags, summary: 'Cancel Run', params: RunParams, querystring: CancelQuery, response: { ...noContent, ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const run = findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id)
    manager.cancel(run, request.query.action ?? 'interrupt')
    if (!request.query.wait) return reply.code(202).send(null)
    await manager.join(run)
    return reply.code(204).send(null)
  })

  // Stateless runs: on a temporary thread, deleted afterwards unless on_completion is "keep".
  app.post('/runs/stream', {
    schema: { tags: statelessTags, summary: 'Create Run, Stream Output', body: RunCreate, response: { 200: SseResponse, ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const run = createRun(request, null, request.body)
    await stream(reply, run, { afterIdx: -1, headers: { 'content-location': `/runs/${run.run_id}` }, cancelOnDisconnect: request.body.on_disconnect === 'cancel', ids: false })
  })

  app.post('/runs/wait', {
    schema: { tags: statelessTags, summary: 'Create Run, Wait for Output', body: RunCreate, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const run = createRun(request, null, request.body)
    reply.header('content-location', `/runs/${run.run_id}`)
    return (await manager.join(run)) as Record<string, unknown>
  })

  app.post('/runs', {
    schema: { tags: statelessTags, summary: 'Create Background Run', body: RunCreate, response: { 200: Run, ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const run = createRun(request, null, request.body)
    return reply.header('content-location', `/runs/${run.run_id}`).send(presentRun(run))
  })

  app.post('/runs/batch', {
    schema: { tags: statelessTags, summary: 'Create Run Batch', body: Type.Array(RunCreate, { minItems: 1 }), response: { 200: Type.Array(Run), ...errorResponses(404, 422) } },
  }, async (request) => {
    // Every item is checked before any run is created: one unknown assistant creates none.
    const planned = request.body.map((body) => ({ body, assistant: assistantFor(request.agentScope, body) }))
    return options.transaction(() => planned.map(({ body, assistant }) => presentRun(startRun(request, null, body, assistant))))
  })
}
