import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { scheduleProblems } from '../agent/cron-schedule.js'
import type { AgentCrons, CronPatch as CronPatchBody, CronRequest } from '../agent/crons.js'
import type { Config } from '../config.js'
import { ApiError } from '../errors.js'
import { publicBase } from '../public-url.js'
import { ThreadParams } from '../schemas/agent.js'
import { errorResponses } from '../schemas/common.js'
import { Cron, CronCount, CronCreate, CronList, CronParams, CronPatch, CronSearch, ThreadCronCreate } from '../schemas/crons.js'
import { namedFields } from '../validation/request.js'
import { sendPage } from './agent-lists.js'

export interface CronRoutesOptions {
  crons: AgentCrons
  config: Pick<Config, 'publicUrl'>
}

const tags = ['Crons']
const noContent = { 204: Type.Null({ description: 'Success' }) }

/** A schedule or timezone the scheduler could not read is refused as pydantic refuses a bad value. */
function checkSchedule(body: { schedule?: string; timezone?: string | null }) {
  const problems = scheduleProblems(body, ['body'])
  if (problems.length > 0) throw ApiError.validation(problems)
}

/** The fields the client named, with their validated values (a PATCH changes only those). */
function named<T extends object>(request: FastifyRequest, body: T): Partial<T> {
  const fields = namedFields(request)
  return Object.fromEntries(Object.entries(body).filter(([field]) => fields.has(field))) as Partial<T>
}

/**
 * The agent server's crons: runs on a schedule, on a thread or each on a new one. Each agent server
 * (the root one, each deployment's) has its own: the request's `agentScope`. They fire over hangar's
 * clock (see agent/cron-scheduler.ts).
 */
export const cronRoutes: FastifyPluginAsyncTypebox<CronRoutesOptions> = async (app, { crons, config }) => {
  const where = (request: FastifyRequest) => ({ scope: request.agentScope, publicBase: publicBase(request, config.publicUrl) })

  app.post('/threads/:thread_id/runs/crons', {
    schema: { tags, summary: 'Create Thread Cron', params: ThreadParams, body: ThreadCronCreate, response: { 200: Cron, ...errorResponses(404, 422) } },
  }, async (request) => {
    checkSchedule(request.body)
    return crons.create(where(request), request.params.thread_id, named(request, request.body) as CronRequest, request.agentUser)
  })

  app.post('/runs/crons', {
    schema: { tags, summary: 'Create Cron', body: CronCreate, response: { 200: Cron, ...errorResponses(404, 422) } },
  }, async (request) => {
    checkSchedule(request.body)
    const body = { ...named(request, request.body), on_run_completed: request.body.on_run_completed } as CronRequest
    return crons.create(where(request), null, body, request.agentUser)
  })

  app.post('/runs/crons/search', {
    schema: { tags, summary: 'Search Crons', body: CronSearch, response: { 200: CronList, ...errorResponses(422) } },
  }, async (request, reply) => {
    const q = request.body
    const offset = q.offset ?? 0
    const found = crons.search(request.agentScope, {
      filter: { assistantId: q.assistant_id, threadId: q.thread_id, enabled: q.enabled, metadata: q.metadata ?? undefined },
      sortBy: q.sort_by ?? 'created_at', order: q.sort_order ?? 'desc', limit: q.limit ?? 10, offset,
    }, request.agentUser)
    return sendPage(reply, { items: found.items, total: found.total, offset, select: q.select })
  })

  app.post('/runs/crons/count', {
    schema: { tags, summary: 'Count Crons', body: CronCount, response: { 200: Type.Integer({ title: 'Count' }), ...errorResponses(422) } },
  }, async (request) => {
    const q = request.body
    return crons.count(request.agentScope, { assistantId: q.assistant_id, threadId: q.thread_id, metadata: q.metadata ?? undefined }, request.agentUser)
  })

  app.get('/runs/crons/:cron_id', {
    schema: { tags, summary: 'Get Cron', params: CronParams, response: { 200: Cron, ...errorResponses(404, 422) } },
  }, async (request) => crons.get(request.agentScope, request.params.cron_id, request.agentUser))

  app.patch('/runs/crons/:cron_id', {
    schema: { tags, summary: 'Update Cron', params: CronParams, body: CronPatch, response: { 200: Cron, ...errorResponses(404, 422) } },
  }, async (request) => {
    checkSchedule(request.body)
    return crons.patch(request.agentScope, request.params.cron_id, named(request, request.body) as CronPatchBody, request.agentUser)
  })

  app.delete('/runs/crons/:cron_id', {
    schema: { tags, summary: 'Delete Cron', params: CronParams, response: { ...noContent, ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    crons.delete(request.agentScope, request.params.cron_id, request.agentUser)
    return reply.code(204).send(null)
  })
}
