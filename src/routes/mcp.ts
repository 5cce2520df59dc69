// The agent server's MCP endpoint, `/mcp/`, Streamable HTTP in its stateless form (as the hosted
// server documents it): POST carries one JSON-RPC message and is answered with JSON (202 for a
// notification); GET (no server-initiated stream) is 405; DELETE (no session to end) is 404.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { namesType } from '../accept.js'
import { idOf, parseRequest, rpcError, rpcResult, RpcError, RPC_CODES, type RpcId } from '../agent/json-rpc.js'
import type { McpEndpoint } from '../agent/mcp.js'
import type { Config } from '../config.js'
import { requestContext } from './request-context.js'
import { AnyDict } from '../schemas/common.js'
import { UnparsableBody } from '../validation/request.js'

export interface McpRoutesOptions {
  mcp: McpEndpoint
  config: Pick<Config, 'publicUrl'>
}

const tags = ['MCP']
const RpcBody = AnyDict({ description: 'A JSON-RPC 2.0 response: `result`, or `error` `{code, message}`' })

export const mcpRoutes: FastifyPluginAsyncTypebox<McpRoutesOptions> = async (app, { mcp, config }) => {
  app.post('/mcp/', {
    schema: {
      tags, summary: 'MCP Post',
      description: 'One JSON-RPC 2.0 message: `initialize`, `ping`, `tools/list` (every assistant as a tool), `tools/call` (runs it); a notification is answered 202. Stateless: no session id.',
      response: { 200: RpcBody, 202: Type.Null({ description: 'Notification accepted' }), 400: RpcBody },
    },
  }, async (request, reply) => {
    let id: RpcId | undefined = idOf(request.body)
    try {
      if (!namesType(request.headers.accept, 'application/json') || !namesType(request.headers.accept, 'text/event-stream')) {
        throw new RpcError(RPC_CODES.invalidRequest, 'Not Acceptable: Client must accept both application/json and text/event-stream')
      }
      const rpc = parseRequest(request.body, request.body instanceof UnparsableBody)
      id = rpc.id
      const result = await mcp.handle(requestContext(request, config.publicUrl), rpc)
      // A notification is acknowledged with no body at all (not `null`).
      if (id === undefined) return reply.code(202).send(undefined as never)
      return rpcResult(id, result)
    } catch (error) {
      if (error instanceof RpcError) return reply.code(error.status as 400).send(rpcError(id, error))
      throw error
    }
  })

  app.get('/mcp/', {
    schema: { tags, summary: 'MCP Get', response: { 405: RpcBody } },
  }, async (_request, reply) => reply.code(405).header('allow', 'POST, DELETE').send(rpcError(null, new RpcError(RPC_CODES.invalidRequest, 'Method Not Allowed: this server offers no server-initiated stream'))))

  app.delete('/mcp/', {
    schema: { tags, summary: 'Terminate Session', response: { 404: RpcBody } },
  }, async (_request, reply) => reply.code(404).send(rpcError(null, new RpcError(RPC_CODES.invalidRequest, 'Session not found: this server is stateless'))))
}
