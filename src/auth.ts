// Control-plane credentials and workspace (tenant) selection.

import type { IncomingHttpHeaders } from 'node:http'
import type { onRequestHookHandler } from 'fastify'
import type { Config } from './config.js'
import { ApiError, type PydanticError } from './errors.js'
import { compile, INVALID } from './validation/pydantic.js'
import { Uuid } from './schemas/common.js'
import type { CallerIds } from './domain/oauth.js'
import type { AuthUser } from './domain/agent-users.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The workspace the request acts in (lowercase UUID). */
    tenantId: string
    /** The user the request acts as: one per credential (see `CallerIds`). */
    userId: string
    /**
     * Whose agent server the request is served by: '' for the one at the root paths, else the id
     * of the deployment under whose `/deployments/{id}/agent` prefix it came.
     */
    agentScope: string
    /** The agent server's user the request acts as (`HANGAR_AGENT_AUTH=users`), else null. */
    agentUser: AuthUser | null
  }
}

export const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/** The token of `Authorization: Bearer <token>`, if the header is one. */
export const bearerOf = (headers: IncomingHttpHeaders) => /^bearer\s+(\S+)\s*$/i.exec(first(headers.authorization) ?? '')?.[1]

/** `X-Api-Key`, else `Authorization: Bearer <token>`; header names are case-insensitive (Node lowercases them). */
export function credentialOf(headers: IncomingHttpHeaders): string | undefined {
  const apiKey = first(headers['x-api-key'])?.trim()
  if (apiKey) return apiKey
  return bearerOf(headers)
}

const checkTenant = compile(Uuid())

export interface GateOptions {
  /** Who each credential is (the request's `userId`). */
  callers: CallerIds
  /** Admit a request that carries only `X-Tenant-Id` (the Auth Service lists it as a security alternative). */
  tenantHeaderSuffices?: boolean
  /** Called with the workspace of every admitted request: seeds it the first time it is seen. */
  onWorkspace?: (tenantId: string) => void
}

/**
 * The control plane's gate: a credential is required (any non-empty one, or one of
 * `HANGAR_API_KEYS`), then `X-Tenant-Id` picks the workspace (a UUID), defaulting to
 * `HANGAR_DEFAULT_TENANT` unless `HANGAR_REQUIRE_TENANT` demands the header.
 */
export function controlPlaneAuth(
  config: Pick<Config, 'apiKeys' | 'defaultTenant' | 'requireTenant' | 'auth'>,
  options: GateOptions,
): onRequestHookHandler {
  const accepted = new Set(config.apiKeys)
  return (request, _reply, done) => {
    const credential = credentialOf(request.headers)
    const header = first(request.headers['x-tenant-id'])
    if (credential === undefined && config.auth === 'on' && !(options.tenantHeaderSuffices && header)) {
      return done(ApiError.unauthorized('Missing authentication headers'))
    }
    if (credential !== undefined && config.auth === 'on' && accepted.size > 0 && !accepted.has(credential)) {
      return done(ApiError.unauthorized('Invalid token'))
    }

    if (header === undefined || header === '') {
      if (config.requireTenant) return done(ApiError.forbidden('requires workspace specification'))
      request.tenantId = config.defaultTenant
    } else {
      const errors: PydanticError[] = []
      const tenant = checkTenant(header, ['header', 'x-tenant-id'], errors)
      if (tenant === INVALID) return done(ApiError.validation(errors))
      request.tenantId = tenant as string
    }
    request.userId = options.callers.of(credential, request.tenantId)
    options.onWorkspace?.(request.tenantId)
    done()
  }
}

/** The admin API's gate: open unless HANGAR_ADMIN_TOKEN is set, then that token is required. */
export function adminAuth(config: Pick<Config, 'adminToken'>): onRequestHookHandler {
  return (request, _reply, done) => {
    if (!config.adminToken) return done()
    const given = first(request.headers['x-hangar-admin-token']) ?? bearerOf(request.headers)
    if (given !== config.adminToken) return done(ApiError.unauthorized('Admin token required'))
    done()
  }
}

// How the OpenAPI document (and so the /docs page's "Authorize") names the credentials each gate
// above reads; every operation behind a gate declares that gate's requirements, so a try-it call
// sends what the gate admits.

/** One alternative of an OpenAPI `security` list: the schemes that together admit a request. */
export type SecurityRequirement = Record<string, string[]>

const API_KEY = 'API Key'
const TENANT_ID = 'Tenant ID'
const BEARER = 'Bearer Auth'
const ADMIN_TOKEN = 'Admin Token'

/** An OpenAPI security scheme of the two kinds hangar's gates read. */
export type SecurityScheme =
  | { type: 'apiKey'; in: 'header'; name: string; description?: string }
  | { type: 'http'; scheme: 'bearer'; description?: string }

/** The schemes the gates read, as OpenAPI `components.securitySchemes` (the admin token's only when one is set). */
export function securitySchemes(config: Pick<Config, 'adminToken' | 'agentAuth'>): Record<string, SecurityScheme> {
  const bearer = config.agentAuth === 'users'
    ? 'Any API key hangar accepts also works as a Bearer token on the control plane; the agent server takes only a user\'s token (HANGAR_AGENT_USERS).'
    : 'Any API key hangar accepts also works as a Bearer token.'
  return {
    [API_KEY]: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    [TENANT_ID]: { type: 'apiKey', in: 'header', name: 'X-Tenant-Id', description: 'The workspace (a UUID); without it, the default workspace unless HANGAR_REQUIRE_TENANT is set.' },
    [BEARER]: { type: 'http', scheme: 'bearer', description: bearer },
    ...(config.adminToken ? { [ADMIN_TOKEN]: { type: 'apiKey', in: 'header', name: 'X-Hangar-Admin-Token' } } : {}),
  }
}

/** What `controlPlaneAuth(config, options)` admits: a credential (unless auth is off), and the workspace header when required. */
export function controlPlaneSecurity(
  config: Pick<Config, 'auth' | 'requireTenant'>,
  options: Pick<GateOptions, 'tenantHeaderSuffices'> = {},
): SecurityRequirement[] {
  const credentials: SecurityRequirement[] = config.auth === 'on' ? [{ [API_KEY]: [] }, { [BEARER]: [] }] : [{}]
  const requirements: SecurityRequirement[] = credentials.map((credential) => ({ ...credential, [TENANT_ID]: [] }))
  if (!config.requireTenant) requirements.push(...credentials)
  if (options.tenantHeaderSuffices && config.auth === 'on') requirements.push({ [TENANT_ID]: [] })
  return requirements
}

/** What `agentServerAuth(config)` admits: an API key or a Bearer token; a user's Bearer token in `users` mode; nothing with `none` or auth off. */
export function agentServerSecurity(config: Pick<Config, 'auth' | 'agentAuth'>): SecurityRequirement[] {
  if (config.auth === 'off' || config.agentAuth === 'none') return []
  return config.agentAuth === 'users' ? [{ [BEARER]: [] }] : [{ [API_KEY]: [] }, { [BEARER]: [] }]
}

/** What `adminAuth(config)` admits: the admin token when one is set (it also accepts it as a Bearer token). */
export function adminSecurity(config: Pick<Config, 'adminToken'>): SecurityRequirement[] {
  return config.adminToken ? [{ [ADMIN_TOKEN]: [] }] : []
}
