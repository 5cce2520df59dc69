// CORS: browsers call hangar from other origins (token URLs, streams, the React hooks) and read
// the headers clients use. The real agent server answers every response with
// `access-control-allow-origin: *` and its exposed headers, Origin or not (docs/agent-server-wire.md §1.3).
//
// @fastify/cors answers the preflights (its `OPTIONS *` route and hook, in a scope of their own).
// The headers every other answer carries are set here by one hook, computed once: the library's hook
// would rebuild its options and the route's options (twice) on every request, about a tenth of a
// simple GET's CPU. They are the library's headers for the same options: the origin (or, with a list,
// the request's origin when listed, and `Vary: Origin` always) and the exposed headers.

import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

/** The options hangar gives @fastify/cors (exported for the test that compares hangar's headers with the library's). */
export const CORS_OPTIONS = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['content-type', 'x-api-key', 'x-tenant-id', 'authorization', 'last-event-id', 'x-hangar-admin-token', 'x-goog-content-length-range'],
  exposedHeaders: ['content-location', 'location', 'x-pagination-total', 'x-pagination-next'],
}

/** Allows `origins` (`*` for any) to call every route: register before any route plugin. */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  const any = origins.includes('*')
  const exposed = CORS_OPTIONS.exposedHeaders.join(', ')
  if (any) {
    app.addHook('onRequest', (_request, reply, done) => {
      reply.header('access-control-allow-origin', '*')
      reply.header('access-control-expose-headers', exposed)
      done()
    })
  } else {
    const listed = new Set(origins)
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('vary', 'Origin')
      const origin = request.headers.origin
      if (origin !== undefined && listed.has(origin)) reply.header('access-control-allow-origin', origin)
      reply.header('access-control-expose-headers', exposed)
      done()
    })
  }
  // Not wrapped with fastify-plugin: the library's hook stays in this scope, on its preflight route only.
  app.register(async (scope) => {
    await scope.register(cors, {
      ...CORS_OPTIONS,
      origin: any ? '*' : [...origins],
    })
  })
}
