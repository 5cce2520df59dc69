import { EventEmitter } from 'node:events'
import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import { ACCESS_TOKEN_TTL_MS, AUTH_REQUEST_TTL_MS, codeChallenge, randomToken } from '../domain/oauth.js'
import { RuleViolation } from '../errors.js'
import type { Db } from './db.js'
import type { OAuthProviderRepository, Provider } from './oauth-providers.js'
import type { OAuthTokenRepository, Token } from './oauth-tokens.js'

interface FlowRow {
  id: string
  provider_seq: number
  user_id: string
  agent_id: string | null
  scopes: string
  is_default: number
  state: string
  code_verifier: string | null
  code_challenge: string | null
  code: string | null
  code_issued_at: number | null
  token_seq: number | null
  completed_at: number | null
  created_at: number
  expires_at: number
  tenant_id: string
}

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

const FLOW = `SELECT f.*, p.tenant_id FROM oauth_auth_requests f JOIN oauth_providers p ON p.seq = f.provider_seq`

/**
 * The Auth Service's authorization flows: started by `authenticate`, approved on hangar's consent
 * screen (which issues a one-time code), finished by exchanging that code (PKCE-checked) for a
 * token. `completions` emits a flow's id when it completes, for whoever waits on it.
 */
export class OAuthFlows {
  readonly completions = new EventEmitter<Record<string, []>>()
  readonly #db: Db
  readonly #clock: Clock
  readonly #providers: OAuthProviderRepository
  readonly #tokens: OAuthTokenRepository
  readonly #sql

  constructor(db: Db, clock: Clock, providers: OAuthProviderRepository, tokens: OAuthTokenRepository) {
    this.#db = db
    this.#clock = clock
    this.#providers = providers
    this.#tokens = tokens
    this.completions.setMaxListeners(0)
    this.#sql = {
      insert: db.prepare(`INSERT INTO oauth_auth_requests
        (id, provider_seq, user_id, agent_id, scopes, is_default, state, code_verifier, created_at, expires_at)
        VALUES (@id, @provider_seq, @user_id, @agent_id, @scopes, @is_default, @state, @code_verifier, @now, @expires_at)`),
      byState: db.prepare<[string], FlowRow>(`${FLOW} WHERE f.state = ?`),
      byId: db.prepare<[string], FlowRow>(`${FLOW} WHERE f.id = ?`),
      issueCode: db.prepare('UPDATE oauth_auth_requests SET code = ?, code_challenge = ?, code_issued_at = ? WHERE id = ?'),
      complete: db.prepare('UPDATE oauth_auth_requests SET code = NULL, token_seq = ?, completed_at = ? WHERE id = ?'),
    }
  }

  #toFlow(row: FlowRow): Flow {
    return {
      id: row.id,
      tenantId: row.tenant_id,
      provider: this.#providers.bySeq(row.provider_seq)!,
      userId: row.user_id,
      agentId: row.agent_id,
      scopes: JSON.parse(row.scopes),
      isDefault: row.is_default === 1,
      state: row.state,
      codeVerifier: row.code_verifier,
      completed: row.completed_at !== null,
      token: row.token_seq === null ? undefined : this.#tokens.bySeq(row.token_seq),
      expiresAt: row.expires_at,
    }
  }

  /** Starts a flow; the caller builds the authorization URL from its state and PKCE challenge. */
  start(input: { provider: Provider; userId: string; agentId: string | null; scopes: string[]; isDefault: boolean }) {
    const now = this.#clock.now()
    const id = randomUUID()
    const state = randomToken()
    const verifier = input.provider.usesPkce ? randomToken() : null
    this.#sql.insert.run({
      id,
      provider_seq: input.provider.seq,
      user_id: input.userId,
      agent_id: input.agentId,
      scopes: JSON.stringify(input.scopes),
      is_default: input.isDefault ? 1 : 0,
      state,
      code_verifier: verifier,
      now,
      expires_at: now + AUTH_REQUEST_TTL_MS,
    })
    return { id, state, challenge: verifier && codeChallenge(verifier, input.provider.codeChallengeMethod) }
  }

  /** A flow of the workspace that has not expired (a completed one stays readable). */
  get(tenantId: string, authId: string): Flow | undefined {
    const row = this.#sql.byId.get(authId)
    if (!row || row.tenant_id !== tenantId) return undefined
    if (row.completed_at === null && this.#clock.now() >= row.expires_at) return undefined
    return this.#toFlow(row)
  }

  /** The pending flow a consent screen was opened for. */
  pendingByState(state: string): Flow | undefined {
    const row = this.#sql.byState.get(state)
    if (!row || row.completed_at !== null || this.#clock.now() >= row.expires_at) return undefined
    return this.#toFlow(row)
  }

  /** Consent given: a one-time code, remembering the PKCE challenge the authorization URL carried. */
  issueCode(flow: Flow, challenge: string | null): string {
    const code = randomToken()
    this.#sql.issueCode.run(code, challenge, this.#clock.now(), flow.id)
    return code
  }

  /**
   * Exchanges a code for a token, as the provider's token endpoint would: the code must be the
   * flow's current one and unused, the flow unexpired and (with PKCE) the verifier must match the
   * challenge. Issues the token, connects the agent that asked, and completes the flow, atomically.
   */
  exchange(providerId: string, code: string, state: string, tenantId?: string): { flow: Flow; token: Token } {
    const row = this.#sql.byState.get(state)
    const now = this.#clock.now()
    if (!row || (tenantId !== undefined && row.tenant_id !== tenantId) || (row.completed_at === null && now >= row.expires_at)) {
      throw new RuleViolation('Unknown or expired authorization request.')
    }
    const flow = this.#toFlow(row)
    if (flow.provider.providerId !== providerId) throw new RuleViolation('Unknown or expired authorization request.')
    if (flow.completed) throw new RuleViolation('This authorization code has already been used.')
    if (row.code === null || row.code !== code) throw new RuleViolation('Invalid authorization code.')
    if (flow.codeVerifier && row.code_challenge !== codeChallenge(flow.codeVerifier, flow.provider.codeChallengeMethod)) {
      throw new RuleViolation('PKCE verification failed: the code challenge does not match the verifier.')
    }
    const token = this.#db.transaction(() => {
      const issued = this.#tokens.issue({
        providerSeq: flow.provider.seq,
        userId: flow.userId,
        accessToken: `hangar-oauth-${randomToken(24)}`,
        scopes: flow.scopes,
        label: flow.provider.accountLabel,
        isDefault: flow.isDefault,
        expiresAt: now + ACCESS_TOKEN_TTL_MS,
      })
      if (flow.agentId) this.#tokens.connect(flow.tenantId, flow.agentId, issued, flow.userId)
      this.#sql.complete.run(issued.seq, now, flow.id)
      return issued
    })()
    this.completions.emit(flow.id)
    return { flow: { ...flow, completed: true, token }, token }
  }
}
