import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { resolveAssistantId } from '../agent/system-assistants.js'
import { drawingAt, subgraphsAt } from '../agent/graph-info.js'
import type { GraphEngine } from '../agent/types.js'
import { ApiError } from '../errors.js'
import { AnyDict, errorResponses } from '../schemas/common.js'
import {
  Assistant,
  AssistantCount,
  AssistantCreate,
  AssistantGraphQuery,
  AssistantParams,
  AssistantPatch,
  AssistantSearch,
  AssistantSubgraphsParams,
  AssistantSubgraphsQuery,
  AssistantVersion,
  AssistantVersionsQuery,
  DeleteAssistantQuery,
  SetLatest,
} from '../schemas/agent.js'
import type { Assistant as AssistantRecord, AssistantRepository } from '../store/assistants.js'
import { sortAndPage } from './agent-lists.js'

export interface AssistantRoutesOptions {
  assistants: AssistantRepository
  engine: GraphEngine
}

const tags = ['Assistants']
export const assistantNotFound = () => ApiError.notFound('Assistant not found')

export const assistantRoutes: FastifyPluginAsyncTypebox<AssistantRoutesOptions> = async (app, { assistants, engine }) => {
  const find = (scope: string, idOrGraph: string): AssistantRecord => {
    const assistant = assistants.get(scope, resolveAssistantId(engine, idOrGraph))
    if (!assistant) throw assistantNotFound()
    return assistant
  }

  app.post('/assistants', {
    schema: { tags, summary: 'Create Assistant', body: AssistantCreate, response: { 200: Assistant, ...errorResponses(404, 409, 422) } },
  }, async (request) => {
    const body = request.body
    if (!engine.has(body.graph_id)) throw ApiError.notFound(`Graph "${body.graph_id}" not found`)
    const id = body.assistant_id ?? randomUUID()
    const existing = assistants.get(request.agentScope, id)
    if (existing) {
      if (body.if_exists === 'do_nothing') return existing
      throw ApiError.conflict('Assistant already exists')
    }
    return assistants.create(request.agentScope, id, {
      graph_id: body.graph_id,
      name: body.name ?? 'Untitled',
      description: body.description ?? null,
      config: body.config ?? {},
      context: body.context ?? {},
      metadata: body.metadata ?? {},
    })
  })

  app.post('/assistants/search', {
    schema: { tags, summary: 'Search Assistants', body: AssistantSearch, response: { 200: Type.Array(Type.Unknown(), { description: 'Assistants (only the selected fields with select)' }), ...errorResponses(422) } },
  }, async (request, reply) => {
    const q = request.body ?? {}
    const matches = assistants.list(request.agentScope, { graph_id: q.graph_id, name: q.name, metadata: q.metadata })
    return sortAndPage(reply, matches, { sortBy: q.sort_by ?? 'created_at', order: q.sort_order ?? 'desc', limit: q.limit ?? 10, offset: q.offset ?? 0, select: q.select })
  })

  app.post('/assistants/count', {
    schema: { tags, summary: 'Count Assistants', body: AssistantCount, response: { 200: Type.Integer(), ...errorResponses(422) } },
  }, async (request) => {
    const q = request.body ?? {}
    return assistants.list(request.agentScope, { graph_id: q.graph_id, name: q.name, metadata: q.metadata }).length
  })

  app.get('/assistants/:assistant_id', {
    schema: { tags, summary: 'Get Assistant', params: AssistantParams, response: { 200: Assistant, ...errorResponses(404, 422) } },
  }, async (request) => find(request.agentScope, request.params.assistant_id))

  app.patch('/assistants/:assistant_id', {
    schema: { tags, summary: 'Patch Assistant', params: AssistantParams, body: AssistantPatch, response: { 200: Assistant, ...errorResponses(404, 422) } },
  }, async (request) => {
    const current = find(request.agentScope, request.params.assistant_id)
    const body = request.body
    if (body.graph_id && !engine.has(body.graph_id)) throw ApiError.notFound(`Graph "${body.graph_id}" not found`)
    return assistants.update(request.agentScope, current.assistant_id, {
      graph_id: body.graph_id ?? current.graph_id,
      name: body.name ?? current.name,
      description: body.description ?? current.description,
      config: body.config ?? current.config,
      context: body.context ?? current.context,
      metadata: { ...current.metadata, ...body.metadata },
    })!
  })

  app.delete('/assistants/:assistant_id', {
    schema: { tags, summary: 'Delete Assistant', params: AssistantParams, querystring: DeleteAssistantQuery, response: { 200: Type.Array(Type.String()), ...errorResponses(404, 422) } },
  }, async (request) => {
    const { assistant_id: id } = find(request.agentScope, request.params.assistant_id)
    assistants.delete(request.agentScope, id)
    return [id]
  })

  app.get('/assistants/:assistant_id/graph', {
    schema: { tags, summary: 'Get Assistant Graph', params: AssistantParams, querystring: AssistantGraphQuery, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request) => {
    const info = engine.info(find(request.agentScope, request.params.assistant_id).graph_id)
    return info ? drawingAt(info, request.query.xray ?? false) : { nodes: [], edges: [] }
  })

  app.get('/assistants/:assistant_id/schemas', {
    schema: { tags, summary: 'Get Assistant Schemas', params: AssistantParams, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request) => {
    const { graph_id } = find(request.agentScope, request.params.assistant_id)
    return engine.info(graph_id)?.schemas ?? { graph_id }
  })

  const subgraphs = (scope: string, assistantId: string, namespace: string | undefined, recurse: boolean) => {
    const info = engine.info(find(scope, assistantId).graph_id)
    return info ? subgraphsAt(info, namespace, recurse) : {}
  }

  app.get('/assistants/:assistant_id/subgraphs', {
    schema: { tags, summary: 'Get Assistant Subgraphs', params: AssistantParams, querystring: AssistantSubgraphsQuery, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request) => subgraphs(request.agentScope, request.params.assistant_id, undefined, request.query.recurse ?? false))

  app.get('/assistants/:assistant_id/subgraphs/:namespace', {
    schema: { tags, summary: 'Get Assistant Subgraphs by Namespace', params: AssistantSubgraphsParams, querystring: AssistantSubgraphsQuery, response: { 200: AnyDict(), ...errorResponses(404, 422) } },
  }, async (request) => subgraphs(request.agentScope, request.params.assistant_id, request.params.namespace, request.query.recurse ?? false))

  app.post('/assistants/:assistant_id/versions', {
    schema: { tags, summary: 'Get Assistant Versions', params: AssistantParams, body: AssistantVersionsQuery, response: { 200: Type.Array(AssistantVersion), ...errorResponses(404, 422) } },
  }, async (request) => {
    const q = request.body ?? {}
    const versions = assistants.versions(request.agentScope, resolveAssistantId(engine, request.params.assistant_id))
    if (!versions) throw ApiError.notFound(`Assistant "${request.params.assistant_id}" not found.`)
    const offset = q.offset ?? 0
    return versions.filter((v) => !q.metadata || Object.entries(q.metadata).every(([k, val]) => JSON.stringify(v.metadata[k]) === JSON.stringify(val)))
      .slice(offset, offset + (q.limit ?? 10))
  })

  app.post('/assistants/:assistant_id/latest', {
    schema: { tags, summary: 'Set Latest Assistant Version', params: AssistantParams, body: SetLatest, response: { 200: Assistant, ...errorResponses(404, 422) } },
  }, async (request) => {
    const { assistant_id: id } = find(request.agentScope, request.params.assistant_id)
    const updated = assistants.setLatest(request.agentScope, id, request.body.version)
    if (!updated) throw ApiError.notFound('Assistant version not found')
    return updated
  })
}
