import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ApiError } from '../errors.js'
import { errorResponses } from '../schemas/common.js'
import {
  AgentConnectionListResponse,
  AgentConnectionResponse,
  AgentParams,
  ConnectionParams,
  CreateAgentConnectionRequest,
  DeletedCount,
  OAuthTokenStatusResponse,
  OAuthTokenSummary,
  OAuthTokenUpdateRequest,
  TokenParams,
  TokensForProviderQuery,
  TokensQuery,
} from '../schemas/auth.js'
import type { OAuthTokenRepository } from '../store/oauth-tokens.js'

export interface AuthTokenRoutesOptions {
  tokens: OAuthTokenRepository
}

const tags = ['Auth Service (v2)']
const connectionTags = ['Agent Connections (v2)']
const tokenNotFound = (id: string) => ApiError.notFound(`Token ${id} not found.`)
const noContent = { 204: Type.Null({ description: 'Successful Response' }) }

/** The calling user's tokens, the workspace's Slack tokens, and agents' connections to tokens. */
export const authTokenRoutes: FastifyPluginAsyncTypebox<AuthTokenRoutesOptions> = async (app, { tokens }) => {
  app.get('/v2/auth/tokens', {
    schema: {
      operationId: 'list_oauth_tokens_for_user_v2_auth_tokens_get', tags, summary: 'List Oauth Tokens For User',
      querystring: TokensQuery,
      response: { 200: Type.Array(OAuthTokenSummary), ...errorResponses(422) },
    },
  }, async (request) => tokens.listForUser(request.tenantId, request.userId, request.query.provider_id ?? null).map((t) => t.summary))

  app.delete('/v2/auth/tokens', {
    schema: {
      operationId: 'delete_oauth_tokens_for_user_v2_auth_tokens_delete', tags, summary: 'Delete Oauth Tokens For User',
      querystring: TokensForProviderQuery,
      response: { 200: DeletedCount, ...errorResponses(422) },
    },
  }, async (request) => ({ deleted: tokens.deleteForProvider(request.tenantId, request.userId, request.query.provider_id) }))

  app.get('/v2/auth/tokens/exists', {
    schema: {
      operationId: 'check_oauth_token_exists_v2_auth_tokens_exists_get', tags, summary: 'Check Oauth Token Exists',
      querystring: TokensForProviderQuery,
      response: { 200: OAuthTokenStatusResponse, ...errorResponses(422) },
    },
  }, async (request) => ({ has_token: tokens.listForUser(request.tenantId, request.userId, request.query.provider_id).length > 0 }))

  app.get('/v2/auth/tokens/workspace/slack/exists', {
    schema: {
      operationId: 'check_workspace_slack_tokens_exist_v2_auth_tokens_workspace_slack_exists_get', tags,
      summary: 'Check Workspace Slack Tokens Exist',
      response: { 200: OAuthTokenStatusResponse },
    },
  }, async (request) => ({ has_token: tokens.slackTokenCount(request.tenantId) > 0 }))

  app.delete('/v2/auth/tokens/workspace/slack', {
    schema: {
      operationId: 'revoke_all_slack_tokens_for_workspace_v2_auth_tokens_workspace_slack_delete', tags,
      summary: 'Revoke All Slack Tokens For Workspace',
      response: { 200: DeletedCount },
    },
  }, async (request) => ({ deleted: tokens.deleteSlackTokens(request.tenantId) }))

  app.patch('/v2/auth/tokens/:token_id/metadata', {
    schema: {
      operationId: 'update_token_label_v2_auth_tokens__token_id__metadata_patch', tags, summary: 'Update Token Label',
      params: TokenParams,
      body: OAuthTokenUpdateRequest,
      response: { 200: OAuthTokenSummary, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { token_id: id } = request.params
    const body = request.body
    const updated = tokens.update(request.tenantId, request.userId, id, { label: body.provider_account_label, isDefault: body.is_default })
    if (!updated) throw tokenNotFound(id)
    return updated.summary
  })

  app.delete('/v2/auth/tokens/:token_id', {
    schema: {
      operationId: 'delete_single_oauth_token_v2_auth_tokens__token_id__delete', tags, summary: 'Delete Single Oauth Token',
      params: TokenParams,
      response: { ...noContent, ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const { token_id: id } = request.params
    if (!tokens.delete(request.tenantId, request.userId, id)) throw tokenNotFound(id)
    return reply.code(204).send(null)
  })

  app.get('/v2/auth/agents/:agent_id/connections', {
    schema: {
      operationId: 'list_connections_v2_auth_agents__agent_id__connections_get', tags: connectionTags, summary: 'List Connections',
      params: AgentParams,
      response: { 200: AgentConnectionListResponse, ...errorResponses(422) },
    },
  }, async (request) => ({ data: tokens.connections(request.tenantId, request.params.agent_id) }))

  app.post('/v2/auth/agents/:agent_id/connections', {
    schema: {
      operationId: 'create_connection_v2_auth_agents__agent_id__connections_post', tags: connectionTags, summary: 'Create Connection',
      params: AgentParams,
      body: CreateAgentConnectionRequest,
      response: { 201: AgentConnectionResponse, ...errorResponses(404, 409, 422) },
    },
  }, async (request, reply) => {
    const { agent_id: agentId } = request.params
    const token = tokens.getForUser(request.tenantId, request.userId, request.body.oauth_token_id)
    if (!token) throw tokenNotFound(request.body.oauth_token_id)
    const connection = tokens.connect(request.tenantId, agentId, token, request.userId)
    if (!connection) throw ApiError.conflict(`Agent ${agentId} is already connected to token ${token.summary.id}.`)
    return reply.code(201).send(connection)
  })

  app.delete('/v2/auth/agents/:agent_id/connections/:connection_id', {
    schema: {
      operationId: 'remove_connection_v2_auth_agents__agent_id__connections__connection_id__delete', tags: connectionTags,
      summary: 'Remove Connection',
      params: ConnectionParams,
      response: { ...noContent, ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const { agent_id: agentId, connection_id: id } = request.params
    if (!tokens.disconnect(request.tenantId, agentId, id)) throw ApiError.notFound(`Connection ${id} not found.`)
    return reply.code(204).send(null)
  })
}
