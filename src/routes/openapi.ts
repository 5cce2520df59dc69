import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import type { SecurityRequirement, SecurityScheme } from '../auth.js'
import { VERSION } from '../version.js'

/**
 * hangar's own OpenAPI document, generated from the route schemas (operation ids, tags and shapes
 * as in the real services' documents). Registered before the routes it describes.
 */
export interface OpenapiDocumentOptions {
  /** The credentials hangar's gates read (`securitySchemes(config)` in auth.ts). */
  securitySchemes: Record<string, SecurityScheme>
}

export const openapiDocument: FastifyPluginAsync<OpenapiDocumentOptions> = fp(async (app: FastifyInstance, options: OpenapiDocumentOptions) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hangar',
        version: VERSION,
        description: [
          'Offline emulator of a deployment control plane and of the agent server it deploys.',
          'Every control-plane path is served again under `/api-host` (as self-hosted installs serve it), and every',
          'agent-server path again under `/deployments/{deployment_id}/agent` (the agent server of that deployment,',
          'its `url`); those copies are left out of this document so that each operation appears once.',
        ].join(' '),
      },
      // Which operations need which of these is declared per gated scope (`declareSecurity`).
      components: { securitySchemes: options.securitySchemes },
    },
  })
}, { name: 'hangar-openapi' })

/**
 * Leaves the routes of a scope out of the document: for the copies of routes served under a second
 * prefix, which would repeat operation ids (the document lists each operation once).
 */
export function leaveOutOfDocs(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
  })
}

/**
 * Declares on every operation of a scope the credentials its auth gate admits (OpenAPI `security`,
 * alternatives in order), so /docs sends them on try-it calls. Called next to where the scope
 * installs its gate; routes outside any gate declare nothing (public). An empty list declares nothing.
 */
export function declareSecurity(scope: FastifyInstance, requirements: SecurityRequirement[]): void {
  if (requirements.length === 0) return
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: requirements }
  })
}

/** `GET /openapi.json`: the document itself; `GET /docs`: an interactive page over it (assets served locally, no network). */
export async function openapiRoute(app: FastifyInstance) {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } })
}
