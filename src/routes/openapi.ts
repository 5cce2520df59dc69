import Fastify, { type FastifyInstance, type FastifyPluginAsync, type HTTPMethods, type RouteHandlerMethod, type RouteOptions } from 'fastify'
import type {} from '@fastify/swagger'
import fp from 'fastify-plugin'
import type { SecurityRequirement, SecurityScheme } from '../auth.js'
import { ApiError, sendError } from '../errors.js'
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
  // The routes are only noted here (their options objects: the scopes' own hooks may still change
  // their schema); the document and the page are built the first time someone asks for them. Loading
  // and registering the generator and the page at start-up was a third of `ready()`.
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    routes.push(route)
  })
  let docs: Promise<FastifyInstance> | undefined
  app.decorate('apiDocs', () => (docs ??= documentApp(routes, options)))
}, { name: 'hangar-openapi' })

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * An app serving only the document and the page over it (`swagger()`, `/docs…`), built on the
     * first call from the routes registered so far.
     */
    apiDocs(): Promise<FastifyInstance>
  }
}

/**
 * An app of its own holding the document generator, the page, and the documented routes again (their
 * method, URL, schema and config; no handler runs). It never listens: hangar's `/openapi.json` reads
 * its `swagger()`, and `/docs…` is passed to it with `inject`.
 */
async function documentApp(routes: RouteOptions[], options: OpenapiDocumentOptions): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')])
  const docs = Fastify({ logger: false, exposeHeadRoutes: false })
  // Only the document reads the schemas: nothing is validated or serialized with them here.
  docs.setValidatorCompiler(() => () => true)
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data))
  await docs.register(swagger, {
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
  await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } })
  const documented = routes.filter((route) => !route.schema?.hide)
  docs.register(async (scope) => {
    for (const { method, url, schema, config } of documented) scope.route({ method, url, schema, config, handler: async () => null })
  })
  await docs.ready()
  return docs
}

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

/**
 * `GET /openapi.json`: the document itself; `GET /docs`: an interactive page over it (assets served
 * locally, no network). A path under `/docs` the page does not serve is hangar's 404.
 */
export async function openapiRoute(app: FastifyInstance) {
  app.get('/openapi.json', { schema: { hide: true } }, async () => (await app.apiDocs()).swagger())
  const page: RouteHandlerMethod = async (request, reply) => {
    const docs = await app.apiDocs()
    const answer = await docs.inject({ method: 'GET', url: request.url, headers: request.headers })
    if (answer.statusCode === 404) return reply.callNotFound()
    // The page's paths answer GET only: another method is Starlette's 405, as on any known path.
    if (request.method !== 'GET') return sendError(reply, new ApiError(405, 'Method Not Allowed', { allow: 'GET' }))
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_HEADERS.includes(name)) reply.header(name, value)
    }
    reply.code(answer.statusCode)
    return answer.rawPayload.length === 0 ? reply.send() : reply.send(answer.rawPayload)
  }
  app.get('/docs', { schema: { hide: true } }, page)
  // `/docs/` too: the wildcard alone leaves an empty segment, which routes as no route at all.
  const methods: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
  for (const url of ['/docs/', '/docs/*']) app.route({ method: methods, url, schema: { hide: true }, handler: page })
}

/** Headers of the page app's answer that belong to its own (injected) connection, not to hangar's. */
const HOP_HEADERS = ['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']
