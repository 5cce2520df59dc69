import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { visibleSettings, type Config } from '../config.js'
import { VERSION } from '../version.js'

export interface MetaOptions {
  config: Config
  /** When this hangar started (real time, not the emulated clock), for `uptime_s`. */
  startedAt: number
}

const Info = Type.Object({
  version: Type.String(),
  flags: Type.Object({ assistants: Type.Boolean(), crons: Type.Boolean(), langsmith: Type.Boolean(), langsmith_tracing_replicas: Type.Boolean() }),
  hangar: Type.Object({
    version: Type.String(),
    started_at: Type.String({ format: 'date-time' }),
    uptime_s: Type.Number({ description: 'Seconds since start, in real time (the emulated clock does not move it).' }),
    settings: Type.Record(Type.String(), Type.Unknown(), { description: 'Effective settings by environment variable; API keys and the admin token show as <hidden>.' }),
  }),
}, { title: 'Info' })

/**
 * `GET /info`: what the server is and can do (chat UIs call it to check they can reach it), and,
 * under `hangar`, this emulator's version, uptime and effective settings.
 */
export const agentMetaRoutes: FastifyPluginAsyncTypebox<MetaOptions> = async (app, { config, startedAt }) => {
  app.get('/info', {
    schema: { tags: ['System'], summary: 'Server Information', response: { 200: Info } },
  }, async () => ({
    version: VERSION,
    flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: true },
    hangar: {
      version: VERSION,
      started_at: new Date(startedAt).toISOString(),
      uptime_s: Math.round((Date.now() - startedAt) / 10) / 100,
      settings: visibleSettings(config),
    },
  }))
}
