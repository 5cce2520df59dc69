import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { VERSION } from '../version.js'

/** `GET /info`: what the server is and can do (chat UIs call it to check they can reach it). */
export const agentMetaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/info', {
    schema: {
      tags: ['System'], summary: 'Server Information',
      response: {
        200: Type.Object({
          version: Type.String(),
          flags: Type.Object({ assistants: Type.Boolean(), crons: Type.Boolean(), langsmith: Type.Boolean(), langsmith_tracing_replicas: Type.Boolean() }),
        }),
      },
    },
  }, async () => ({ version: VERSION, flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: true } }))
}
