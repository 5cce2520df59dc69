// CORS: browsers call hangar from other origins (token URLs, streams, the React hooks) and read
// the headers clients use. The real agent server answers every response with
// `access-control-allow-origin: *` and its exposed headers, Origin or not (docs/agent-server-wire.md §1.3).
//
// Hand-written rather than @fastify/cors, for cost, with the library's answers: its hook rebuilt its
// options and the route's options (twice) on every request, about a tenth of a simple GET's CPU.
// Here one hook, computed once, sets the headers of every answer, and one route answers preflights.
// test/operability.test.ts compares both, header for header, with what @fastify/cors gives for the
// same options.

import fp from 'fastify-plugin'

/** The options as @fastify/cors names them (the test gives the library the same). */
export const CORS_OPTIONS = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  allowedHeaders: ['content-type', 'x-api-key', 'x-tenant-id', 'authorization', 'last-event-id', 'x-hangar-admin-token', 'x-goog-content-length-range'],
  exposedHeaders: ['content-location', 'location', 'x-pagination-total', 'x-pagination-next'],
}

/** Allows `origins` (`*` for any) to call every route: register before any route plugin. */
export const cors = fp<{ origins: readonly string[] }>(async (app, { origins }) => {
  const exposed = CORS_OPTIONS.exposedHeaders.join(', ')
  if (origins.includes('*')) {
    app.addHook('onRequest', (_request, reply, done) => {
      reply.header('access-control-allow-origin', '*')
      reply.header('access-control-expose-headers', exposed)
      done()
    })
  } else {
    // A listed origin is echoed back; the answer varies with Origin, which caches must know.
    const listed = new Set(origins)
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('vary', 'Origin')
      const origin = request.headers.origin
      if (origin !== undefined && listed.has(origin)) reply.header('access-control-allow-origin', origin)
      reply.header('access-control-expose-headers', exposed)
      done()
    })
  }
  // A preflight (an OPTIONS with Origin and Access-Control-Request-Method: the routing hook sends any
  // other OPTIONS to 405) to any path: what may be sent, and no content.
  //
  // `logLevel: undefined` is given as @fastify/cors gives it, on purpose: Fastify adds `logLevel` to
  // every route's options as it registers it, and with one early route that has it already, the
  // ~170 registrations of an app measured ~4 ms faster (V8's inline caches; startHangar() ~20 -> ~16 ms
  // at best, bench/startup.mjs). Without it an app starts as slowly as one with CORS off.
  const methods = CORS_OPTIONS.methods.join(', ')
  const allowedHeaders = CORS_OPTIONS.allowedHeaders.join(', ')
  app.options('*', { schema: { hide: true }, logLevel: undefined }, (_request, reply) => {
    reply.header('access-control-allow-methods', methods)
    reply.header('access-control-allow-headers', allowedHeaders)
    reply.code(204).header('content-length', '0').send()
  })
})
