// The Auth Service's OAuth flow, simulated offline: `authenticate` decides whether the caller already
// has a usable token or must authorize; authorizing starts a flow, hangar's stand-in consent screen
// approves it with a one-time code, and the callback exchanges that code (PKCE-checked) for a token.
// The rules live here; the rows in store/oauth-flows.ts.

import { EventEmitter } from 'node:events'
import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Db } from '../store/db.js'
import type { FlowRow, OAuthFlowRepository } from '../store/oauth-flows.js'
import type { OAuthProviderRepository, Provider } from '../store/oauth-providers.js'
import type { OAuthTokenRepository, Token } from '../store/oauth-tokens.js'
import { NotFound, RuleViolation } from './errors.js'
import { ACCESS_TOKEN_TTL_MS, AUTH_REQUEST_TTL_MS, authorizeUrl, codeChallenge, isCallbackFor, randomToken } from './oauth.js'
import { atomically } from '../store/group-commit.js'

/** One started authorization: who asked, for what, and how far it got. */
export interface Flow {
  id: string
  tenantId: string
  provider: Provider
  userId: string
  agentId: string | null
  scopes: string[]
  isDefault: boolean
  state: string
  codeVerifier: string | null
  completed: boolean
  token: Token | undefined
  expiresAt: number
}

export interface AuthenticateRequest {
  provider: string
  scopes: string[]
  userId: string
  agentId: string | null
  tokenId: string | null
  forceNew: boolean
  isDefault: boolean
}

/** What `authenticate` answers, before the HTTP layer adds the fields it leaves null. */
export type AuthenticateAnswer =
  | { status: 'completed'; token: string; metadata: TokenMetadata }
  | { status: 'connection_required'; metadata: TokenMetadata }
  | { status: 'pending' | 'token_expired'; url: string; authId: string }

type TokenMetadata = {
  token_id: string
  provider_id: string
  scopes: string[]
  expires_at: string | null
}

/** The consent screen's request: a standard OAuth 2 authorization request. */
export interface ConsentRequest {
  response_type: string
  client_id: string
  redirect_uri: string
  state: string
  code_challenge?: string
  decision?: 'allow' | 'deny'
}

/** A callback as the provider's redirect carries it. */
export interface CallbackParams {
  code?: string | null
  state?: string | null
  error?: string | null
  error_description?: string | null
}

const UNKNOWN_FLOW = 'Unknown or expired authorization request.'
const covers = (token: Token, scopes: string[]) => scopes.every((scope) => token.scopes.includes(scope))
const metadataOf = (token: Token): TokenMetadata => ({
  token_id: token.summary.id,
  provider_id: token.summary.provider_id,
  scopes: token.scopes,
  expires_at: token.summary.expires_at,
})

function redirectTo(uri: string, params: Record<string, string>) {
  const url = new URL(uri)
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return url.toString()
}

export interface OAuthFlowsOptions {
  db: Db
  clock: Clock
  flows: OAuthFlowRepository
  providers: OAuthProviderRepository
  tokens: OAuthTokenRepository
}

/** The flow's rules. `completions` emits a flow's id when it completes, for whoever waits on it. */
export class OAuthFlows {
  readonly completions = new EventEmitter<Record<string, []>>()
  readonly #o: OAuthFlowsOptions

  constructor(options: OAuthFlowsOptions) {
    this.#o = options
    this.completions.setMaxListeners(0)
  }

  /**
   * The caller's usable token for the provider and scopes (`completed`, or `connection_required`
   * when the asking agent is not connected to it), else a new flow to authorize (`pending`, or
   * `token_expired` when the only matching tokens have expired). `base` is where clients reach hangar.
   */
  authenticate(tenantId: string, request: AuthenticateRequest, base: string): AuthenticateAnswer {
    const { providers, tokens, clock } = this.#o
    const provider = providers.get(tenantId, request.provider)
    if (!provider) throw new NotFound(`OAuth provider '${request.provider}' not found.`)
    let owned = tokens.forUser(provider.seq, request.userId)
    if (request.tokenId) {
      owned = owned.filter((token) => token.summary.id === request.tokenId)
      if (owned.length === 0) throw new NotFound(`Token ${request.tokenId} not found.`)
    }
    const now = clock.now()
    const live = (token: Token) => token.expiresAt === null || token.expiresAt > now
    const usable = owned.find((token) => live(token) && covers(token, request.scopes))
    if (usable && !request.forceNew) {
      if (request.agentId && !tokens.isConnected(request.agentId, usable.seq)) return { status: 'connection_required', metadata: metadataOf(usable) }
      return { status: 'completed', token: usable.accessToken, metadata: metadataOf(usable) }
    }
    const expired = !request.forceNew && owned.some((token) => !live(token) && covers(token, request.scopes))
    const flow = this.#start(provider, request)
    const url = authorizeUrl(base, {
      clientId: provider.clientId,
      providerId: provider.providerId,
      scopes: request.scopes,
      state: flow.state,
      challenge: flow.challenge,
      challengeMethod: provider.codeChallengeMethod,
    })
    return { status: expired ? 'token_expired' : 'pending', url, authId: flow.id }
  }

  #start(provider: Provider, request: AuthenticateRequest) {
    const now = this.#o.clock.now()
    const id = randomUUID()
    const state = randomToken()
    const verifier = provider.usesPkce ? randomToken() : null
    this.#o.flows.insert({
      id,
      providerSeq: provider.seq,
      userId: request.userId,
      agentId: request.agentId,
      scopes: request.scopes,
      isDefault: request.isDefault,
      state,
      codeVerifier: verifier,
      now,
      expiresAt: now + AUTH_REQUEST_TTL_MS,
    })
    return { id, state, challenge: verifier && codeChallenge(verifier, provider.codeChallengeMethod) }
  }

  /** A flow of the workspace that has not expired (a completed one stays readable). */
  get(tenantId: string, authId: string): Flow | undefined {
    const row = this.#o.flows.byId(authId)
    if (!row || row.tenant_id !== tenantId) return undefined
    if (row.completed_at === null && this.#o.clock.now() >= row.expires_at) return undefined
    return this.#toFlow(row)
  }

  /**
   * The consent screen, checking the request as a provider would (the flow, its client, its
   * redirect URI, PKCE): approving issues a one-time code; either way, the redirect to follow.
   */
  consent(request: ConsentRequest): string {
    if (request.response_type !== 'code') throw new RuleViolation(`Unsupported response_type '${request.response_type}'; only 'code' is supported.`)
    const row = this.#o.flows.byState(request.state)
    if (!row || row.completed_at !== null || this.#o.clock.now() >= row.expires_at) throw new RuleViolation(UNKNOWN_FLOW)
    const flow = this.#toFlow(row)
    if (request.client_id !== flow.provider.clientId) throw new RuleViolation('client_id does not match the provider of this request.')
    if (!isCallbackFor(request.redirect_uri, flow.provider.providerId)) throw new RuleViolation('redirect_uri is not the callback of this provider.')
    if (flow.provider.usesPkce && !request.code_challenge) throw new RuleViolation('code_challenge is required by this provider.')
    if (request.decision === 'deny') {
      return redirectTo(request.redirect_uri, { error: 'access_denied', error_description: 'The user denied access.', state: request.state })
    }
    const code = randomToken()
    this.#o.flows.issueCode(flow.id, code, request.code_challenge ?? null, this.#o.clock.now())
    return redirectTo(request.redirect_uri, { code, state: request.state })
  }

  /** The provider redirected back (from a browser, so no workspace): an error it reports, or the code to exchange. */
  callback(providerId: string, params: CallbackParams): { flow: Flow; token: Token } {
    if (params.error) {
      throw new RuleViolation(`Authorization failed: ${params.error}${params.error_description ? ` (${params.error_description})` : ''}`)
    }
    if (!params.code || !params.state) throw new RuleViolation('The callback needs both code and state.')
    return this.exchange(providerId, params.code, params.state)
  }

  /**
   * Exchanges a code for a token, as the provider's token endpoint would: the code must be the
   * flow's current one and unused, the flow unexpired and (with PKCE) the verifier must match the
   * challenge. Issues the token, connects the agent that asked, and completes the flow, atomically.
   */
  exchange(providerId: string, code: string, state: string, tenantId?: string): { flow: Flow; token: Token } {
    const { flows, tokens, clock, db } = this.#o
    const row = flows.byState(state)
    const now = clock.now()
    if (!row || (tenantId !== undefined && row.tenant_id !== tenantId) || (row.completed_at === null && now >= row.expires_at)) {
      throw new RuleViolation(UNKNOWN_FLOW)
    }
    const flow = this.#toFlow(row)
    if (flow.provider.providerId !== providerId) throw new RuleViolation(UNKNOWN_FLOW)
    if (flow.completed) throw new RuleViolation('This authorization code has already been used.')
    if (row.code === null || row.code !== code) throw new RuleViolation('Invalid authorization code.')
    if (flow.codeVerifier && row.code_challenge !== codeChallenge(flow.codeVerifier, flow.provider.codeChallengeMethod)) {
      throw new RuleViolation('PKCE verification failed: the code challenge does not match the verifier.')
    }
    const token = atomically(db, () => {
      const issued = tokens.issue({
        providerSeq: flow.provider.seq,
        userId: flow.userId,
        accessToken: `hangar-oauth-${randomToken(24)}`,
        scopes: flow.scopes,
        label: flow.provider.accountLabel,
        isDefault: flow.isDefault,
        expiresAt: now + ACCESS_TOKEN_TTL_MS,
      })
      if (flow.agentId) tokens.connect(flow.tenantId, flow.agentId, issued, flow.userId)
      flows.complete(flow.id, issued.seq, now)
      return issued
    })
    this.completions.emit(flow.id)
    return { flow: { ...flow, completed: true, token }, token }
  }

  #toFlow(row: FlowRow): Flow {
    return {
      id: row.id,
      tenantId: row.tenant_id,
      provider: this.#o.providers.bySeq(row.provider_seq)!,
      userId: row.user_id,
      agentId: row.agent_id,
      scopes: JSON.parse(row.scopes),
      isDefault: row.is_default === 1,
      state: row.state,
      codeVerifier: row.code_verifier,
      completed: row.completed_at !== null,
      token: row.token_seq === null ? undefined : this.#o.tokens.bySeq(row.token_seq),
      expiresAt: row.expires_at,
    }
  }
}
