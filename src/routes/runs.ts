import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { FaultInjector } from '../admin/faults.js'
import { joinSends } from '../agent/event-modes.js'
import type { RunExecutor } from '../agent/run-executor.js'
import { threadNotFound, type RunRequests } from '../agent/run-requests.js'
import type { Config } from '../config.js'
import { owns } from '../domain/agent-users.js'
import { ApiError } from '../errors.js'
import { AnyDict, errorResponses } from '../schemas/common.js'
import { CancelManyQuery, CancelQuery, JoinStreamQuery, RunsCancel, LastEventIdHeader, Run, RunCreate, RunListQuery, RunParams, ThreadParams } from '../schemas/agent.js'
import { ACTIVE_RUN_STATUSES, type Run as RunRecord, type RunRepository } from '../store/runs.js'
import type { Thread, ThreadRepository } from '../store/threads.js'
import { frame, SseWriter, type OpenStreams } from '../sse/writer.js'
import { requestContext } from './request-context.js'

export interface RunRoutesOptions {
  threads: ThreadRepository
  runs: RunRepository
  executor: RunExecutor
  runRequests: RunRequests
  config: Pick<Config, 'heartbeatMs' | 'publicUrl'>
  /** Where streams register, so that shutdown can end them. */
  openStreams: OpenStreams
  /** Null when what was written is committed, else the promise of that commit (Services.durable). */
  durable: () => Promise<void> | null
  /** Says after how many events an injected fault cuts a request's stream. */
  faults: FaultInjector
}

const tags = ['Thread Runs']
const statelessTags = ['Stateless Runs']
const runNotFound = () => ApiError.notFound('Run not found')
const noContent = { 202: Type.Null({ description: 'Accepted' }), 204: Type.Null({ description: 'Successful Response' }) }
const SseResponse = { description: 'A server-sent event stream', content: { 'text/event-stream': { schema: Type.String() } } }

/** The API's Run (the store's record without its handles). */
const presentRun = ({ seq: _seq, thread_seq: _thread, ...run }: RunRecord) => run

/**
 * At most this much text of a run stream's events goes in one write: a page of the run's log (what
 * it wrote in one commit) leaves together, one syscall where each event took one, and a stalled
 * client still holds the server to about this much beyond its socket's buffer.
 */
const BATCH_BYTES = 64 * 1024

export const runRoutes: FastifyPluginAsyncTypebox<RunRoutesOptions> = async (app, options) => {
  const { threads, runs, executor, runRequests } = options

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

  const context = (request: FastifyRequest) => requestContext(request, options.config.publicUrl)
  const createRun = (request: FastifyRequest, threadId: string | null, body: RunCreate): RunRecord =>
    runRequests.create(context(request), threadId, body)

  /**
   * Streams a run's events over SSE, from after `afterIdx`, then live until it ends. A client
   * that leaves stops only its own stream, unless it asked to cancel the run on disconnect.
   */
  const stream = async (
    reply: FastifyReply,
    run: RunRecord,
    o: { afterIdx: number; headers: Record<string, string>; cancelOnDisconnect: boolean; ids: boolean; modes?: string[] },
  ) => {
    const dropAfter = options.faults.dropAfter(reply.request)
    reply.hijack()
    const writer = new SseWriter(reply.raw, { heartbeatMs: options.config.heartbeatMs, headers: { ...reply.getHeaders(), ...o.headers } as never, durable: options.durable, headWithFirstEvent: true })
    options.openStreams.track(writer)
    try {
      if (dropAfter === 0) writer.drop()
      let sent = 0
      let dropped = false
      // The events of a page (what the run wrote in one commit) leave in one write, up to BATCH_BYTES.
      pages: for await (const page of executor.pages(run, o.afterIdx, writer.signal)) {
        let text = ''
        for (const event of page) {
          if (!joinSends(event.event, o.modes)) continue
          text += frame(o.ids ? event : { event: event.event, data: event.data, json: event.json })
          dropped = ++sent === dropAfter
          if (dropped) break
          if (text.length >= BATCH_BYTES) {
            if (!(await writer.sendFrame(text))) break pages
            text = ''
          }
        }
        if (text !== '' && !(await writer.sendFrame(text))) break
        if (dropped) {
          writer.drop()
          break
        }
      }
    } catch (error) {
      reply.log.error({ err: error, run_id: run.run_id }, 'streaming a run failed')
    } finally {
      writer.close()
      if (writer.clientLeft && o.cancelOnDisconnect) executor.cancel(run, 'interrupt')
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
    return (await executor.join(run)) as Record<string, unknown>
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
    executor.cancel(run, 'rollback')
    await executor.join(run)
    if (runs.bySeq(run.seq)) runs.delete(run)
    return reply.code(204).send(null)
  })

  app.get('/threads/:thread_id/runs/:run_id/join', {
    schema: { tags, summary: 'Join Run', params: RunParams, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request) => (await executor.join(findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id))) as Record<string, unknown>)

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
    const afterIdx = lastEventId ?? (executor.isLive(run) ? -1 : Number.MAX_SAFE_INTEGER)
    await stream(reply, run, {
      afterIdx,
      headers: { location: `${runLocation(run)}/stream` },
      cancelOnDisconnect: request.query.cancel_on_disconnect ?? false,
      ids: true,
      modes: request.query.stream_mode,
    })
  })

  app.post('/threads/:thread_id/runs/:run_id/cancel', {
    schema: { tags, summary: 'Cancel Run', params: RunParams, querystring: CancelQuery, response: { ...noContent, ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const run = findRun(findThread(request.agentScope, request.params.thread_id), request.params.run_id)
    executor.cancel(run, request.query.action ?? 'interrupt')
    if (!request.query.wait) return reply.code(202).send(null)
    await executor.join(run)
    return reply.code(204).send(null)
  })

  app.post('/runs/cancel', {
    schema: { tags, summary: 'Cancel Runs', querystring: CancelManyQuery, body: RunsCancel, response: { 204: noContent[204], ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const { thread_id: threadId, run_ids: runIds, status } = request.body
    let found: RunRecord[]
    if (status != null) {
      if (threadId != null || runIds != null) throw new ApiError(422, "Cannot specify 'thread_id' or 'run_ids' when using 'status'")
      // A user (HANGAR_AGENT_AUTH=users) cancels the runs of its own threads only.
      found = runs.withStatus(request.agentScope, status === 'all' ? ACTIVE_RUN_STATUSES : [status])
        .filter((run) => owns(request.agentUser, threads.bySeq(run.thread_seq)?.metadata ?? {}))
    } else {
      if (threadId == null || runIds == null) throw new ApiError(422, "Must provide either a status or both 'thread_id' and 'run_ids'")
      const thread = threads.get(request.agentScope, threadId)
      found = thread && owns(request.agentUser, thread.metadata) ? runIds.flatMap((id) => runs.get(thread.seq, id) ?? []) : []
    }
    // Runs named by id that have already ended are found (and left as they are); none at all is a 404.
    if (found.length === 0) throw ApiError.notFound('No runs found to cancel.')
    for (const run of found) executor.cancel(run, request.query.action ?? 'interrupt')
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
    return (await executor.join(run)) as Record<string, unknown>
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
    return runRequests.createBatch(context(request), request.body).map(presentRun)
  })
}
