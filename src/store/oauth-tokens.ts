import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { AgentConnectionResponse, OAuthTokenSummary } from '../schemas/auth.js'
import { iso, type Db } from './db.js'
import { atomically } from './group-commit.js'

interface TokenRow {
  seq: number
  id: string
  provider_seq: number
  user_id: string
  access_token: string
  scopes: string
  provider_account_label: string | null
  is_default: number
  expires_at: number | null
  created_at: number
  updated_at: number
  provider_id: string
}

export interface Token {
  seq: number
  userId: string
  accessToken: string
  scopes: string[]
  expiresAt: number | null
  summary: OAuthTokenSummary
}


function toToken(row: TokenRow): Token {
  const scopes = JSON.parse(row.scopes) as string[]
  return {
    seq: row.seq,
    userId: row.user_id,
    accessToken: row.access_token,
    scopes,
    expiresAt: row.expires_at,
    summary: {
      id: row.id,
      provider_id: row.provider_id,
      provider_account_label: row.provider_account_label,
      scopes,
      expires_at: row.expires_at === null ? null : iso(row.expires_at),
      is_default: row.is_default === 1,
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    },
  }
}

interface ConnectionRow {
  id: string
  agent_id: string
  created_by: string
  created_at: number
  token_id: string
  provider_id: string
  provider_account_label: string | null
  scopes: string
  expires_at: number | null
}

function toConnection(row: ConnectionRow): AgentConnectionResponse {
  return {
    id: row.id,
    agent_id: row.agent_id,
    oauth_token_id: row.token_id,
    provider_id: row.provider_id,
    provider_account_label: row.provider_account_label,
    scopes: JSON.parse(row.scopes),
    expires_at: row.expires_at === null ? null : iso(row.expires_at),
    created_by: row.created_by,
    created_at: iso(row.created_at),
  }
}

const TOKEN = `SELECT t.*, p.provider_id FROM oauth_tokens t JOIN oauth_providers p ON p.seq = t.provider_seq`
const CONNECTION = `SELECT c.id, c.agent_id, c.created_by, c.created_at, t.id AS token_id, p.provider_id,
  t.provider_account_label, t.scopes, t.expires_at
  FROM agent_connections c JOIN oauth_tokens t ON t.seq = c.token_seq JOIN oauth_providers p ON p.seq = t.provider_seq`

/** Issued OAuth tokens, per user and provider, and the agents connected to them. */
export class OAuthTokenRepository {
  readonly #db: Db
  readonly #clock: Clock
  readonly #sql

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
    this.#sql = {
      insert: db.prepare(`INSERT INTO oauth_tokens
        (id, provider_seq, user_id, access_token, scopes, provider_account_label, is_default, expires_at, created_at, updated_at)
        VALUES (@id, @provider_seq, @user_id, @access_token, @scopes, @label, @is_default, @expires_at, @now, @now)`),
      clearDefault: db.prepare('UPDATE oauth_tokens SET is_default = 0, updated_at = ? WHERE provider_seq = ? AND user_id = ? AND is_default = 1 AND seq != ?'),
      bySeq: db.prepare<[number], TokenRow>(`${TOKEN} WHERE t.seq = ?`),
      forUser: db.prepare<[number, string], TokenRow>(`${TOKEN} WHERE t.provider_seq = ? AND t.user_id = ?
        ORDER BY t.is_default DESC, t.seq DESC`),
      listForUser: db.prepare<{ tenant: string; user: string; provider: string | null }, TokenRow>(`${TOKEN}
        WHERE p.tenant_id = @tenant AND t.user_id = @user AND (@provider IS NULL OR p.provider_id = @provider) ORDER BY t.seq`),
      getForUser: db.prepare<[string, string, string], TokenRow>(`${TOKEN} WHERE p.tenant_id = ? AND t.user_id = ? AND t.id = ?`),
      update: db.prepare('UPDATE oauth_tokens SET provider_account_label = ?, is_default = ?, updated_at = ? WHERE seq = ?'),
      delete: db.prepare('DELETE FROM oauth_tokens WHERE seq = ?'),
      deleteForProvider: db.prepare(`DELETE FROM oauth_tokens WHERE user_id = ? AND provider_seq IN
        (SELECT seq FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?)`),
      slackCount: db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM oauth_tokens t JOIN oauth_providers p ON p.seq = t.provider_seq
        WHERE p.tenant_id = ? AND p.provider_type = 'slack'`),
      deleteSlack: db.prepare(`DELETE FROM oauth_tokens WHERE provider_seq IN
        (SELECT seq FROM oauth_providers WHERE tenant_id = ? AND provider_type = 'slack')`),
      connections: db.prepare<[string, string], ConnectionRow>(`${CONNECTION} WHERE c.tenant_id = ? AND c.agent_id = ? ORDER BY c.seq`),
      connection: db.prepare<[string], ConnectionRow>(`${CONNECTION} WHERE c.id = ?`),
      connected: db.prepare<[string, number], { id: string }>('SELECT id FROM agent_connections WHERE agent_id = ? AND token_seq = ?'),
      connect: db.prepare(`INSERT INTO agent_connections (id, tenant_id, agent_id, token_seq, created_by, created_at)
        VALUES (?, ?, ?, ?, ?, ?)`),
      disconnect: db.prepare('DELETE FROM agent_connections WHERE tenant_id = ? AND agent_id = ? AND id = ?'),
    }
  }

  /** Issues a token; a default token stops the user's other tokens for the provider being default. */
  issue(input: { providerSeq: number; userId: string; accessToken: string; scopes: string[]; label: string | null; isDefault: boolean; expiresAt: number }): Token {
    const now = this.#clock.now()
    return atomically(this.#db, () => {
      const { lastInsertRowid } = this.#sql.insert.run({
        id: randomUUID(),
        provider_seq: input.providerSeq,
        user_id: input.userId,
        access_token: input.accessToken,
        scopes: JSON.stringify(input.scopes),
        label: input.label,
        is_default: input.isDefault ? 1 : 0,
        expires_at: input.expiresAt,
        now,
      })
      const seq = Number(lastInsertRowid)
      if (input.isDefault) this.#sql.clearDefault.run(now, input.providerSeq, input.userId, seq)
      return toToken(this.#sql.bySeq.get(seq)!)
    })
  }

  bySeq(seq: number): Token | undefined {
    const row = this.#sql.bySeq.get(seq)
    return row && toToken(row)
  }

  /** The user's tokens for a provider, default first, then newest. */
  forUser(providerSeq: number, userId: string): Token[] {
    return this.#sql.forUser.all(providerSeq, userId).map(toToken)
  }

  listForUser(tenantId: string, userId: string, providerId: string | null): Token[] {
    return this.#sql.listForUser.all({ tenant: tenantId, user: userId, provider: providerId }).map(toToken)
  }

  getForUser(tenantId: string, userId: string, tokenId: string): Token | undefined {
    const row = this.#sql.getForUser.get(tenantId, userId, tokenId)
    return row && toToken(row)
  }

  /** Updates label and default flag; undefined when the user has no such token. */
  update(tenantId: string, userId: string, tokenId: string, changes: { label?: string | null; isDefault?: boolean | null }): Token | undefined {
    const row = this.#sql.getForUser.get(tenantId, userId, tokenId)
    if (!row) return undefined
    const now = this.#clock.now()
    const isDefault = changes.isDefault ?? row.is_default === 1
    atomically(this.#db, () => {
      this.#sql.update.run(changes.label ?? row.provider_account_label, isDefault ? 1 : 0, now, row.seq)
      if (isDefault) this.#sql.clearDefault.run(now, row.provider_seq, userId, row.seq)
    })
    return toToken(this.#sql.bySeq.get(row.seq)!)
  }

  delete(tenantId: string, userId: string, tokenId: string): boolean {
    const row = this.#sql.getForUser.get(tenantId, userId, tokenId)
    return row !== undefined && this.#sql.delete.run(row.seq).changes > 0
  }

  deleteForProvider(tenantId: string, userId: string, providerId: string): number {
    return this.#sql.deleteForProvider.run(userId, tenantId, providerId).changes
  }

  slackTokenCount(tenantId: string): number {
    return this.#sql.slackCount.get(tenantId)!.n
  }

  deleteSlackTokens(tenantId: string): number {
    return this.#sql.deleteSlack.run(tenantId).changes
  }

  connections(tenantId: string, agentId: string): AgentConnectionResponse[] {
    return this.#sql.connections.all(tenantId, agentId).map(toConnection)
  }

  isConnected(agentId: string, tokenSeq: number): boolean {
    return this.#sql.connected.get(agentId, tokenSeq) !== undefined
  }

  /** Connects an agent to a token; undefined when that connection already exists. */
  connect(tenantId: string, agentId: string, token: Token, createdBy: string): AgentConnectionResponse | undefined {
    if (this.isConnected(agentId, token.seq)) return undefined
    const id = randomUUID()
    this.#sql.connect.run(id, tenantId, agentId, token.seq, createdBy, this.#clock.now())
    return toConnection(this.#sql.connection.get(id)!)
  }

  disconnect(tenantId: string, agentId: string, connectionId: string): boolean {
    return this.#sql.disconnect.run(tenantId, agentId, connectionId).changes > 0
  }
}
