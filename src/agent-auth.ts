// The agent server's gate: who a request is (HANGAR_AGENT_AUTH), what a user may do (its
// permissions, per the auth event each route raises) and which threads it may reach (its own).

import type { FastifyInstance, FastifyRequest, onRequestHookHandler, onRouteHookHandler, preHandlerHookHandler } from 'fastify'
import { eventsOf, ROUTE_EVENTS, type EventRule } from './agent/auth-events.js'
import { threadNotFound } from './agent/run-requests.js'
import { bearerOf, credentialOf, first } from './auth.js'
import type { Config } from './config.js'
import { permits } from './domain/agent-permissions.js'
import { owns, type AgentUsers } from './domain/agent-users.js'
import { Forbidden } from './domain/errors.js'
import { ApiError } from './errors.js'
import type { ThreadRepository } from './store/threads.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The auth events a request to the route raises (set for every agent-server route by `authorizeByEvent`). */
    authEvents?: EventRule
  }
}

/**
 * The agent server's gate, as `HANGAR_AGENT_AUTH` says:
 * - `api-key` (the default, as on the hosted server): an API key (`x-api-key`, or a Bearer token)
 *   is required — 403 `Missing authentication headers` without one; `HANGAR_API_KEYS` restricts which;
 * - `none` (as `langgraph dev`): no credential is asked for;
 * - `users`: `Authorization: Bearer <token>` of a user of `HANGAR_AGENT_USERS` — 401 without one or
 *   with a token no user has (an `x-api-key` is not a user's); the request acts as that user
 *   (`agentUser`: its identity and permissions, never its token).
 * `HANGAR_AUTH=off` admits everyone whatever the mode.
 */
export function agentServerAuth(config: Pick<Config, 'apiKeys' | 'auth' | 'agentAuth'>, users: AgentUsers): onRequestHookHandler {
  const accepted = new Set(config.apiKeys)
  return (request, _reply, done) => {
    if (config.auth === 'off' || config.agentAuth === 'none') return done()
    if (config.agentAuth === 'users') {
      const token = bearerOf(request.headers) ?? socketCredential(request)
      if (token === undefined) return done(ApiError.unauthorized('Missing authentication headers'))
      const user = users.byToken(token)
      if (!user) return done(ApiError.unauthorized('Invalid token'))
      const { token: _token, ...actingAs } = user
      request.agentUser = actingAs
      return done()
    }
    const credential = credentialOf(request.headers) ?? socketCredential(request)
    if (credential === undefined) return done(ApiError.forbidden('Missing authentication headers'))
    if (accepted.size > 0 && !accepted.has(credential)) return done(ApiError.forbidden('Invalid API key'))
    done()
  }
}

/**
 * A user's permissions, checked against the auth events of the route (agent/auth-events.ts): a
 * refused request is 403 `Forbidden` and nothing of it is done. Installs an `onRoute` hook that
 * gives each route of `scope` its events — a route the table does not list stops start-up — and a
 * `preHandler` that checks them: after validation (a 422 comes first, as on the real server, whose
 * handler authorizes after parsing the body) and before the owner filter (as the real server's
 * handler refuses before it looks anything up). The check is installed only when `enforce` (there
 * are users): no other request pays for it; the table is checked at start-up either way.
 */
export function authorizeByEvent(scope: FastifyInstance, enforce: boolean): void {
  const attach: onRouteHookHandler = (route) => {
    for (const method of [route.method].flat()) {
      const rule = ROUTE_EVENTS.get(`${method} ${route.routePath}`)
      if (rule === undefined) throw new Error(`agent-auth: ${method} ${route.routePath} raises no auth event: list it in src/agent/auth-events.ts`)
      route.config = { ...route.config, authEvents: rule }
    }
  }
  const check: preHandlerHookHandler = (request, _reply, done) => {
    const rule = request.routeOptions.config.authEvents
    const user = request.agentUser
    if (user === null || rule === undefined) return done()
    if (!eventsOf(rule, request.body).every((event) => permits(user.permissions, event))) return done(new Forbidden())
    done()
  }
  scope.addHook('onRoute', attach)
  if (enforce) scope.addHook('preHandler', check)
}

/**
 * In `users` mode, a route about one thread (`/threads/{thread_id}/…`: the thread, its state,
 * history, runs, streams and crons) answers 404 `Thread with ID … not found` for another user's
 * thread, as LangGraph's owner filter does: the thread is not there for them. Runs in `preHandler`,
 * after the parameters are validated.
 */
export function ownThreadsOnly(threads: Pick<ThreadRepository, 'get'>): preHandlerHookHandler {
  return (request, _reply, done) => {
    const id = (request.params as { thread_id?: unknown } | undefined)?.thread_id
    if (request.agentUser === null || typeof id !== 'string') return done()
    const thread = threads.get(request.agentScope, id)
    if (thread && !owns(request.agentUser, thread.metadata)) return done(threadNotFound(id))
    done()
  }
}

/**
 * A browser's WebSocket cannot send headers, so a socket upgrade may carry the API key as the
 * `api_key` query parameter instead; no other request can.
 */
function socketCredential(request: FastifyRequest): string | undefined {
  if (first(request.headers.upgrade)?.toLowerCase() !== 'websocket') return undefined
  const key = (request.query as Record<string, unknown> | undefined)?.api_key
  return typeof key === 'string' && key.trim() !== '' ? key.trim() : undefined
}
