import Fastify, { type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider, FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { controlPlaneAuth } from './auth.js'
import { Clock } from './clock.js'
import { defaultConfig, type Config } from './config.js'
import { installErrorHandling } from './errors.js'
import { deploymentRoutes } from './routes/deployments.js'
import { systemRoutes } from './routes/system.js'
import { closeDatabase, openDatabase } from './store/db.js'
import { DeploymentRepository } from './store/deployments.js'
import { installSerialization } from './serialization.js'
import { ticker } from './ticker.js'
import { installRequestValidation } from './validation/request.js'

export interface AppOptions {
  /** Settings; anything left out takes its default (see config.ts). */
  config?: Partial<Config>
  /** The clock everything that moves over time reads; tests pass `Clock.manual()`. */
  clock?: Clock
}

export type App = FastifyInstance & { readonly clock: Clock; readonly config: Config }

/** The control plane, served at the root and again under `/api-host` (self-hosted installs). */
const CONTROL_PLANE_PREFIXES = ['', '/api-host']

/** Builds hangar: this function is the route table. Call `ready()` or `listen()` on the result. */
export function buildApp(options: AppOptions = {}): App {
  const config: Config = { ...defaultConfig(), ...options.config }
  const clock = options.clock ?? Clock.system()
  const db = openDatabase(config.db)

  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Fastify's request serializer logs no headers; should one ever be logged, credentials are hidden.
      redact: ['req.headers["x-api-key"]', 'req.headers.authorization'],
    },
    bodyLimit: config.bodyLimit,
    exposeHeadRoutes: false,
    routerOptions: { maxParamLength: 2048 },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('clock', clock)
  app.decorate('config', config)
  app.decorateRequest('tenantId', '')
  app.addHook('onClose', async () => closeDatabase(db))

  // The one error exit, FastAPI-style request validation and shared serializers precede every route.
  installErrorHandling(app)
  installRequestValidation(app)
  installSerialization(app)

  const deployments = new DeploymentRepository(db, clock, config.revisionSpeed)
  app.register(ticker, { every: config.tickMs, tick: () => deployments.settle() })

  app.register(systemRoutes)
  const controlPlane: FastifyPluginAsyncTypebox = async (scope) => {
    scope.addHook('onRequest', controlPlaneAuth(config))
    scope.register(deploymentRoutes, { deployments })
  }
  for (const prefix of CONTROL_PLANE_PREFIXES) app.register(controlPlane, { prefix })

  return app as unknown as App
}
