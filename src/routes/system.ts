import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'

/** Liveness: answers once the app is ready to serve. No credentials needed. */
export const systemRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/ok', {
    schema: { tags: ['System'], summary: 'Health check', response: { 200: Type.Object({ ok: Type.Boolean() }) } },
  }, async () => ({ ok: true }))
}
