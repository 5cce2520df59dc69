// The agent server's A2A endpoint (`POST /a2a/{assistant_id}`, JSON-RPC 2.0) and the agent card
// (`GET /.well-known/agent-card.json?assistant_id=`). The rules are in agent/a2a.ts; here a
// request's envelope is read, dispatched by method, and answered as JSON or as an SSE stream.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { A2AEndpoint } from '../agent/a2a.js'
import { idOf, parseRequest, rpcError, rpcResult, RpcError, RPC_CODES, type RpcId } from '../agent/json-rpc.js'
import type { Config } from '../config.js'
import { publicBase } from '../public-url.js'
import { requestContext } from './request-context.js'
import { AnyDict, errorResponses } from '../schemas/common.js'
import { SseWriter, type OpenStreams } from '../sse/writer.js'
import { UnparsableBody } from '../validation/request.js'
import { clientUrl } from '../copies.js'

export interface A2ARoutesOptions {
  a2a: A2AEndpoint
  config: Pick<Config, 'heartbeatMs' | 'publicUrl'>
  openStreams: OpenStreams
  /** Null when what was written is committed, else the promise of that commit (Services.durable). */
  durable: () => Promise<void> | null
}

const tags = ['A2A']
const RpcBody = AnyDict({ description: 'A JSON-RPC 2.0 response: `result`, or `error` `{code, message}`' })
const CARD_PATH = '/.well-known/agent-card.json'

export const a2aRoutes: FastifyPluginAsyncTypebox<A2ARoutesOptions> = async (app, { a2a, config, openStreams, durable }) => {
  const context = (request: FastifyRequest) => requestContext(request, config.publicUrl)

  /** Answers with an SSE stream: each result as one `data:` line of a JSON-RPC response to `id`. */
  async function streamResults(reply: FastifyReply, id: RpcId, results: AsyncGenerator<unknown>) {
    reply.hijack()
    const writer = new SseWriter(reply.raw, { heartbeatMs: config.heartbeatMs, headers: reply.getHeaders() as never, durable })
    openStreams.track(writer)
    try {
      for await (const result of results) {
        if (!(await writer.sendFrame(`data: ${JSON.stringify(rpcResult(id, result))}\n\n`))) break
      }
    } catch (error) {
      reply.log.error({ err: error, rpc_id: id }, 'streaming an A2A task failed')
    } finally {
      writer.close()
    }
    return reply
  }

  app.get(CARD_PATH, {
    schema: {
      tags, summary: 'A2A Agent Card',
      querystring: Type.Object({ assistant_id: Type.String({ description: 'The assistant (or graph) the card describes' }) }),
      response: { 200: AnyDict({ description: 'The A2A agent card (protocol 0.3)' }), ...errorResponses(404, 422) },
    },
  }, async (request) => {
    // The endpoint is served beside the card: under a deployment's prefix when the card is.
    const url = clientUrl(request)
    const prefix = url.slice(0, url.indexOf(CARD_PATH))
    return a2a.card(request.agentScope, request.query.assistant_id, `${publicBase(request, config.publicUrl)}${prefix}`)
  })

  app.post('/a2a/:assistant_id', {
    schema: {
      tags, summary: 'A2A JSON-RPC',
      description: 'JSON-RPC 2.0: `message/send`, `message/stream` and `tasks/resubscribe` (SSE of JSON-RPC responses), `tasks/get`, `tasks/cancel`; `tasks/pushNotificationConfig/*` answer -32003 (not supported). `contextId` is the thread id, a task id the run id; a message naming an `input-required` task resumes it.',
      params: Type.Object({ assistant_id: Type.String({ description: 'The assistant (or graph) to talk to' }) }),
      response: { 200: RpcBody, 400: RpcBody, 404: RpcBody, 409: RpcBody },
    },
  }, async (request, reply) => {
    let id: RpcId | undefined = idOf(request.body)
    try {
      const rpc = parseRequest(request.body, request.body instanceof UnparsableBody)
      id = rpc.id
      if (id === undefined) throw new RpcError(RPC_CODES.invalidRequest, 'Invalid Request: id is required')
      const assistant = a2a.assistant(request.agentScope, request.params.assistant_id)
      switch (rpc.method) {
        case 'message/send': {
          const started = await a2a.start(context(request), assistant, rpc.params)
          if (started.blocking) await a2a.settle(started.run)
          return rpcResult(id, await a2a.task(started.task))
        }
        case 'message/stream': {
          const started = await a2a.start(context(request), assistant, rpc.params)
          return streamResults(reply, id, a2a.stream(started))
        }
        case 'tasks/resubscribe':
          return streamResults(reply, id, await a2a.resubscribe(request.agentScope, rpc.params, request.agentUser))
        case 'tasks/get':
          return rpcResult(id, await a2a.get(request.agentScope, rpc.params, request.agentUser))
        case 'tasks/cancel':
          return rpcResult(id, await a2a.cancel(request.agentScope, rpc.params, request.agentUser))
        case 'tasks/pushNotificationConfig/set':
        case 'tasks/pushNotificationConfig/get':
        case 'tasks/pushNotificationConfig/list':
        case 'tasks/pushNotificationConfig/delete':
          return a2a.pushNotificationConfig()
        default:
          throw new RpcError(RPC_CODES.methodNotFound, `Method not found: ${rpc.method}`)
      }
    } catch (error) {
      if (error instanceof RpcError) return reply.code(error.status as 400).send(rpcError(id, error))
      throw error
    }
  })
}
