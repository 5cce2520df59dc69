// The session protocol's routes: commands over HTTP, the thread's event stream over SSE, and the
// same path upgraded to a WebSocket. Bodies are read as the real JS server reads them (JSON.parse,
// zod-style 400s), not as the FastAPI routes do.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { CommandContext, ProtocolCommands } from '../agent/protocol-commands.js'
import { ProtocolSocket, type SocketSink } from '../agent/protocol-socket.js'
import type { EventFilter, ThreadLog } from '../agent/thread-log.js'
import type { Config } from '../config.js'
import { NotFound } from '../domain/errors.js'
import { requestContext } from './request-context.js'
import { streamLog } from '../sse/follow-log.js'
import { type OpenStreams, SseWriter } from '../sse/writer.js'
import { COMMAND_SCHEMA, EVENT_FILTER_SCHEMA, zodErrorBody, zodIssues, type ZodObject } from '../validation/zod-issues.js'

export interface ProtocolRoutesOptions {
  protocolCommands: ProtocolCommands
  threadLog: ThreadLog
  openStreams: OpenStreams
  config: Pick<Config, 'publicUrl'>
  /** Null when what was written is committed, else the promise of that commit (Services.durable). */
  durable: () => Promise<void> | null
}

const tags = ['Threads']
const ThreadPath = Type.Object({ thread_id: Type.String() })
const SseResponse = { description: 'The thread\'s protocol events', content: { 'text/event-stream': { schema: Type.String() } } }
const JsonAnswer = { description: 'A success or error envelope', content: { 'application/json': { schema: Type.Object({}, { additionalProperties: true }) } } }

/** A body that failed as the real server fails it: 400 plain text, or 400 with zod's issues. */
class BadBody {
  constructor(readonly reply: (r: FastifyReply) => FastifyReply) {}
}

/** The body as JSON.parse reads it, checked against `schema`. */
function readBody(request: FastifyRequest, schema: ZodObject): Record<string, unknown> | BadBody {
  let body: unknown
  try {
    // Without a Content-Type the real server's validator sees an empty object.
    body = request.headers['content-type'] === undefined ? {} : JSON.parse(request.rawBody?.toString('utf8') ?? '')
  } catch {
    return new BadBody((r) => r.code(400).type('text/plain;charset=UTF-8').send('Malformed JSON in request body'))
  }
  const issues = zodIssues(schema, body)
  if (issues.length > 0) return new BadBody((r) => r.code(400).type('application/json').send(JSON.stringify(zodErrorBody(issues))))
  return body as Record<string, unknown>
}

/**
 * A protocol socket's way out: a frame leaves once what it reports is committed (an event: its own
 * row; an answer: whatever is being written), and after every frame before it. A commit that
 * failed cuts the socket: what it reported is gone.
 */
function durableSink(socket: WebSocket, durable: () => Promise<void> | null): SocketSink {
  /** The last frame still waiting, when one is. */
  let tail: Promise<void> | null = null
  return {
    send(text, committed = durable()) {
      if (tail === null && committed === null) return socket.send(text)
      const next = (tail ?? Promise.resolve()).then(() => committed ?? undefined).then(() => socket.send(text))
      tail = next
      next.then(() => {
        if (tail === next) tail = null
      }, () => socket.terminate())
    },
    get bufferedAmount() {
      return socket.bufferedAmount
    },
    terminate: () => socket.terminate(),
  }
}

const plainNotFound = (reply: FastifyReply, error: NotFound) => reply.code(404).type('text/plain;charset=UTF-8').send(error.message)

export const protocolRoutes: FastifyPluginAsyncTypebox<ProtocolRoutesOptions> = async (app, options) => {
  const { protocolCommands: commands, threadLog } = options

  const context = (request: FastifyRequest): CommandContext => ({
    ...requestContext(request, options.config.publicUrl),
    threadId: (request.params as { thread_id: string }).thread_id,
  })

  app.post('/threads/:thread_id/commands', {
    schema: { tags, summary: 'Run a Protocol Command', params: ThreadPath, response: { 200: JsonAnswer } },
  }, async (request, reply) => {
    const body = readBody(request, COMMAND_SCHEMA)
    if (body instanceof BadBody) return body.reply(reply)
    const command = { id: body.id as number, method: body.method as string, params: (body.params as Record<string, unknown> | undefined) ?? {} }
    const ctx = context(request)
    try {
      return reply.type('application/json').send(JSON.stringify(commands.execute(ctx, command, commands.http.of(ctx))))
    } catch (error) {
      if (error instanceof NotFound) return plainNotFound(reply, error)
      throw error
    }
  })

  app.post('/threads/:thread_id/stream/events', {
    schema: { tags, summary: 'Stream Thread Events', params: ThreadPath, response: { 200: SseResponse } },
  }, async (request, reply) => {
    const body = readBody(request, EVENT_FILTER_SCHEMA)
    if (body instanceof BadBody) return body.reply(reply)
    const filter: EventFilter = {
      channels: body.channels as string[],
      ...(body.namespaces ? { namespaces: body.namespaces as string[][] } : {}),
      ...(body.depth !== undefined ? { depth: body.depth as number } : {}),
    }
    reply.hijack()
    // No heartbeats: the real server sends none on this stream.
    // Each event waits for its own row's commit (streamLog), not for everything being written.
    const writer = new SseWriter(reply.raw, { heartbeatMs: 0, headers: reply.getHeaders() as Record<string, string> })
    options.openStreams.track(writer)
    // The stream never ends by itself (a thread's log can always grow): shutdown ends it at once.
    const until = AbortSignal.any([writer.signal, options.openStreams.closing])
    try {
      const since = (body.since as number | undefined) ?? 0
      await streamLog(writer, threadLog, { scope: request.agentScope, threadId: request.params.thread_id, filter, since, until })
    } finally {
      writer.close()
    }
  })

  // The same path as a WebSocket; a plain GET is the real server's 404.
  app.route<{ Params: { thread_id: string } }>({
    method: 'GET',
    url: '/threads/:thread_id/stream/events',
    schema: { tags, summary: 'Thread Events over a WebSocket', params: ThreadPath },
    handler: async (_request, reply) => reply.code(404).type('text/plain; charset=UTF-8').send('404 Not Found'),
    wsHandler: (socket: WebSocket, request) => {
      const session = new ProtocolSocket({
        commands,
        log: threadLog,
        context: context(request),
        sink: durableSink(socket, options.durable),
      })
      // Binary frames are read as UTF-8 text too, as the real server reads them.
      socket.on('message', (data: Buffer) => session.receive(data.toString('utf8')))
      socket.once('close', () => session.close())
      socket.on('error', () => socket.terminate())
    },
  })
}
