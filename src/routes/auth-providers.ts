import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { discoveredProvider, newProvider, providerChanges } from '../domain/oauth.js'
import { ApiError } from '../errors.js'
import { errorResponses } from '../schemas/common.js'
import {
  MCPOAuthProviderCreateRequest,
  OAuthProviderCreateRequest,
  OAuthProviderResponse,
  OAuthProviderUpdateRequest,
  ProviderDeleted,
  ProviderParams,
} from '../schemas/auth.js'
import type { NewProvider, OAuthProviderRepository } from '../store/oauth-providers.js'

export interface AuthProviderRoutesOptions {
  providers: OAuthProviderRepository
}

const tags = ['Auth Service (v2)']
export const providerNotFound = (id: string) => ApiError.notFound(`OAuth provider '${id}' not found.`)

/** OAuth providers, per workspace. Creates answer 200, as the real service does. */
export const authProviderRoutes: FastifyPluginAsyncTypebox<AuthProviderRoutesOptions> = async (app, { providers }) => {
  const create = (tenantId: string, input: NewProvider) => {
    const created = providers.create(tenantId, input)
    if (!created) throw ApiError.conflict(`OAuth provider '${input.provider_id}' already exists.`)
    return created.response
  }

  app.get('/v2/auth/providers', {
    schema: {
      operationId: 'list_oauth_providers_v2_auth_providers_get', tags, summary: 'List Oauth Providers',
      response: { 200: Type.Array(OAuthProviderResponse) },
    },
  }, async (request) => providers.list(request.tenantId).map((p) => p.response))

  app.post('/v2/auth/providers', {
    schema: {
      operationId: 'create_oauth_provider_v2_auth_providers_post', tags, summary: 'Create Oauth Provider',
      body: OAuthProviderCreateRequest,
      response: { 200: OAuthProviderResponse, ...errorResponses(409, 422) },
    },
  }, async (request) => create(request.tenantId, newProvider(request.body)))

  app.post('/v2/auth/providers/mcp-discover', {
    schema: {
      operationId: 'create_mcp_oauth_provider_v2_auth_providers_mcp_discover_post', tags, summary: 'Create Mcp Oauth Provider',
      body: MCPOAuthProviderCreateRequest,
      response: { 200: OAuthProviderResponse, ...errorResponses(400, 409, 422) },
    },
  }, async (request) => create(request.tenantId, discoveredProvider(request.body)))

  app.get('/v2/auth/providers/:provider_id', {
    schema: {
      operationId: 'get_oauth_provider_v2_auth_providers__provider_id__get', tags, summary: 'Get Oauth Provider',
      params: ProviderParams,
      response: { 200: OAuthProviderResponse, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { provider_id: id } = request.params
    const provider = providers.get(request.tenantId, id)
    if (!provider) throw providerNotFound(id)
    return provider.response
  })

  app.patch('/v2/auth/providers/:provider_id', {
    schema: {
      operationId: 'update_oauth_provider_v2_auth_providers__provider_id__patch', tags, summary: 'Update Oauth Provider',
      params: ProviderParams,
      body: OAuthProviderUpdateRequest,
      response: { 200: OAuthProviderResponse, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { provider_id: id } = request.params
    const current = providers.get(request.tenantId, id)
    if (!current) throw providerNotFound(id)
    return providers.update(request.tenantId, id, providerChanges(current, request.body))!.response
  })

  app.delete('/v2/auth/providers/:provider_id', {
    schema: {
      operationId: 'delete_oauth_provider_v2_auth_providers__provider_id__delete', tags, summary: 'Delete Oauth Provider',
      params: ProviderParams,
      response: { 200: ProviderDeleted, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { provider_id: id } = request.params
    if (!providers.delete(request.tenantId, id)) throw providerNotFound(id)
    return { provider_id: id, deleted: true }
  })
}
