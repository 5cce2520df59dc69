// The thread join stream: `GET /threads/{thread_id}/stream` follows every run of a thread, one after
// another, and stays open until the client closes it (see agent/thread-stream.ts for what it sends
// and how its event ids resume).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FaultInjector } from '../admin/faults.js'
import type { RunExecutor } from '../agent/run-executor.js'
import { threadNotFound } from '../agent/run-requests.js'
import { threadEvents, threadStreamModes, threadStreamStart } from '../agent/thread-stream.js'
import type { Config } from '../config.js'
import { errorResponses } from '../schemas/common.js'
import { ThreadLastEventIdHeader, ThreadParams, ThreadStreamQuery } from '../schemas/agent.js'
import type { RunRepository } from '../store/runs.js'
import type { ThreadRepository } from '../store/threads.js'
import { SseWriter, type OpenStreams } from '../sse/writer.js'

export interface ThreadStreamRoutesOptions {
  threads: ThreadRepository
  runs: RunRepository
  executor: RunExecutor
  config: Pick<Config, 'heartbeatMs'>
  /** Where streams register, so that shutdown can end them. */
  openStreams: OpenStreams
  /** Null when what was written is committed, else the promise of that commit (Services.durable). */
  durable: () => Promise<void> | null
  /** Says after how many events an injected fault cuts a request's stream. */
  faults: FaultInjector
}

const SseResponse = { description: 'A server-sent event stream', content: { 'text/event-stream': { schema: Type.String() } } }

export const threadStreamRoutes: FastifyPluginAsyncTypebox<ThreadStreamRoutesOptions> = async (app, options) => {
  const { threads, openStreams } = options

  app.get('/threads/:thread_id/stream', {
    schema: {
      tags: ['Threads'], summary: 'Join Thread Stream', params: ThreadParams, querystring: ThreadStreamQuery, headers: ThreadLastEventIdHeader,
      response: { 200: SseResponse, ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const { thread_id: threadId } = request.params
    const thread = threads.get(request.agentScope, threadId)
    if (!thread) throw threadNotFound(threadId)
    const modes = threadStreamModes(request.query.stream_mode, request.query.stream_modes)
    const header = request.headers['last-event-id']
    const start = threadStreamStart(typeof header === 'string' ? header : undefined)
    const dropAfter = options.faults.dropAfter(request)
    reply.hijack()
    // Location lets the SDK reconnect here with Last-Event-ID when the connection breaks.
    const writer = new SseWriter(reply.raw, { heartbeatMs: options.config.heartbeatMs, headers: { ...reply.getHeaders(), location: `/threads/${threadId}/stream` } as never, durable: options.durable })
    openStreams.track(writer)
    try {
      if (dropAfter === 0) writer.drop()
      let sent = 0
      for await (const event of threadEvents(options, thread, { start, modes, signal: writer.signal, closing: openStreams.closing })) {
        if (!(await writer.send(event))) break
        if (++sent === dropAfter) {
          writer.drop()
          break
        }
      }
    } catch (error) {
      reply.log.error({ err: error, thread_id: threadId }, 'streaming a thread failed')
    } finally {
      writer.close()
    }
  })
}
