// Routes served again under a second prefix: the control plane under `/api-host` (as self-hosted
// installs serve it) and the agent server (with `/ok`) under `/deployments/{deployment_id}/agent`,
// each deployment's own. They are registered once, at their root paths: a request under a prefix
// is routed as its path without it (`routeUrl`, Fastify's `rewriteUrl`), and reaches only the
// routes that declare that copy (`serveCopy`); anything else under the prefix is a 404, as when
// the copies were registered twice. Registering them twice was 40% of the routes and a third of
// what `ready()` did.
//
// What reads the path the client sent (the journal, fault rules, 404/405/307 answers, URLs built
// from the prefix) reads `clientUrl(request)`; routes read their own parameters as before.

import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { DEPLOYED_AGENT_PREFIX } from './agent/paths.js'

/** The second prefixes: `api-host` (the control plane) and `deployed` (a deployment's agent server). */
export type Copy = 'api-host' | 'deployed'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The second prefixes this route is also served under (set by `serveCopy`). */
    copies?: readonly Copy[]
  }
}

/** How a request under a second prefix was routed. */
interface Routed {
  readonly copy: Copy
  /** The URL the client sent (after lenient decoding), prefix included. */
  readonly url: string
  /** The deployment a `deployed` request names. */
  readonly deploymentId?: string
}

const ROUTED = Symbol('hangar.routed')
type Marked = IncomingMessage & { [ROUTED]?: Routed }

const API_HOST = '/api-host/'
const DEPLOYMENTS = '/deployments/'
const AGENT = '/agent/'

/**
 * The URL Fastify routes `raw` by, given the URL it came with (decoded leniently): without a second
 * prefix, which is remembered on the request. Every request passes here.
 */
export function routeUrl(raw: IncomingMessage, url: string): string {
  if (url.startsWith(API_HOST)) {
    (raw as Marked)[ROUTED] = { copy: 'api-host', url }
    return url.slice(API_HOST.length - 1)
  }
  if (url.startsWith(DEPLOYMENTS)) {
    // /deployments/{deployment_id}/agent/...: the id is one non-empty segment.
    const slash = url.indexOf('/', DEPLOYMENTS.length)
    if (slash > DEPLOYMENTS.length && url.startsWith(AGENT, slash)) {
      const deploymentId = decodeURIComponent(url.slice(DEPLOYMENTS.length, slash))
      ;(raw as Marked)[ROUTED] = { copy: 'deployed', url, deploymentId }
      return url.slice(slash + AGENT.length - 1)
    }
  }
  return url
}

/** The URL the client sent, prefix included (`request.url` is the one routed). */
export function clientUrl(request: FastifyRequest): string {
  return (request.raw as Marked)[ROUTED]?.url ?? request.url
}

/** Declares every route of `scope` served again under `copies`. */
export function serveCopy(scope: FastifyInstance, ...copies: Copy[]): void {
  scope.addHook('onRoute', (route) => {
    route.config = { ...route.config, copies: [...(route.config?.copies ?? []), ...copies] }
  })
}

/** The URL patterns a route with `copies` answers under its second prefixes (for Starlette's 404/405/307). */
export function copyPatterns(url: string, copies: readonly Copy[] | undefined): string[] {
  return (copies ?? []).map((copy) => (copy === 'api-host' ? API_HOST.slice(0, -1) : DEPLOYED_AGENT_PREFIX) + url)
}

export interface CopiesOptions {
  /**
   * The scope of a deployment's agent server for a request naming `workspace` (throws when the
   * deployment is not found or not serving: `DeployedAgents.admit`).
   */
  admit(deploymentId: string, workspace: string | undefined): string
}

/**
 * Keeps a request under a second prefix to the routes that declare that copy (anything else is
 * Starlette's 404, as for a path no route serves), and gives a deployment's requests its agent
 * server (`agentScope`). Register after CORS and before any route plugin: it runs after the hooks
 * every request meets (journal, faults, CORS) and before the routes' own gates.
 */
export const copies = fp<CopiesOptions>(async (app, { admit }) => {
  app.addHook('onRequest', (request, reply, done) => {
    const routed = (request.raw as Marked)[ROUTED]
    // The CORS preflight route (`*`) answers every path, under a prefix too.
    if (routed === undefined || request.is404 || request.routeOptions.url === '*') return done()
    if (!request.routeOptions.config.copies?.includes(routed.copy)) return reply.callNotFound()
    if (routed.deploymentId !== undefined) {
      const workspace = request.headers['x-tenant-id']
      try {
        request.agentScope = admit(routed.deploymentId, typeof workspace === 'string' ? workspace : undefined)
      } catch (error) {
        return done(error as Error)
      }
    }
    done()
  })
}, { name: 'hangar-copies' })
