// Auth Service (v2) and Agent Connections (v2): request and response schemas, field for field as
// in the real service's OpenAPI document.

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { AnyDict, DateTime, Nullable, StringEnum, Uuid } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))

const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const
const TokenEndpointMethodWithDefault = StringEnum(TOKEN_ENDPOINT_AUTH_METHODS, { default: 'client_secret_post' })
export const ProviderType = StringEnum(['microsoft', 'salesforce', 'slack'])

/** Every field is always sent, so all are required here (keeps pydantic's field order when serialized). */
export const OAuthProviderResponse = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.String(),
    provider_id: Type.String(),
    name: Type.String(),
    client_id: Type.String(),
    auth_url: Type.String(),
    token_url: Type.String(),
    uses_pkce: Type.Boolean(),
    code_challenge_method: Nullable(Type.String()),
    provider_type: Nullable(Type.String()),
    mcp_server_url: Nullable(Type.String()),
    token_endpoint_auth_method: Type.String({ default: 'client_secret_post' }),
    is_dynamic_client: Type.Boolean({ default: false }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'OAuthProviderResponse' },
)
export type OAuthProviderResponse = Static<typeof OAuthProviderResponse>

export const OAuthProviderCreateRequest = Type.Object(
  {
    provider_id: Type.String(),
    name: Type.String(),
    client_id: Type.String(),
    client_secret: opt(Type.String()),
    auth_url: Type.String(),
    token_url: Type.String(),
    uses_pkce: Type.Optional(Type.Boolean({ default: false })),
    code_challenge_method: Type.Optional(Type.String({ default: 'S256' })),
    provider_type: opt(ProviderType),
    token_endpoint_auth_method: Type.Optional(TokenEndpointMethodWithDefault),
  },
  { title: 'OAuthProviderCreateRequest' },
)
export type OAuthProviderCreateRequest = Static<typeof OAuthProviderCreateRequest>

export const OAuthProviderUpdateRequest = Type.Object(
  {
    name: opt(Type.String()),
    client_id: opt(Type.String()),
    client_secret: opt(Type.String()),
    auth_url: opt(Type.String()),
    token_url: opt(Type.String()),
    uses_pkce: opt(Type.Boolean()),
    code_challenge_method: opt(Type.String()),
  },
  { title: 'OAuthProviderUpdateRequest' },
)
export type OAuthProviderUpdateRequest = Static<typeof OAuthProviderUpdateRequest>

export const MCPOAuthProviderCreateRequest = Type.Object(
  { provider_id: Type.String(), name: Type.String(), mcp_server_url: Type.String() },
  { title: 'MCPOAuthProviderCreateRequest' },
)
export type MCPOAuthProviderCreateRequest = Static<typeof MCPOAuthProviderCreateRequest>

export const ProviderParams = Type.Object({ provider_id: Type.String({ description: 'OAuth provider ID' }) })

export const AuthStatus = StringEnum(['completed', 'pending', 'connection_required', 'token_expired'])
export const AuthAuthenticateRequest = Type.Object(
  {
    user_id: opt(Type.String()),
    ls_user_id: opt(Type.String()),
    agent_id: opt(Type.String()),
    provider: Type.String(),
    scopes: Type.Array(Type.String()),
    use_agent_builder_public_oauth: Type.Optional(Type.Boolean({ default: false })),
    force_new: Type.Optional(Type.Boolean({ default: false })),
    token_id: opt(Uuid()),
    is_default: Type.Optional(Type.Boolean({ default: true })),
  },
  { title: 'AuthAuthenticateRequest' },
)
export type AuthAuthenticateRequest = Static<typeof AuthAuthenticateRequest>

export const AuthAuthenticateResponse = Type.Object(
  {
    status: AuthStatus,
    url: Nullable(Type.String()),
    auth_id: Nullable(Type.String()),
    token: Nullable(Type.String()),
    user_id: Nullable(Type.String()),
    metadata: Nullable(AnyDict()),
  },
  { title: 'AuthAuthenticateResponse' },
)
export type AuthAuthenticateResponse = Static<typeof AuthAuthenticateResponse>

export const AuthWaitResponse = Type.Object(
  { status: StringEnum(['completed', 'pending', 'timeout', 'not_found']), token: Nullable(Type.String()) },
  { title: 'AuthWaitResponse' },
)
export type AuthWaitResponse = Static<typeof AuthWaitResponse>
export const AuthWaitParams = Type.Object({ auth_id: Type.String({ description: 'Authentication ID to wait for' }) })
export const AuthWaitQuery = Type.Object({
  timeout: Type.Optional(Type.Integer({ default: 30, description: 'Timeout in seconds (default: 30)' })),
})

export const OAuthFinalizeRequest = Type.Object({ code: Type.String(), state: Type.String() }, { title: 'OAuthFinalizeRequest' })
export const OAuthCallbackQuery = Type.Object({
  code: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  error_description: Type.Optional(Type.String()),
})
export const OAuthSetupQuery = Type.Object({
  ...OAuthCallbackQuery.properties,
  setup_action: Type.Optional(Type.String()),
  installation_id: Type.Optional(Type.Integer()),
})

/** What a finished code exchange answers (the spec leaves the 200 body open). */
export const OAuthCallbackResult = Type.Object(
  { status: Type.Literal('completed'), provider_id: Type.String(), auth_id: Type.String(), token_id: Type.String() },
  { title: 'OAuthCallbackResult' },
)
export type OAuthCallbackResult = Static<typeof OAuthCallbackResult>

export const OAuthTokenSummary = Type.Object(
  {
    id: Type.String(),
    provider_id: Type.String(),
    provider_account_label: Nullable(Type.String()),
    scopes: Type.Array(Type.String(), { default: [] }),
    expires_at: Nullable(DateTime()),
    is_default: Type.Boolean({ default: false }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'OAuthTokenSummary' },
)
export type OAuthTokenSummary = Static<typeof OAuthTokenSummary>

export const OAuthTokenUpdateRequest = Type.Object(
  { provider_account_label: opt(Type.String()), is_default: opt(Type.Boolean()) },
  { title: 'OAuthTokenUpdateRequest' },
)
export const OAuthTokenStatusResponse = Type.Object({ has_token: Type.Boolean() }, { title: 'OAuthTokenStatusResponse' })
export const TokenParams = Type.Object({ token_id: Type.String() })
export const TokensQuery = Type.Object({ provider_id: opt(Type.String({ description: 'OAuth provider ID' })) })
export const TokensForProviderQuery = Type.Object({ provider_id: Type.String({ description: 'OAuth provider ID' }) })
export const DeletedCount = Type.Object({ deleted: Type.Integer() }, { title: 'DeletedCount' })
export const ProviderDeleted = Type.Object(
  { provider_id: Type.String(), deleted: Type.Boolean() },
  { title: 'ProviderDeleted' },
)

export const AgentConnectionResponse = Type.Object(
  {
    id: Type.String(),
    agent_id: Type.String(),
    oauth_token_id: Type.String(),
    provider_id: Type.String(),
    provider_account_label: Nullable(Type.String()),
    scopes: Type.Array(Type.String()),
    expires_at: Nullable(DateTime()),
    created_by: Type.String(),
    created_at: DateTime(),
  },
  { title: 'AgentConnectionResponse' },
)
export type AgentConnectionResponse = Static<typeof AgentConnectionResponse>
export const AgentConnectionListResponse = Type.Object(
  { data: Type.Array(AgentConnectionResponse) },
  { title: 'AgentConnectionListResponse' },
)
export const CreateAgentConnectionRequest = Type.Object({ oauth_token_id: Type.String() }, { title: 'CreateAgentConnectionRequest' })
export const AgentParams = Type.Object({ agent_id: Type.String({ description: 'Agent ID' }) })
export const ConnectionParams = Type.Object({
  agent_id: Type.String({ description: 'Agent ID' }),
  connection_id: Type.String({ description: 'Connection ID' }),
})
