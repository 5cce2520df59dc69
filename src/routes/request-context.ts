import type { FastifyRequest } from 'fastify'
import type { RequestContext } from '../agent/run-requests.js'
import { publicBase } from '../public-url.js'

/** What a run created for an agent-server request needs of it: whose agent server, which user, its headers, where the client reached hangar. */
export const requestContext = (request: FastifyRequest, publicUrl: string): RequestContext => ({
  scope: request.agentScope,
  user: request.agentUser,
  headers: request.headers,
  publicBase: publicBase(request, publicUrl),
})
