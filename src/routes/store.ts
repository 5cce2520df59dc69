import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { AgentStore } from '../agent/long-term-store.js'
import { errorResponses } from '../schemas/common.js'
import { ItemOrNull, ListNamespaceResponse, SearchItemsResponse, StoreDelete, StoreGetQuery, StoreListNamespaces, StorePut, StoreSearch } from '../schemas/store.js'

export interface StoreRoutesOptions {
  store: AgentStore
}

const tags = ['Store']
const noContent = { 204: Type.Null({ description: 'Success' }) }

/**
 * The agent server's store (long-term memory): `/store/items` and its search, `/store/namespaces`.
 * Each agent server (the root one, each deployment's) has its own: the request's `agentScope`.
 */
export const storeRoutes: FastifyPluginAsyncTypebox<StoreRoutesOptions> = async (app, { store }) => {
  app.put('/store/items', {
    schema: { tags, summary: 'Store or update an item.', body: StorePut, response: { ...noContent, ...errorResponses(422) } },
  }, async (request, reply) => {
    const { namespace, key, value, index, ttl } = request.body
    store.put(request.agentScope, { namespace, key, value, index: index ?? null, ttl: ttl ?? null }, request.agentUser)
    return reply.code(204).send(null)
  })

  app.get('/store/items', {
    schema: { tags, summary: 'Retrieve a single item.', querystring: StoreGetQuery, response: { 200: ItemOrNull, ...errorResponses(422) } },
  }, async (request) => {
    // The SDKs send the labels joined by '.'; the document's form repeats the parameter, one label each.
    const namespace = (request.query.namespace ?? []).flatMap((part) => part.split('.'))
    return store.get(request.agentScope, namespace, request.query.key, request.query.refresh_ttl ?? null, request.agentUser)
  })

  app.delete('/store/items', {
    schema: { tags, summary: 'Delete an item.', body: StoreDelete, response: { ...noContent, ...errorResponses(422) } },
  }, async (request, reply) => {
    store.delete(request.agentScope, request.body.namespace ?? [], request.body.key, request.agentUser)
    return reply.code(204).send(null)
  })

  app.post('/store/items/search', {
    schema: { tags, summary: 'Search or list items within a namespace prefix.', body: StoreSearch, response: { 200: SearchItemsResponse, ...errorResponses(422) } },
  }, async (request) => {
    const body = request.body
    const items = store.search(request.agentScope, {
      namespacePrefix: body.namespace_prefix ?? [],
      filter: body.filter ?? null,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      query: body.query ?? null,
      refreshTtl: body.refresh_ttl ?? null,
    }, request.agentUser)
    return { items }
  })

  app.post('/store/namespaces', {
    schema: { tags, summary: 'List namespaces with optional match conditions.', body: StoreListNamespaces, response: { 200: ListNamespaceResponse, ...errorResponses(422) } },
  }, async (request) => {
    const body = request.body
    const namespaces = store.namespaces(request.agentScope, {
      prefix: body.prefix ?? [], suffix: body.suffix ?? [], maxDepth: body.max_depth ?? null, limit: body.limit ?? 100, offset: body.offset ?? 0,
    }, request.agentUser)
    return { namespaces }
  })
}
