// Build and deploy logs: the public revision logs route of the newer docs, and the routes
// `langgraph deploy` (with --verbose, after a failed build) and `langgraph deploy logs` call.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { DeploymentLogs } from '../domain/deployment-logs.js'
import type { LogQuery } from '../domain/log-pages.js'
import { errorResponses } from '../schemas/common.js'
import { LogsRequest, LogsResponse, RevisionLogsQuery } from '../schemas/deployment-logs.js'
import { DeploymentParams, RevisionParams } from '../schemas/deployments.js'

export interface DeploymentLogRoutesOptions {
  deploymentLogs: DeploymentLogs
}

const tags = ['Deployments (v2)']
const cliTags = ['Deployment logs (CLI)']
const errors = errorResponses(400, 404, 422)

/** The filters as the domain reads them, with the defaults of a body left out. */
const queryOf = (filters: NonNullable<LogsRequest> | RevisionLogsQuery, defaultLimit: number): LogQuery => ({
  order: filters.order ?? 'asc',
  limit: filters.limit ?? defaultLimit,
  offset: filters.offset ?? null,
  level: filters.level ?? null,
  query: filters.query ?? null,
  startTime: filters.start_time ?? null,
  endTime: filters.end_time ?? null,
  runId: filters.run_id ?? null,
})

export const deploymentLogRoutes: FastifyPluginAsyncTypebox<DeploymentLogRoutesOptions> = async (app, { deploymentLogs: logs }) => {
  app.get('/v2/deployments/:deployment_id/revisions/:revision_id/logs', {
    schema: {
      operationId: 'list_revision_logs_v2_deployments__deployment_id__revisions__revision_id__logs_get', tags, summary: 'List Revision Logs',
      description: 'List build or deploy logs for a specific revision of a deployment. Not in the published spec; newer docs describe it.',
      params: RevisionParams,
      querystring: RevisionLogsQuery,
      response: { 200: LogsResponse, ...errors },
    },
  }, async (request) => {
    const { deployment_id: id, revision_id: rid } = request.params
    return logs.ofRevision(request.tenantId, id, rid, request.query.type, queryOf(request.query, 50))
  })

  app.post('/v1/projects/:deployment_id/revisions/:revision_id/build_logs', {
    schema: {
      operationId: 'build_logs_v1_projects__deployment_id__revisions__revision_id__build_logs_post', tags: cliTags, summary: 'Revision Build Logs',
      description: 'A revision\'s build logs, as `langgraph deploy` reads them (the project id is the deployment id).',
      params: RevisionParams,
      body: LogsRequest,
      response: { 200: LogsResponse, ...errors },
    },
  }, async (request) => {
    const { deployment_id: id, revision_id: rid } = request.params
    return logs.ofRevision(request.tenantId, id, rid, 'build', queryOf(request.body ?? {}, 100))
  })

  app.post('/v1/projects/:deployment_id/revisions/:revision_id/deploy_logs', {
    schema: {
      operationId: 'deploy_logs_v1_projects__deployment_id__revisions__revision_id__deploy_logs_post', tags: cliTags, summary: 'Revision Deploy Logs',
      description: 'A revision\'s deploy logs, as `langgraph deploy logs --revision-id` reads them.',
      params: RevisionParams,
      body: LogsRequest,
      response: { 200: LogsResponse, ...errors },
    },
  }, async (request) => {
    const { deployment_id: id, revision_id: rid } = request.params
    return logs.ofRevision(request.tenantId, id, rid, 'deploy', queryOf(request.body ?? {}, 100))
  })

  app.post('/v1/projects/:deployment_id/deploy_logs', {
    schema: {
      operationId: 'deploy_logs_v1_projects__deployment_id__deploy_logs_post', tags: cliTags, summary: 'Deployment Deploy Logs',
      description: 'The deploy logs of every revision of a deployment, merged in time order, as `langgraph deploy logs` reads them.',
      params: DeploymentParams,
      body: LogsRequest,
      response: { 200: LogsResponse, ...errors },
    },
  }, async (request) => logs.ofDeployment(request.tenantId, request.params.deployment_id, 'deploy', queryOf(request.body ?? {}, 100)))
}
