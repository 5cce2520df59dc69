import type { Db } from './db.js'

/** One started authorization as stored: who asked, for what, and how far it got. */
export interface FlowRow {
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
  /** The workspace of its provider. */
  tenant_id: string
}

const FLOW = `SELECT f.*, p.tenant_id FROM oauth_auth_requests f JOIN oauth_providers p ON p.seq = f.provider_seq`

/** The Auth Service's authorization requests (one per started flow). */
export class OAuthFlowRepository {
  readonly #sql

  constructor(db: Db) {
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

  insert(flow: { id: string; providerSeq: number; userId: string; agentId: string | null; scopes: string[]; isDefault: boolean; state: string; codeVerifier: string | null; now: number; expiresAt: number }): void {
    this.#sql.insert.run({
      id: flow.id,
      provider_seq: flow.providerSeq,
      user_id: flow.userId,
      agent_id: flow.agentId,
      scopes: JSON.stringify(flow.scopes),
      is_default: flow.isDefault ? 1 : 0,
      state: flow.state,
      code_verifier: flow.codeVerifier,
      now: flow.now,
      expires_at: flow.expiresAt,
    })
  }

  byId(id: string): FlowRow | undefined {
    return this.#sql.byId.get(id)
  }

  byState(state: string): FlowRow | undefined {
    return this.#sql.byState.get(state)
  }

  /** Records the one-time code consent gave, with the PKCE challenge the authorization URL carried. */
  issueCode(id: string, code: string, challenge: string | null, now: number): void {
    this.#sql.issueCode.run(code, challenge, now, id)
  }

  /** The code is used up and the flow holds its token. */
  complete(id: string, tokenSeq: number, now: number): void {
    this.#sql.complete.run(tokenSeq, now, id)
  }
}
