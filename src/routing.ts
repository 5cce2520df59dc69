// Routing as the real services' framework (Starlette behind uvicorn) does it, where Fastify's own
// router differs: 404/405/307 for what no route matches, paths decoded leniently, parameters of any
// length, and uvicorn's plain 400 for what is not HTTP at all.

import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { clientUrl, copyPatterns } from './copies.js'
import { ApiError, phrase, sendError } from './errors.js'

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']

/**
 * Routes what no route matches as Starlette's router does: an unknown path → 404 `Not Found`, a
 * known path with another method → 405 `Method Not Allowed` with `Allow`, and a known path with a
 * trailing slash → 307 to the path without. Must be installed before any route is registered (it
 * learns the routes as they are added).
 */
export function installStarletteRouting(app: FastifyInstance) {
  // The routes are only learnt here; the router that matches a path against them is built when the
  // first request matches no route (registering ~300 routes in a second router is a tenth of start-up).
  const learnt: RouteOptions[] = []
  let router: ReturnType<typeof FindMyWay> | undefined
  app.addHook('onRoute', (route) => {
    // CORS preflight answers OPTIONS on every path; it says nothing about which methods a path has.
    if (!route.url.includes('*')) learnt.push(route)
    router = undefined
  })
  const routes = () => {
    if (router === undefined) {
      router = FindMyWay({ ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH })
      for (const route of learnt) {
        // A route's copies under a second prefix (copies.ts) are known by now: the scopes' hooks have run.
        for (const url of [route.url, ...copyPatterns(route.url, route.config?.copies)]) {
          for (const method of [route.method].flat() as HTTPMethod[]) if (!router.hasRoute(method, url)) router.on(method, url, () => {})
        }
      }
    }
    return router
  }

  // Routing happens before any hook; an empty segment must fall through to "no route" before auth
  // runs. An OPTIONS that is not a CORS preflight (Origin and Access-Control-Request-Method) is an
  // ordinary request to a path without an OPTIONS route: 405, as behind FastAPI's CORS middleware.
  app.addHook('onRequest', (request, reply, done) => {
    const preflight = request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined
    if (hasEmptyParam(request.params) || (request.method === 'OPTIONS' && !preflight)) return reply.callNotFound()
    done()
  })
  app.setNotFoundHandler((request, reply) => {
    // The path the client sent: a copy's 307 keeps its prefix, and only routes served under it count.
    const [path, query] = splitUrl(clientUrl(request))
    const matches = (method: HTTPMethod, url: string) => {
      const found = routes().find(method, url)
      return found !== null && !hasEmptyParam(found.params)
    }
    const allowed = METHODS.filter((method) => matches(method, path))
    if (allowed.length > 0) {
      return sendError(reply, new ApiError(405, 'Method Not Allowed', { allow: allowed.join(', ') }))
    }
    if (path.length > 1 && path.endsWith('/') && matches(request.method as HTTPMethod, path.slice(0, -1))) {
      return reply.code(307).header('location', path.slice(0, -1) + query).send()
    }
    return sendError(reply, ApiError.notFound('Not Found'))
  })
}

/** A path parameter never matches an empty segment (Starlette's `{param}` is `[^/]+`). */
export function hasEmptyParam(params: unknown): boolean {
  // A loop, not Object.values(): every request passes here.
  const values = (params ?? {}) as Record<string, unknown>
  for (const key in values) if (values[key] === '') return true
  return false
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?')
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q)]
}

/** Path parameters of any length route (Starlette has no limit; Node's header limit bounds the URL). */
export const MAX_PARAM_LENGTH = 65_536

/**
 * The URL as the router should see it. Uvicorn decodes a path leniently (Python's `unquote`): an
 * escape that is not `%XX` stays as it is, and bytes that are not UTF-8 become U+FFFD. The router
 * here refuses such a path outright, so a path it cannot decode is re-encoded the lenient way first;
 * the route then answers as the real service does (a 422 on a UUID parameter, say).
 */
export function lenientUrl(url: string): string {
  // Only a `%` can make a path undecodable (every request passes here).
  if (!url.includes('%')) return url
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  try {
    decodeURIComponent(path)
    return url
  } catch {
    const repaired = path.split('/').map((segment) => encodeURIComponent(unquote(segment))).join('/')
    return q < 0 ? repaired : repaired + url.slice(q)
  }
}

function unquote(segment: string): string {
  const bytes: number[] = []
  for (let i = 0; i < segment.length; ) {
    if (segment[i] === '%' && /^[0-9a-fA-F]{2}$/.test(segment.slice(i + 1, i + 3))) {
      bytes.push(parseInt(segment.slice(i + 1, i + 3), 16))
      i += 3
    } else {
      const char = String.fromCodePoint(segment.codePointAt(i)!)
      bytes.push(...Buffer.from(char, 'utf8'))
      i += char.length
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

/**
 * What a request that is not valid HTTP gets (a broken request line, bad chunking, headers too
 * large): uvicorn's plain-text 400. A connection that is already gone is just closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  const body = 'Invalid HTTP request received.'
  if (socket.writable && error.code !== 'ECONNRESET') {
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`)
  } else socket.destroy()
}

/** Fastify's own routing errors (what is left of them) in the one error shape. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400
  sendError(reply, new ApiError(status, phrase(status)))
}
