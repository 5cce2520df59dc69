import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { OAuthProviderResponse } from '../schemas/auth.js'
import { iso, type Db } from './db.js'

interface ProviderRow {
  seq: number
  id: string
  tenant_id: string
  provider_id: string
  name: string
  client_id: string
  client_secret: string | null
  auth_url: string
  token_url: string
  uses_pkce: number
  code_challenge_method: string | null
  provider_type: string | null
  mcp_server_url: string | null
  token_endpoint_auth_method: string
  is_dynamic_client: number
  account_label: string | null
  created_at: number
  updated_at: number
}

/** A provider as stored; `client_secret` never leaves the store through `toResponse`. */
export interface Provider {
  seq: number
  tenantId: string
  providerId: string
  name: string
  clientId: string
  clientSecret: string | null
  usesPkce: boolean
  codeChallengeMethod: string | null
  providerType: string | null
  accountLabel: string | null
  response: OAuthProviderResponse
}

export interface NewProvider {
  provider_id: string
  name: string
  client_id: string
  client_secret?: string | null
  auth_url: string
  token_url: string
  uses_pkce: boolean
  code_challenge_method: string | null
  provider_type?: string | null
  mcp_server_url?: string | null
  token_endpoint_auth_method: string
  is_dynamic_client?: boolean
  account_label?: string | null
}

/** Fields a PATCH may set; null or absent leaves a field as it is. */
export type ProviderChanges = {
  [K in 'name' | 'client_id' | 'client_secret' | 'auth_url' | 'token_url' | 'uses_pkce' | 'code_challenge_method']?: NewProvider[K] | null
}


function toProvider(row: ProviderRow): Provider {
  return {
    seq: row.seq,
    tenantId: row.tenant_id,
    providerId: row.provider_id,
    name: row.name,
    clientId: row.client_id,
    clientSecret: row.client_secret,
    usesPkce: row.uses_pkce === 1,
    codeChallengeMethod: row.code_challenge_method,
    providerType: row.provider_type,
    accountLabel: row.account_label,
    response: {
      id: row.id,
      organization_id: row.tenant_id,
      provider_id: row.provider_id,
      name: row.name,
      client_id: row.client_id,
      auth_url: row.auth_url,
      token_url: row.token_url,
      uses_pkce: row.uses_pkce === 1,
      code_challenge_method: row.code_challenge_method,
      provider_type: row.provider_type,
      mcp_server_url: row.mcp_server_url,
      token_endpoint_auth_method: row.token_endpoint_auth_method,
      is_dynamic_client: row.is_dynamic_client === 1,
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    },
  }
}

/** OAuth providers, per workspace, keyed by their `provider_id`. */
export class OAuthProviderRepository {
  readonly #clock: Clock
  readonly #sql

  constructor(db: Db, clock: Clock) {
    this.#clock = clock
    this.#sql = {
      get: db.prepare<[string, string], ProviderRow>('SELECT * FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?'),
      bySeq: db.prepare<[number], ProviderRow>('SELECT * FROM oauth_providers WHERE seq = ?'),
      list: db.prepare<[string], ProviderRow>('SELECT * FROM oauth_providers WHERE tenant_id = ? ORDER BY seq'),
      insert: db.prepare(`INSERT INTO oauth_providers
        (id, tenant_id, provider_id, name, client_id, client_secret, auth_url, token_url, uses_pkce, code_challenge_method,
         provider_type, mcp_server_url, token_endpoint_auth_method, is_dynamic_client, account_label, created_at, updated_at)
        VALUES (@id, @tenant_id, @provider_id, @name, @client_id, @client_secret, @auth_url, @token_url, @uses_pkce,
         @code_challenge_method, @provider_type, @mcp_server_url, @token_endpoint_auth_method, @is_dynamic_client,
         @account_label, @now, @now)`),
      update: db.prepare(`UPDATE oauth_providers SET name = @name, client_id = @client_id, client_secret = @client_secret,
        auth_url = @auth_url, token_url = @token_url, uses_pkce = @uses_pkce, code_challenge_method = @code_challenge_method,
        updated_at = @now WHERE seq = @seq`),
      delete: db.prepare('DELETE FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?'),
    }
  }

  get(tenantId: string, providerId: string): Provider | undefined {
    const row = this.#sql.get.get(tenantId, providerId)
    return row && toProvider(row)
  }

  bySeq(seq: number): Provider | undefined {
    const row = this.#sql.bySeq.get(seq)
    return row && toProvider(row)
  }

  list(tenantId: string): Provider[] {
    return this.#sql.list.all(tenantId).map(toProvider)
  }

  /** Inserts a provider; undefined when the workspace already has one with that provider_id. */
  create(tenantId: string, input: NewProvider): Provider | undefined {
    if (this.#sql.get.get(tenantId, input.provider_id)) return undefined
    const { lastInsertRowid } = this.#sql.insert.run({
      id: randomUUID(),
      tenant_id: tenantId,
      provider_id: input.provider_id,
      name: input.name,
      client_id: input.client_id,
      client_secret: input.client_secret ?? null,
      auth_url: input.auth_url,
      token_url: input.token_url,
      uses_pkce: input.uses_pkce ? 1 : 0,
      code_challenge_method: input.code_challenge_method,
      provider_type: input.provider_type ?? null,
      mcp_server_url: input.mcp_server_url ?? null,
      token_endpoint_auth_method: input.token_endpoint_auth_method,
      is_dynamic_client: input.is_dynamic_client ? 1 : 0,
      account_label: input.account_label ?? null,
      now: this.#clock.now(),
    })
    return this.bySeq(Number(lastInsertRowid))
  }

  /** Applies the given (non-null) changes; undefined when there is no such provider. */
  update(tenantId: string, providerId: string, changes: ProviderChanges): Provider | undefined {
    const row = this.#sql.get.get(tenantId, providerId)
    if (!row) return undefined
    const set = <K extends keyof ProviderChanges>(key: K, current: unknown) => changes[key] ?? current
    this.#sql.update.run({
      seq: row.seq,
      name: set('name', row.name),
      client_id: set('client_id', row.client_id),
      client_secret: set('client_secret', row.client_secret),
      auth_url: set('auth_url', row.auth_url),
      token_url: set('token_url', row.token_url),
      uses_pkce: changes.uses_pkce == null ? row.uses_pkce : changes.uses_pkce ? 1 : 0,
      code_challenge_method: 'code_challenge_method' in changes ? changes.code_challenge_method : row.code_challenge_method,
      now: this.#clock.now(),
    })
    return this.bySeq(row.seq)
  }

  /** Deletes a provider with its tokens, flows and agent connections. */
  delete(tenantId: string, providerId: string): boolean {
    return this.#sql.delete.run(tenantId, providerId).changes > 0
  }
}
