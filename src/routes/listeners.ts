import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../errors.js'
import { errorResponses } from '../schemas/common.js'
import {
  Listener,
  ListenerCreateRequest,
  ListenerListQuery,
  ListenerParams,
  ListenerPatchRequest,
  ListenersList,
} from '../schemas/listeners.js'
import { nextOffset } from '../store/db.js'
import type { ListenerRepository } from '../store/listeners.js'
import type { WorkspaceRepository } from '../store/workspaces.js'

export interface ListenerRoutesOptions {
  listeners: ListenerRepository
  workspaces: WorkspaceRepository
}

const tags = ['Listeners (v2)']
const listenerNotFound = (id: string) => ApiError.notFound(`Listener ID ${id} not found.`)
const notEnterprise = (workspaceId: string) => ApiError.forbidden(
  `Listeners cannot be created for LangSmith workspace ID '${workspaceId}'. ` +
  'Creating listeners is only allowed for LangSmith organizations with self-hosted enterprise plans.',
)
const computeIdTaken = (workspaceId: string, computeId: string) =>
  ApiError.conflict(`Listener for LangSmith workspace ID '${workspaceId}' and compute ID '${computeId}' already exists.`)

/** Listeners (v2): every operation of the tag, only for workspaces on a self-hosted enterprise plan. */
export const listenerRoutes: FastifyPluginAsyncTypebox<ListenerRoutesOptions> = async (app, { listeners, workspaces }) => {
  // Every route answers 403 outside a self-hosted enterprise workspace, after validation (a 422 comes first).
  app.addHook('preHandler', async (request) => {
    if (workspaces.selfHostedEnterprise(request.tenantId) !== true) throw notEnterprise(request.tenantId)
  })

  app.get('/v2/listeners', {
    schema: {
      operationId: 'list_listeners_v2_listeners_get', tags, summary: 'List Listeners',
      querystring: ListenerListQuery,
      response: { 200: ListenersList, ...errorResponses(403, 422) },
    },
  }, async (request) => {
    const { limit, offset } = request.query
    const resources = listeners.list(request.tenantId, limit!, offset!)
    return { resources, offset: nextOffset(offset!, resources.length) }
  })

  app.post('/v2/listeners', {
    schema: {
      operationId: 'create_listener_v2_listeners_post', tags, summary: 'Create Listener',
      body: ListenerCreateRequest,
      response: { 201: Listener, ...errorResponses(403, 409, 422) },
    },
  }, async (request, reply) => {
    const body = request.body
    if (listeners.computeIdTaken(request.tenantId, body.compute_id)) throw computeIdTaken(request.tenantId, body.compute_id)
    const created = listeners.create({
      tenantId: request.tenantId,
      computeType: body.compute_type,
      computeId: body.compute_id,
      computeConfig: { k8s_namespaces: body.compute_config.k8s_namespaces ?? null },
      version: body.version ?? null,
    })
    return reply.code(201).send(created)
  })

  app.get('/v2/listeners/:listener_id', {
    schema: {
      operationId: 'get_listener_v2_listeners__listener_id__get', tags, summary: 'Get Listener',
      params: ListenerParams,
      response: { 200: Listener, ...errorResponses(403, 404, 422) },
    },
  }, async (request) => {
    const { listener_id: id } = request.params
    const listener = listeners.get(request.tenantId, id)
    if (!listener) throw listenerNotFound(id)
    return listener
  })

  app.patch('/v2/listeners/:listener_id', {
    schema: {
      operationId: 'patch_listener_v2_listeners__listener_id__patch', tags, summary: 'Patch Listener',
      params: ListenerParams,
      body: ListenerPatchRequest,
      response: { 200: Listener, ...errorResponses(403, 404, 422) },
    },
  }, async (request) => {
    const { listener_id: id } = request.params
    const { version, compute_config: config } = request.body
    const updated = listeners.update(request.tenantId, id, {
      version: version ?? undefined,
      computeConfig: config ? { k8s_namespaces: config.k8s_namespaces ?? null } : undefined,
    })
    if (!updated) throw listenerNotFound(id)
    return updated
  })

  app.delete('/v2/listeners/:listener_id', {
    schema: {
      operationId: 'delete_listener_v2_listeners__listener_id__delete', tags, summary: 'Delete Listener',
      params: ListenerParams,
      response: { 204: Type.Null({ description: 'Successful Response' }), ...errorResponses(403, 404, 422) },
    },
  }, async (request, reply) => {
    const { listener_id: id } = request.params
    if (!listeners.delete(request.tenantId, id)) throw listenerNotFound(id)
    return reply.code(204).send(null)
  })
}
