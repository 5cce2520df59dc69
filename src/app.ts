// The route table: what hangar serves, in order, over the services built in services.ts.

import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import websocket from '@fastify/websocket'
import { Socket } from 'node:net'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { copies, routeUrl, serveCopy } from './copies.js'
import { cors } from './cors.js'
import { lazyRequestLogger } from './logging.js'
import type { ThreadLog } from './agent/thread-log.js'
import type { WebhookDelivery } from './agent/webhook-delivery.js'
import type { EventBus } from './admin/bus.js'
import type { FaultInjector } from './admin/faults.js'
import { installFaults } from './admin/faults.js'
import { installJournal, isHangarOwnPath, type RequestJournal } from './admin/journal.js'
import { agentServerAuth, authorizeByEvent, ownThreadsOnly } from './agent-auth.js'
import { adminAuth, adminSecurity, agentServerSecurity, controlPlaneAuth, controlPlaneSecurity, securitySchemes } from './auth.js'
import { Clock } from './clock.js'
import { checkConfig, defaultConfig, type Config } from './config.js'
import { installErrorHandler } from './errors.js'
import { clientErrorHandler, frameworkErrors, installStarletteRouting, lenientUrl, MAX_PARAM_LENGTH } from './routing.js'
import { installSerialization } from './serialization.js'
import { buildServices, type Services } from './services.js'
import { ticker } from './ticker.js'
import { installRequestValidation } from './validation/request.js'
import { a2aRoutes } from './routes/a2a.js'
import { adminEventRoutes } from './routes/admin-events.js'
import { adminFaultRoutes } from './routes/admin-faults.js'
import { adminRequestRoutes } from './routes/admin-requests.js'
import { adminUploadRoutes } from './routes/admin-uploads.js'
import { adminRoutes } from './routes/admin.js'
import { agentMetaRoutes } from './routes/agent-meta.js'
import { assistantRoutes } from './routes/assistants.js'
import { authFlowRoutes } from './routes/auth-flow.js'
import { authProviderRoutes } from './routes/auth-providers.js'
import { authTokenRoutes } from './routes/auth-tokens.js'
import { cronRoutes } from './routes/crons.js'
import { deploymentLogRoutes } from './routes/deployment-logs.js'
import { deploymentSourceRoutes } from './routes/deployment-sources.js'
import { deploymentRoutes } from './routes/deployments.js'
import { feedbackTokenRoutes, tracingRoutes } from './routes/feedback.js'
import { inspectorRoutes } from './routes/inspector.js'
import { integrationRoutes } from './routes/integrations.js'
import { listenerRoutes } from './routes/listeners.js'
import { mcpRoutes } from './routes/mcp.js'
import { oauthCallbackRoutes, oauthConsentRoutes } from './routes/oauth-browser.js'
import { declareSecurity, leaveOutOfDocs, openapiDocument, openapiRoute } from './routes/openapi.js'
import { protocolRoutes } from './routes/protocol.js'
import { runRoutes } from './routes/runs.js'
import { signedUploadRoutes } from './routes/signed-uploads.js'
import { storeRoutes } from './routes/store.js'
import { runTraceRoutes, runV2Routes, tracingInfoRoutes } from './routes/run-traces.js'
import { systemRoutes } from './routes/system.js'
import { threadStreamRoutes } from './routes/thread-stream.js'
import { threadRoutes } from './routes/threads.js'

export interface AppOptions {
  /** Settings; anything left out takes its default (see config.ts). */
  config?: Partial<Config>
  /** The clock everything that moves over time reads; tests pass `Clock.manual()`. */
  clock?: Clock
}

/** What an in-process test can read or steer directly (the same objects the admin API serves). */
export interface EmulatorParts {
  readonly journal: RequestJournal
  readonly faults: FaultInjector
  /** What changes inside hangar, as it happens (what `GET /_hangar/events` streams). */
  readonly bus: EventBus
  /** The threads' session-protocol logs (their `followers` count the open streams and sockets). */
  readonly threadLog: ThreadLog
  /** Runs' webhooks being delivered (`pending` counts them). */
  readonly webhooks: WebhookDelivery
}

export type App = FastifyInstance & { readonly clock: Clock; readonly config: Config; readonly emulator: EmulatorParts }

/** The largest command frame a protocol WebSocket accepts (bigger ones close the socket with 1009). */
const MAX_SOCKET_FRAME = 1024 * 1024
/** The tracing service's feedback API, under /api/v1 and (for its SDKs) without it. */
const TRACING_PREFIXES = ['/api/v1', '']

/** Builds hangar. Call `ready()` or `listen()` on the result. */
export function buildApp(options: AppOptions = {}): App {
  checkConfig(options.config)
  const services = buildServices({ ...defaultConfig(), ...options.config }, options.clock ?? Clock.system())
  const { config, faults, journal, bus, clock } = services
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: config.bodyLimit,
    exposeHeadRoutes: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    rewriteUrl: (raw) => routeUrl(raw, lenientUrl(raw.url ?? '/')),
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()
  nameOwnPlugins(app)
  app.decorate('clock', clock)
  app.decorate('config', config)
  app.decorate('emulator', { journal, faults, bus, threadLog: services.threadLog, webhooks: services.webhooks } satisfies EmulatorParts)
  app.decorateRequest('tenantId', '')
  app.decorateRequest('userId', '')
  app.decorateRequest('agentScope', '')
  app.decorateRequest('agentUser', null)
  app.addHook('preClose', () => services.stateful.shutdown())
  app.addHook('onClose', async () => services.stateful.close())

  // The one error exit, Starlette's routing, FastAPI-style validation and shared serializers precede every route.
  installErrorHandler(app)
  installStarletteRouting(app)
  installRequestValidation(app)
  installSerialization(app)
  // An answer leaves once what its request wrote is committed (writes commit in groups: store/group-commit.ts).
  app.addHook('onSend', (_request, _reply, payload, done) => {
    const committed = services.durable()
    if (!committed) return done(null, payload)
    committed.then(() => done(null, payload), done)
  })
  // A write read from a socket commits with the others read in the same turn of the event loop: one
  // commit for them all. Not for app.inject(), whose requests come from no I/O callback, nor for
  // hangar's own paths: a clock move's run steps send their first events at once, as a timer's do.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method !== 'GET' && request.raw.socket instanceof Socket && !isHangarOwnPath(request.url)) services.commitAtTurnEnd()
    done()
  })
  // The journal and faults see every request to the emulated services, never hangar's own paths.
  installJournal(app, journal, clock, { exclude: isHangarOwnPath })
  installFaults(app, faults, clock, { exclude: isHangarOwnPath })
  // Browsers may call hangar (token URLs, streams) from the configured origins and read the headers clients use.
  if (!config.corsOrigins.includes('none')) app.register(cors, { origins: config.corsOrigins })
  // The control plane under /api-host and each deployment's agent server under its prefix, routed as their root paths.
  app.register(copies, { admit: (id, workspace) => services.deployedAgents.admit(id, workspace) })
  // The session protocol's WebSocket (a thread's events and commands on one socket).
  app.register(websocket, { options: { maxPayload: MAX_SOCKET_FRAME } })
  // While the inspector (or any client of the event stream) follows, every revision step is written as it happens.
  app.register(ticker, { every: config.tickMs, tick: () => services.deployments.tick(services.bus.subscribers > 0) })

  app.register(openapiDocument, { securitySchemes: securitySchemes(config) })
  app.register(async (scope) => {
    serveCopy(scope, 'deployed')
    await systemRoutes(scope, {})
  })
  app.register(openapiRoute)

  // Route modules are called into their scope (`await deploymentRoutes(scope, services)`) rather than
  // registered as plugins of their own, which cost Fastify a scope each at every start; the few that
  // add hooks, a parser or an error handler of their own (listeners, the auth flow, signed uploads,
  // admin events) stay registered, so those stay theirs.
  // The control plane and the Auth Service; a workspace is seeded the first time a request names it.
  const onWorkspace = (tenantId: string) => services.seeder.ensure(tenantId)
  const controlPlane: FastifyPluginAsyncTypebox = async (scope) => {
    scope.addHook('onRequest', controlPlaneAuth(config, { callers: services.callers, onWorkspace }))
    declareSecurity(scope, controlPlaneSecurity(config))
    await deploymentRoutes(scope, services)
    await deploymentSourceRoutes(scope, services)
    await deploymentLogRoutes(scope, services)
    await scope.register(listenerRoutes, services)
    await integrationRoutes(scope, services)
  }
  // The Auth Service admits an API key, a Bearer token or a workspace header alone (its spec's security).
  const authService: FastifyPluginAsyncTypebox = async (scope) => {
    scope.addHook('onRequest', controlPlaneAuth(config, { callers: services.callers, tenantHeaderSuffices: true, onWorkspace }))
    declareSecurity(scope, controlPlaneSecurity(config, { tenantHeaderSuffices: true }))
    await authProviderRoutes(scope, services)
    await scope.register(authFlowRoutes, services)
    await authTokenRoutes(scope, services)
  }
  // Served at the root and again under /api-host (self-hosted installs), as one set of routes (copies.ts).
  app.register(async (scope) => {
    serveCopy(scope, 'api-host')
    await scope.register(controlPlane)
    await scope.register(authService)
    // Where a browser lands from the provider: no credentials, the OAuth state authorizes.
    await oauthCallbackRoutes(scope, services)
    // Where a signed upload URL points (Cloud Storage's part): the URL itself authorizes.
    scope.register(signedUploadRoutes, services)
  })
  app.register(oauthConsentRoutes, services)

  // The agent server, at the root paths where a frontend developer points the SDK, and again as
  // each deployment's own once a revision of it is DEPLOYED (its response's `url`, copies.ts).
  // Which data a request reaches is its `agentScope`: '' at the root, the deployment's under its prefix.
  app.register(async (scope) => {
    serveCopy(scope, 'deployed')
    await agentMetaRoutes(scope, services)
    scope.register(async (gated) => {
      gated.addHook('onRequest', agentServerAuth(config, services.agentUsers))
      // A user's permissions first (403), then its own threads only (404): checked only when there are users.
      const users = config.agentAuth === 'users' && config.auth !== 'off'
      authorizeByEvent(gated, users)
      if (users) gated.addHook('preHandler', ownThreadsOnly(services.threads))
      declareSecurity(gated, agentServerSecurity(config))
      gated.addHook('onRequest', async (request) => services.deployedAgents.seed(request.agentScope))
      await assistantRoutes(gated, services)
      await threadRoutes(gated, services)
      await runRoutes(gated, services)
      await protocolRoutes(gated, services)
      await threadStreamRoutes(gated, services)
      await storeRoutes(gated, services)
      await cronRoutes(gated, services)
      await a2aRoutes(gated, services)
      await mcpRoutes(gated, services)
    })
  })

  // The emulator's own control plane, and the inspector page (static files holding no data, so
  // outside the admin token's gate; it reads through the APIs).
  app.register(async (scope) => {
    scope.addHook('onRequest', adminAuth(config))
    declareSecurity(scope, adminSecurity(config))
    await adminRoutes(scope, services)
    await adminRequestRoutes(scope, services)
    await adminUploadRoutes(scope, services)
    await adminFaultRoutes(scope, services)
    await scope.register(adminEventRoutes, services)
  }, { prefix: '/_hangar' })
  app.register(inspectorRoutes, { prefix: '/_hangar/ui' })

  // The tracing service: feedback on runs (token submissions need no credentials), the agent
  // server's runs as traces and their projects. Its /info only under /api/v1: the root one is the
  // agent server's.
  for (const prefix of TRACING_PREFIXES) {
    app.register(async (copy) => {
      if (prefix === '') leaveOutOfDocs(copy)
      else await tracingInfoRoutes(copy, {})
      await feedbackTokenRoutes(copy, services)
      copy.register(async (scope) => {
        scope.addHook('onRequest', controlPlaneAuth(config, { callers: services.callers }))
        declareSecurity(scope, controlPlaneSecurity(config))
        await tracingRoutes(scope, services)
        await runTraceRoutes(scope, services)
      })
    }, { prefix })
  }
  // The v2 runs API, where the clients' generated half calls it (their endpoint without /api/v1).
  app.register(async (scope) => {
    scope.addHook('onRequest', controlPlaneAuth(config, { callers: services.callers }))
    declareSecurity(scope, controlPlaneSecurity(config))
    await runV2Routes(scope, services)
  })

  return app as unknown as App
}

/**
 * Gives each plugin hangar registers a display name (its function's name) before Fastify looks for
 * one: without it, Fastify searches every loaded CommonJS module for the function, twice per
 * plugin (a list of all their paths each time: ~0.5 MB and ~2 ms per app in a test suite), and
 * hangar's plugins are ES modules it never finds there. Plugins that already carry a name
 * (`fastify-plugin`'s) keep it.
 */
function nameOwnPlugins(app: FastifyInstance): void {
  const register = app.register
  app.register = function (this: FastifyInstance, plugin: unknown, options?: unknown) {
    if (typeof plugin === 'function' && (plugin as Named)[DISPLAY_NAME] === undefined) {
      (plugin as Named)[DISPLAY_NAME] = plugin.name || 'hangar scope'
    }
    return (register as (this: FastifyInstance, plugin: unknown, options?: unknown) => unknown).call(this, plugin, options)
  } as FastifyInstance['register']
}

const DISPLAY_NAME = Symbol.for('fastify.display-name')
type Named = { [DISPLAY_NAME]?: string }

export type { Services }
