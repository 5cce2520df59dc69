import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { DeployedAgents } from '../agent/deployed-agents.js'
import { DEPLOYED_AGENT_PREFIX } from '../agent/paths.js'
import type { Config } from '../config.js'
import { publicBase } from '../public-url.js'
import { ApiError } from '../errors.js'
import { checkNotDeleting, nameTaken, planCreate, planPatch } from '../domain/deployments.js'
import { errorResponses } from '../schemas/common.js'
import {
  BulkDeleteQuery,
  BulkDeleteResult,
  DeleteDeploymentQuery,
  Deployment,
  DeploymentCreateRequest,
  DeploymentListQuery,
  DeploymentParams,
  DeploymentPatchRequest,
  DeploymentsList,
  FreeCount,
  Revision,
  RevisionCreateRequest,
  RevisionListQuery,
  RevisionParams,
  RevisionsList,
} from '../schemas/deployments.js'
import { nextOffset } from '../store/db.js'
import type { DeploymentRepository } from '../store/deployments.js'
import type { ReadCache } from '../store/read-cache.js'
import { integrationsFor, type Fixtures } from '../fixtures.js'
import type { ListenerRepository } from '../store/listeners.js'

export interface DeploymentRoutesOptions {
  deployments: DeploymentRepository
  deployedAgents: DeployedAgents
  fixtures: Fixtures
  listeners: ListenerRepository
  /** HANGAR_PUBLIC_URL: the base of each deployment's `url` when set (else the request's own). */
  config: Pick<Config, 'publicUrl'>
  /** Keeps GET answers while the database is unchanged. */
  deploymentReads: ReadCache<string>
}

const tags = ['Deployments (v2)']
const deploymentNotFound = (id: string) => ApiError.notFound(`Deployment ID ${id} not found.`)
const revisionNotFound = (id: string) => ApiError.notFound(`Revision ID ${id} not found.`)
const csv = (value: string | null | undefined) =>
  value == null ? null : value.split(',').map((item) => item.trim()).filter((item) => item !== '')

/** Deployments (v2): every operation of the tag, plus revision create and interrupt from the newer docs. */
export const deploymentRoutes: FastifyPluginAsyncTypebox<DeploymentRoutesOptions> = async (app, options) => {
  const { deployments, deployedAgents, fixtures, listeners, deploymentReads: reads } = options
  const { publicUrl } = options.config
  /**
   * A deployment as responses show it: with the `url` of the agent server hangar serves for it, which
   * a github deployment also shows as its `custom_url` (the spec: "set automatically for github
   * source deployments (read only)"). What is stored stays null, so PATCH rules see the user's value.
   */
  const present = (request: FastifyRequest, deployment: Deployment, base = publicBase(request, publicUrl)): Deployment => {
    const url = `${base}${DEPLOYED_AGENT_PREFIX.replace(':deployment_id', deployment.id)}`
    const sourceConfig = deployment.source === 'github' && deployment.source_config.custom_url == null
      ? { ...deployment.source_config, custom_url: url }
      : deployment.source_config
    // Written out, not spread: a create's answer is made once per request (every field is required but `url`).
    return {
      name: deployment.name, source: deployment.source, source_config: sourceConfig, source_revision_config: deployment.source_revision_config,
      secrets: deployment.secrets, secret_references: deployment.secret_references, id: deployment.id, tenant_id: deployment.tenant_id,
      created_at: deployment.created_at, updated_at: deployment.updated_at, status: deployment.status,
      latest_revision_id: deployment.latest_revision_id, active_revision_id: deployment.active_revision_id,
      image_version: deployment.image_version, display_name: deployment.display_name,
      is_managed_deep_agent: deployment.is_managed_deep_agent, url,
    }
  }
  /**
   * A read answered from `reads` while nothing in the database changed since it was last
   * computed: the URL (path, prefix and query), workspace and public base determine the answer.
   * Due revision transitions are written first, so a cached answer is never behind the clock.
   * Its routes' handlers are not async and return nothing: the answer is sent before they return,
   * and an async handler's promise, adopting the reply (a thenable), cost ~7 µs of a ~70 µs GET.
   */
  const cached = (request: FastifyRequest, reply: FastifyReply, base: string, compute: () => unknown) => {
    deployments.settle()
    const body = reads.get(`${request.tenantId} ${base} ${request.url}`, () => reply.serialize(compute()) as string)
    return reply.type('application/json; charset=utf-8').send(body)
  }
  /** Why a revision lookup found nothing: its deployment or only the revision is missing. */
  const missingRevision = (tenantId: string, id: string, rid: string) =>
    deployments.get(tenantId, id) ? revisionNotFound(rid) : deploymentNotFound(id)

  app.get('/v2/deployments', {
    schema: {
      operationId: 'list_deployments_v2_deployments_get', tags, summary: 'List Deployments',
      querystring: DeploymentListQuery,
      response: { 200: DeploymentsList, ...errorResponses(422) },
    },
  }, (request, reply) => {
    const q = request.query
    const filter = {
      nameContains: q.name_contains,
      status: q.status,
      deploymentType: q.deployment_type,
      ids: csv(q.deployment_ids)?.map((id) => id.toLowerCase()),
      remoteReconciled: q.remote_reconciled,
      imageVersion: q.image_version,
      tagValueIds: csv(q.tag_value_ids),
    }
    const base = publicBase(request, publicUrl)
    cached(request, reply, base, () => {
      const resources = deployments.list(request.tenantId, filter, q.limit!, q.offset!)
      return { resources: resources.map((deployment) => present(request, deployment, base)), offset: nextOffset(q.offset!, resources.length) }
    })
  })

  app.post('/v2/deployments', {
    schema: {
      operationId: 'create_deployment_v2_deployments_post', tags, summary: 'Create Deployment',
      body: DeploymentCreateRequest,
      response: { 201: Deployment, ...errorResponses(400, 422) },
    },
  }, (request, reply) => {
    const body = request.body
    const plan = planCreate(body, {
      integration: (id) => [...integrationsFor(fixtures, 'github', request.tenantId), ...integrationsFor(fixtures, 'forge', request.tenantId)]
        .some((integration) => integration.id === id),
      listener: (id) => listeners.exists(request.tenantId, id),
    })
    const created = deployments.create({
      tenantId: request.tenantId,
      name: body.name,
      source: body.source,
      sourceConfig: plan.sourceConfig,
      secrets: body.secrets,
      secretReferences: body.secret_references ?? null,
      pendingConfig: plan.pendingConfig,
    }, plan.revision)
    if (!created) throw nameTaken(body.name)
    // Not async, and the reply not returned: Fastify would adopt it as a promise (a thenable), a cost on every create.
    reply.code(201).send(present(request, created))
  })

  app.delete('/v2/deployments', {
    schema: {
      operationId: 'delete_deployments_v2_deployments_delete', tags, summary: 'Delete Deployments',
      querystring: BulkDeleteQuery,
      response: { 200: BulkDeleteResult, 207: BulkDeleteResult, ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const { deleted, missing } = await deployedAgents.remove(request.tenantId, request.query.deployment_ids)
    if (deleted.length === 0) throw deploymentNotFound(missing[0])
    const failed = missing.map((id) => ({ deployment_id: id, detail: `Deployment ID ${id} not found.` }))
    return reply.code(failed.length > 0 ? 207 : 200).send({ deleted_ids: deleted, failed })
  })

  app.get('/v2/deployments/free-count', {
    schema: {
      operationId: 'get_free_deployment_count_v2_deployments_free_count_get', tags, summary: 'Get Free Deployment Count',
      description: 'How many of the workspace\'s deployments are of a free type (`dev_free`, `dev_free_zero`). Not in the published spec; newer docs describe it.',
      response: { 200: FreeCount },
    },
  }, async (request) => ({ count: deployments.freeCount(request.tenantId) }))

  app.get('/v2/deployments/:deployment_id', {
    schema: {
      operationId: 'get_deployment_v2_deployments__deployment_id__get', tags, summary: 'Get Deployment',
      params: DeploymentParams,
      response: { 200: Deployment, ...errorResponses(404, 422) },
    },
  }, (request, reply) => {
    const { deployment_id: id } = request.params
    cached(request, reply, publicBase(request, publicUrl), () => {
      const deployment = deployments.read(request.tenantId, id)
      if (!deployment) throw deploymentNotFound(id)
      return present(request, deployment)
    })
  })

  app.patch('/v2/deployments/:deployment_id', {
    schema: {
      operationId: 'patch_deployment_v2_deployments__deployment_id__patch', tags, summary: 'Patch Deployment',
      params: DeploymentParams,
      body: DeploymentPatchRequest,
      response: { 200: Deployment, ...errorResponses(400, 404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id } = request.params
    const current = deployments.get(request.tenantId, id)
    if (!current) throw deploymentNotFound(id)
    return present(request, deployments.update(request.tenantId, id, planPatch(current, request.body)))
  })

  app.delete('/v2/deployments/:deployment_id', {
    schema: {
      operationId: 'delete_deployment_v2_deployments__deployment_id__delete', tags, summary: 'Delete Deployment',
      params: DeploymentParams,
      querystring: DeleteDeploymentQuery,
      response: { 204: Type.Null({ description: 'Successful Response' }), ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const { deployment_id: id } = request.params
    if ((await deployedAgents.remove(request.tenantId, [id])).deleted.length === 0) throw deploymentNotFound(id)
    return reply.code(204).send(null)
  })

  app.get('/v2/deployments/:deployment_id/revisions', {
    schema: {
      operationId: 'list_revisions_v2_deployments__deployment_id__revisions_get', tags, summary: 'List Revisions',
      params: DeploymentParams,
      querystring: RevisionListQuery,
      response: { 200: RevisionsList, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id } = request.params
    const q = request.query
    const filter = { statuses: csv(q.status), remoteReconciled: q.remote_reconciled ?? null }
    const resources = deployments.listRevisions(request.tenantId, id, filter, q.limit!, q.offset!)
    if (!resources) throw deploymentNotFound(id)
    return { resources, offset: nextOffset(q.offset!, resources.length) }
  })

  app.post('/v2/deployments/:deployment_id/revisions', {
    schema: {
      operationId: 'create_revision_v2_deployments__deployment_id__revisions_post', tags, summary: 'Create Revision',
      description: 'Always creates a revision: from the deployment\'s current configuration with the body\'s changes applied as a PATCH applies them (a `resource_spec` replaces the whole object; an empty `secrets` list changes nothing). Not in the published spec; newer docs describe it.',
      params: DeploymentParams,
      body: RevisionCreateRequest,
      response: { 201: Revision, ...errorResponses(400, 404, 422) },
    },
  }, async (request, reply) => {
    const { deployment_id: id } = request.params
    const current = deployments.get(request.tenantId, id)
    if (!current) throw deploymentNotFound(id)
    const updated = deployments.update(request.tenantId, id, planPatch(current, request.body ?? {}, { always: true }))
    return reply.code(201).send(deployments.revision(request.tenantId, id, updated.latest_revision_id!)!)
  })

  app.get('/v2/deployments/:deployment_id/revisions/:revision_id', {
    schema: {
      operationId: 'get_revision_v2_deployments__deployment_id__revisions__revision_id__get', tags, summary: 'Get Revision',
      params: RevisionParams,
      response: { 200: Revision, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id, revision_id: rid } = request.params
    const revision = deployments.readRevision(request.tenantId, id, rid)
    if (!revision) throw missingRevision(request.tenantId, id, rid)
    return revision
  })

  app.post('/v2/deployments/:deployment_id/revisions/:revision_id/redeploy', {
    schema: {
      operationId: 'redeploy_revision_v2_deployments__deployment_id__revisions__revision_id__redeploy_post', tags,
      summary: 'Redeploy Revision',
      params: RevisionParams,
      response: { 200: Deployment, ...errorResponses(400, 404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id, revision_id: rid } = request.params
    const revision = deployments.revision(request.tenantId, id, rid)
    if (!revision) throw missingRevision(request.tenantId, id, rid)
    checkNotDeleting(deployments.get(request.tenantId, id)!)
    deployments.addRevision(request.tenantId, id, { source: revision.source, config: revision.source_revision_config })
    return present(request, deployments.get(request.tenantId, id)!)
  })

  app.post('/v2/deployments/:deployment_id/revisions/:revision_id/interrupt', {
    schema: {
      operationId: 'interrupt_revision_v2_deployments__deployment_id__revisions__revision_id__interrupt_post', tags,
      summary: 'Interrupt Revision',
      description: 'Stop an in-progress revision (it becomes INTERRUPTED). Not in the published spec; newer docs describe it.',
      params: RevisionParams,
      response: { 200: Revision, ...errorResponses(400, 404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id, revision_id: rid } = request.params
    const result = deployments.interruptRevision(request.tenantId, id, rid)
    if (!result) throw missingRevision(request.tenantId, id, rid)
    if ('finished' in result) {
      throw ApiError.badRequest(`Revision ID ${rid} is already ${result.finished} and cannot be interrupted.`)
    }
    return result
  })
}
