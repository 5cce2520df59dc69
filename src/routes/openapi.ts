import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'
import { VERSION } from '../version.js'

/**
 * hangar's own OpenAPI document, generated from the route schemas (operation ids, tags and shapes
 * as in the real services' documents). Registered before the routes it describes.
 */
export const openapiDocument: FastifyPluginAsync = fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hangar',
        version: VERSION,
        description: 'Offline emulator of a deployment control plane (and, later, the agent server it deploys).',
      },
      components: {
        securitySchemes: {
          'API Key': { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          'Tenant ID': { type: 'apiKey', in: 'header', name: 'X-Tenant-Id' },
          'Bearer Auth': { type: 'http', scheme: 'bearer' },
        },
      },
    },
  })
}, { name: 'hangar-openapi' })

/** `GET /openapi.json`: the document itself. */
export async function openapiRoute(app: FastifyInstance) {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
