import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { createEngine } from './agent/engine.js'
import { DEPLOYED_AGENT_PREFIX } from './agent/paths.js'
import { RunManager } from './agent/runs.js'
import { seedSystemAssistants } from './agent/system-assistants.js'
import { adminAuth, adminSecurity, agentServerAuth, agentServerSecurity, controlPlaneAuth, controlPlaneSecurity, securitySchemes } from './auth.js'
import { EventBus } from './admin/bus.js'
import { EmulatorControls } from './admin/controls.js'
import { FaultInjector, installFaults } from './admin/faults.js'
import { installJournal, isHangarOwnPath, RequestJournal } from './admin/journal.js'
import { adminEventRoutes } from './routes/admin-events.js'
import { adminFaultRoutes } from './routes/admin-faults.js'
import { adminRequestRoutes } from './routes/admin-requests.js'
import { adminRoutes } from './routes/admin.js'
import { Clock } from './clock.js'
import { defaultConfig, type Config } from './config.js'
import { ApiError, clientErrorHandler, frameworkErrors, installErrorHandling, lenientUrl, MAX_PARAM_LENGTH } from './errors.js'
import { loadFixtures, WorkspaceSeeder } from './fixtures.js'
import { agentMetaRoutes } from './routes/agent-meta.js'
import { assistantRoutes } from './routes/assistants.js'
import { runRoutes } from './routes/runs.js'
import { threadRoutes } from './routes/threads.js'
import { AssistantRepository } from './store/assistants.js'
import { RunRepository } from './store/runs.js'
import { ThreadRepository } from './store/threads.js'
import { authFlowRoutes } from './routes/auth-flow.js'
import { authProviderRoutes } from './routes/auth-providers.js'
import { authTokenRoutes } from './routes/auth-tokens.js'
import { deploymentRoutes } from './routes/deployments.js'
import { ReadCache } from './store/read-cache.js'
import { inspectorRoutes } from './routes/inspector.js'
import { integrationRoutes } from './routes/integrations.js'
import { listenerRoutes } from './routes/listeners.js'
import { oauthCallbackRoutes, oauthConsentRoutes } from './routes/oauth-browser.js'
import { declareSecurity, leaveOutOfDocs, openapiDocument, openapiRoute } from './routes/openapi.js'
import { systemRoutes } from './routes/system.js'
import { installSerialization } from './serialization.js'
import { closeDatabase, openDatabase } from './store/db.js'
import { DeploymentRepository } from './store/deployments.js'
import { ListenerRepository } from './store/listeners.js'
import { OAuthFlows } from './store/oauth-flows.js'
import { OAuthProviderRepository } from './store/oauth-providers.js'
import { OAuthTokenRepository } from './store/oauth-tokens.js'
import { WorkspaceRepository } from './store/workspaces.js'
import { OpenStreams } from './sse/writer.js'
import { ticker } from './ticker.js'
import { installRequestValidation } from './validation/request.js'
import { feedbackTokenRoutes, issueRunFeedback, tracingRoutes } from './routes/feedback.js'
import { FeedbackRepository } from './store/feedback.js'

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
}

export type App = FastifyInstance & { readonly clock: Clock; readonly config: Config; readonly emulator: EmulatorParts }

/** How long (real time) shutdown lets open event streams finish before cutting them. */
const STREAM_CLOSE_GRACE_MS = 1000

/** The control plane, served at the root and again under `/api-host` (self-hosted installs). */
const CONTROL_PLANE_PREFIXES = ['', '/api-host']

/** Log lines go out as JSON (for machines), or pretty-printed for a person at a terminal. */
function logStream(format: Config['logFormat']): NodeJS.WritableStream | undefined {
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true)
  if (!pretty) return undefined
  // Loaded only when used: it is not needed (nor its start-up cost paid) for JSON logs.
  const build = createRequire(import.meta.url)('pino-pretty') as (options: object) => NodeJS.WritableStream
  return build({ sync: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' })
}

/** Builds hangar: this function is the route table. Call `ready()` or `listen()` on the result. */
export function buildApp(options: AppOptions = {}): App {
  const startedAt = Date.now()
  const config: Config = { ...defaultConfig(), ...options.config }
  const clock = options.clock ?? Clock.system()
  const db = openDatabase(config.db)

  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Fastify's request serializer logs no headers; should one ever be logged, credentials are hidden.
      redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-hangar-admin-token"]', 'req.headers.cookie'],
      stream: logStream(config.logFormat),
    },
    bodyLimit: config.bodyLimit,
    exposeHeadRoutes: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    rewriteUrl: (request) => lenientUrl(request.url ?? '/'),
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('clock', clock)
  app.decorate('config', config)
  app.decorateRequest('tenantId', '')
  app.decorateRequest('userId', '')
  app.decorateRequest('agentScope', '')
  app.addHook('onClose', async () => closeDatabase(db))

  // The one error exit, FastAPI-style request validation and shared serializers precede every route.
  installErrorHandling(app)
  installRequestValidation(app)
  installSerialization(app)
  // The request journal and faults see every request to the emulated services, never hangar's own paths.
  // What changes (requests recorded, runs, revisions, the clock, faults, resets) is published on the bus.
  const bus = new EventBus(clock)
  const journal = new RequestJournal(config.journalSize, (entry) => bus.publish('request', entry))
  const faults = new FaultInjector(clock, (change) => bus.publish('faults', change))
  installJournal(app, journal, clock, { exclude: isHangarOwnPath })
  installFaults(app, faults, clock, { exclude: isHangarOwnPath })
  app.decorate('emulator', { journal, faults, bus } satisfies EmulatorParts)
  // Browsers may call hangar (token URLs, streams) from the configured origins and read the headers clients use.
  if (!config.corsOrigins.includes('none')) {
    app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      allowedHeaders: ['content-type', 'x-api-key', 'x-tenant-id', 'authorization', 'last-event-id', 'x-hangar-admin-token'],
      exposedHeaders: ['content-location', 'location', 'x-pagination-total', 'x-pagination-next'],
    })
  }

  const fixtures = loadFixtures(config.fixtures)
  const workspaces = new WorkspaceRepository(db)
  const providers = new OAuthProviderRepository(db, clock)
  const seeder = new WorkspaceSeeder(db, fixtures, { workspaces, providers }, clock, config.selfHostedEnterprise)
  const deployments = new DeploymentRepository(db, clock, config.revisionSpeed, (change) => bus.publish('deployments', change))
  const listeners = new ListenerRepository(db, clock)
  const tokens = new OAuthTokenRepository(db, clock)
  const flows = new OAuthFlows(db, clock, providers, tokens)
  app.register(ticker, { every: config.tickMs, tick: () => deployments.settle() })

  app.register(openapiDocument, { securitySchemes: securitySchemes(config) })
  app.register(systemRoutes)
  app.register(openapiRoute)
  const onWorkspace = (tenantId: string) => seeder.ensure(tenantId)
  const controlPlane: FastifyPluginAsyncTypebox = async (scope) => {
    scope.addHook('onRequest', controlPlaneAuth(config, { onWorkspace }))
    declareSecurity(scope, controlPlaneSecurity(config))
    scope.register(deploymentRoutes, { deployments, fixtures, listeners, publicUrl: config.publicUrl, reads: new ReadCache<string>(db) })
    scope.register(listenerRoutes, { listeners, workspaces })
    scope.register(integrationRoutes, { fixtures })
  }
  // The Auth Service admits an API key, a Bearer token or a workspace header alone (its spec's security).
  const authService: FastifyPluginAsyncTypebox = async (scope) => {
    scope.addHook('onRequest', controlPlaneAuth(config, { tenantHeaderSuffices: true, onWorkspace }))
    declareSecurity(scope, controlPlaneSecurity(config, { tenantHeaderSuffices: true }))
    scope.register(authProviderRoutes, { providers })
    scope.register(authFlowRoutes, { providers, tokens, flows, clock, publicUrl: config.publicUrl })
    scope.register(authTokenRoutes, { tokens })
  }
  for (const prefix of CONTROL_PLANE_PREFIXES) {
    app.register(async (copy) => {
      if (prefix !== '') leaveOutOfDocs(copy)
      copy.register(controlPlane)
      copy.register(authService)
      // Where a browser lands from the provider: no credentials, the OAuth state authorizes.
      copy.register(oauthCallbackRoutes, { flows })
    }, { prefix })
  }
  app.register(oauthConsentRoutes, { flows })

  // The agent server: assistants, threads and runs of the scripted graphs, at the root paths.
  const engine = createEngine(join(config.fixtures, 'graphs'), { clock })
  const assistants = new AssistantRepository(db, clock)
  const threads = new ThreadRepository(db, clock)
  const runs = new RunRepository(db, clock)
  // Deployments' agent servers get their graphs' system assistants on first use (and again after a reset).
  const seededScopes = new Set<string>()
  // What boot seeds, and reset seeds again: the fixture workspaces and the graphs' assistants.
  const seed = () => {
    seeder.seedAll(config.defaultTenant)
    seedSystemAssistants(assistants, engine, '')
  }
  seed()
  const feedback = new FeedbackRepository(db, clock)
  const transaction = <T>(fn: () => T): T => db.transaction(fn)()
  const manager = new RunManager({
    runs, threads, engine, clock, endEvent: config.sseEndEvent, log: app.log, transaction,
    onSuccess: (run, base) => issueRunFeedback(feedback, clock, config.feedbackTtl, run, base),
    observe: (change) => bus.publish('run', change),
  })
  manager.recover()
  // Shutdown: runs stop (ending interrupted), their streams write their last events and end; a
  // stream whose client stopped reading is cut after a second rather than holding the close.
  const openStreams = new OpenStreams()
  app.addHook('preClose', async () => {
    await manager.stopAll()
    await openStreams.close(STREAM_CLOSE_GRACE_MS)
  })
  // One agent server's routes; which data they serve is the request's `agentScope`.
  const agentServer: FastifyPluginAsyncTypebox = async (scope) => {
    scope.register(agentMetaRoutes, { config, startedAt })
    scope.register(async (gated) => {
      gated.addHook('onRequest', agentServerAuth(config))
      declareSecurity(gated, agentServerSecurity(config))
      // A deployment's agent server gets its graphs' system assistants on its first admitted request.
      gated.addHook('onRequest', async (request) => {
        const id = request.agentScope
        if (id === '' || seededScopes.has(id)) return
        seedSystemAssistants(assistants, engine, id)
        seededScopes.add(id)
      })
      gated.register(assistantRoutes, { engine, assistants })
      gated.register(threadRoutes, { engine, threads, runs, manager, transaction })
      gated.register(runRoutes, {
        engine, assistants, threads, runs, manager, clock, transaction, openStreams,
        heartbeatMs: config.heartbeatMs, publicUrl: config.publicUrl, dropAfter: (request) => faults.dropAfter(request),
      })
    })
  }
  // The agent server at the root paths, where a frontend developer points the SDK.
  app.register(agentServer)
  // And the one each deployment serves once a revision of it is DEPLOYED: its response's `url`.
  app.register(async (scope) => {
    leaveOutOfDocs(scope)
    scope.addHook('onRequest', async (request) => {
      const id = (request.params as { deployment_id: string }).deployment_id.toLowerCase()
      const deployment = deployments.serving(id)
      // A request that names a workspace sees only that workspace's deployments, as on the control plane.
      const workspace = request.headers['x-tenant-id']
      const foreign = typeof workspace === 'string' && workspace.trim() !== '' && workspace.trim().toLowerCase() !== deployment?.tenant_id
      if (!deployment || foreign) throw ApiError.notFound(`Deployment ID ${id} not found.`)
      if (deployment.status !== 'READY') {
        throw new ApiError(503, `Deployment ID ${id} is not serving yet: no revision of it is DEPLOYED.`)
      }
      request.agentScope = id
    })
    scope.register(systemRoutes)
    await scope.register(agentServer)
  }, { prefix: DEPLOYED_AGENT_PREFIX })

  // The emulator's own control plane.
  const controls = new EmulatorControls({ db, manager, seed, onFullReset: () => { faults.clear(); journal.clear() }, forget: (tenantId) => {
    seeder.forget(tenantId)
    deployments.invalidate()
    if (tenantId === undefined) seededScopes.clear()
  }, onChange: (change) => bus.publish('state', change) })
  app.register(async (scope) => {
    scope.addHook('onRequest', adminAuth(config))
    declareSecurity(scope, adminSecurity(config))
    await scope.register(adminRoutes, { clock, controls, deployments, workspaces, fixtures, defaultTenant: config.defaultTenant })
    await scope.register(adminRequestRoutes, { journal })
    await scope.register(adminFaultRoutes, { faults })
    await scope.register(adminEventRoutes, { bus, clock })
  }, { prefix: '/_hangar' })
  // The inspector page: static files holding no data, so outside the admin token's gate; it reads through the APIs above.
  app.register(inspectorRoutes, { prefix: '/_hangar/ui' })

  // Feedback on runs, as the tracing service serves it, at /api/v1 and (for its SDKs) without it.
  const feedbackOptions = {
    feedback, runs, threads, clock, ttlSeconds: config.feedbackTtl, publicUrl: config.publicUrl,
    workspaceOf: (deploymentId: string) => deployments.tenantOf(deploymentId),
  }
  for (const prefix of ['/api/v1', '']) {
    app.register(async (copy) => {
      if (prefix === '') leaveOutOfDocs(copy)
      copy.register(feedbackTokenRoutes, feedbackOptions)
      copy.register(async (scope) => {
        scope.addHook('onRequest', controlPlaneAuth(config))
        declareSecurity(scope, controlPlaneSecurity(config))
        await scope.register(tracingRoutes, feedbackOptions)
      })
    }, { prefix })
  }

  return app as unknown as App
}
