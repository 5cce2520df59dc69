// The OAuth flow hangar simulates, as pure functions: which provider a request describes, the
// authorization URL of hangar's stand-in consent screen, PKCE, and who the caller is.

import { createHash, randomBytes } from 'node:crypto'
import { RuleViolation } from './errors.js'
import type { MCPOAuthProviderCreateRequest, OAuthProviderCreateRequest } from '../schemas/auth.js'
import type { NewProvider, Provider, ProviderChanges } from '../store/oauth-providers.js'

/** How long a started flow (and its authorization code) stays usable. */
export const AUTH_REQUEST_TTL_MS = 10 * 60_000
/** How long an issued access token is valid. */
export const ACCESS_TOKEN_TTL_MS = 60 * 60_000
/** The consent screen hangar serves in place of the provider's. */
export const CONSENT_PATH = '/_hangar/oauth/authorize'

export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url')

/** PKCE code challenge of a verifier (RFC 7636): S256 or plain. */
export const codeChallenge = (verifier: string, method: string | null) =>
  method === 'plain' ? verifier : createHash('sha256').update(verifier).digest('base64url')

/**
 * The user a request acts for: each credential is one user (a stable UUID derived from it);
 * a request carrying only a workspace header acts as that workspace's anonymous user. Every request
 * asks and few credentials are in use at a time, so answers are kept (bounded: forgotten wholesale
 * when full).
 */
export class CallerIds {
  readonly #known = new Map<string, string>()

  of(credential: string | undefined, tenantId: string): string {
    const source = credential ? `key:${credential}` : `tenant:${tenantId}`
    let id = this.#known.get(source)
    if (id === undefined) {
      const hex = createHash('sha256').update(source).digest('hex')
      id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
      if (this.#known.size >= 1024) this.#known.clear()
      this.#known.set(source, id)
    }
    return id
  }
}

/** A provider from a create request or a fixture; a provider without PKCE has no challenge method. */
export function newProvider(request: OAuthProviderCreateRequest & { account_label?: string | null }): NewProvider {
  const usesPkce = request.uses_pkce ?? false
  return {
    ...request,
    uses_pkce: usesPkce,
    code_challenge_method: usesPkce ? (request.code_challenge_method ?? 'S256') : null,
    token_endpoint_auth_method: request.token_endpoint_auth_method ?? 'client_secret_post',
  }
}

/** A PATCH of a provider: turning PKCE on defaults its method to S256, turning it off clears it. */
export function providerChanges(current: Provider, patch: ProviderChanges): ProviderChanges {
  const usesPkce = patch.uses_pkce ?? current.usesPkce
  const method = usesPkce ? (patch.code_challenge_method ?? current.codeChallengeMethod ?? 'S256') : null
  return { ...patch, code_challenge_method: method }
}

/**
 * What MCP auto-discovery would find, offline: the server's authorization endpoints at its origin,
 * a dynamically registered public client, and PKCE (required by the MCP authorization spec).
 */
export function discoveredProvider(request: MCPOAuthProviderCreateRequest): NewProvider {
  let origin: string
  try {
    const url = new URL(request.mcp_server_url)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http')
    origin = url.origin
  } catch {
    throw new RuleViolation(`mcp_server_url '${request.mcp_server_url}' is not an http(s) URL.`)
  }
  return {
    provider_id: request.provider_id,
    name: request.name,
    client_id: `hangar-dcr-${randomToken(12)}`,
    client_secret: null,
    auth_url: `${origin}/authorize`,
    token_url: `${origin}/token`,
    uses_pkce: true,
    code_challenge_method: 'S256',
    mcp_server_url: request.mcp_server_url,
    token_endpoint_auth_method: 'none',
    is_dynamic_client: true,
  }
}

/** The authorization URL a client opens: a standard OAuth 2 request to hangar's consent screen. */
export function authorizeUrl(base: string, params: {
  clientId: string
  providerId: string
  scopes: string[]
  state: string
  challenge: string | null
  challengeMethod: string | null
}): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: `${base}/v2/auth/callback/${encodeURIComponent(params.providerId)}`,
    scope: params.scopes.join(' '),
    state: params.state,
  })
  if (params.challenge) {
    query.set('code_challenge', params.challenge)
    query.set('code_challenge_method', params.challengeMethod ?? 'S256')
  }
  return `${base}${CONSENT_PATH}?${query}`
}

/** A redirect_uri is accepted when it is hangar's callback for that provider (at either prefix). */
export function isCallbackFor(redirectUri: string, providerId: string): boolean {
  if (!URL.canParse(redirectUri)) return false
  const path = new URL(redirectUri).pathname.replace(/^\/api-host/, '')
  return path === `/v2/auth/callback/${encodeURIComponent(providerId)}`
}
