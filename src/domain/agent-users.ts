// The agent server's users (`HANGAR_AGENT_AUTH=users`): who a Bearer token is, and what that user
// may see. As a LangGraph custom auth handler does (`@auth.authenticate` returning an identity; an
// `on("*")` handler adding `owner` metadata on create and filtering every read by it), a thread or
// cron created by a user carries `metadata.owner = identity`, and another user's is not found. The
// store is scoped by namespace instead (the documented `on("store")` handler): a user's namespaces
// are those whose first label is its identity. Assistants are shared by every user. What each user
// may do at all is its `permissions` (agent-permissions.ts).

import { readFileSync } from 'node:fs'
import { Type, type Static } from '@sinclair/typebox'
import { ConfigError, settingName, type Config } from '../config.js'
import { compile, INVALID } from '../validation/pydantic.js'
import type { PydanticError } from '../validation/pydantic-error.js'
import { isPermission, PERMISSION_FORMS } from './agent-permissions.js'

const AgentUser = Type.Object({
  token: Type.String({ minLength: 1 }),
  identity: Type.String({ minLength: 1 }),
  permissions: Type.Optional(Type.Array(Type.String())),
})
export type AgentUser = Static<typeof AgentUser>
/** A user as a request acts as it: everything but its token. */
export type AuthUser = Omit<AgentUser, 'token'>
/** Who a request acts as: a user, or nobody in particular (null: not in users mode). */
export type Caller = Pick<AuthUser, 'identity'> | null
const checkUsers = compile(Type.Array(AgentUser, { minItems: 1 }))

/** The metadata key that names a thread's owner (the one LangGraph's custom auth examples use). */
export const OWNER = 'owner'

/** The users of one hangar, by token. */
export class AgentUsers {
  readonly #byToken: ReadonlyMap<string, AgentUser>

  constructor(users: readonly AgentUser[]) {
    this.#byToken = new Map(users.map((user) => [user.token, user]))
  }

  /** The user a Bearer token belongs to, if any. */
  byToken(token: string): AgentUser | undefined {
    return this.#byToken.get(token)
  }

  /**
   * Whom something done later on a user's behalf (a cron's runs) acts as: the first user of the
   * file with that identity, or (none has it any more) the identity with no permissions.
   */
  actingAs(identity: string): AuthUser {
    const user = [...this.#byToken.values()].find((each) => each.identity === identity)
    if (!user) return { identity, permissions: [] }
    const { token: _token, ...rest } = user
    return rest
  }
}

/**
 * The users of `HANGAR_AGENT_USERS`, read when `HANGAR_AGENT_AUTH=users` (none otherwise). A file
 * that is missing, unreadable, not JSON, not a non-empty list of `{token, identity, permissions?}`,
 * or that gives one token twice, stops start-up with a ConfigError of one line naming the setting.
 */
export function loadAgentUsers(config: Pick<Config, 'agentAuth' | 'agentUsers'>): AgentUsers {
  if (config.agentAuth !== 'users') return new AgentUsers([])
  const setting = settingName('agentUsers')
  if (config.agentUsers === '') throw new ConfigError(`${setting}: HANGAR_AGENT_AUTH=users needs a users file, [{"token": "…", "identity": "…"}]`)
  let data: unknown
  try {
    data = JSON.parse(readFileSync(config.agentUsers, 'utf8'))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'does not exist' : code ? `cannot be read (${code})` : `is not JSON: ${(error as Error).message}`
    throw new ConfigError(`${setting}: the users file ${config.agentUsers} ${why}`)
  }
  const errors: PydanticError[] = []
  const users = checkUsers(data, [], errors)
  if (users === INVALID) {
    const where = errors[0].loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '') || '(top level)'
    throw new ConfigError(`${setting}: the users file ${config.agentUsers}: ${where}: ${errors[0].msg}`)
  }
  const list = users as AgentUser[]
  for (const [i, user] of list.entries()) {
    const unknown = user.permissions?.find((permission) => !isPermission(permission))
    if (unknown !== undefined) throw new ConfigError(`${setting}: the users file ${config.agentUsers}: [${i}].permissions: '${unknown}' is not a permission hangar knows; use ${PERMISSION_FORMS}`)
  }
  const twice = list.find((user, i) => list.findIndex((other) => other.token === user.token) !== i)
  if (twice) throw new ConfigError(`${setting}: the users file ${config.agentUsers}: users '${list.find((u) => u.token === twice.token)!.identity}' and '${twice.identity}' have the same token`)
  return new AgentUsers(list)
}

/** Whether the caller may see what has this metadata: its own, or anything when there are no users. */
export const owns = (caller: Caller, metadata: Record<string, unknown>): boolean => caller === null || metadata[OWNER] === caller.identity

/**
 * The metadata a user's new thread or cron gets, and the filter of a user's search: the client's,
 * with the owner over it (as LangGraph's handler does); unchanged without users.
 */
export const withOwner = <M extends Record<string, unknown> | null | undefined>(caller: Caller, metadata: M): M | Record<string, unknown> =>
  caller === null ? metadata : { ...metadata, [OWNER]: caller.identity }

/** Whether a user's search asks for another owner's: the filter and the owner together match nothing. */
export const asksForOthers = (caller: Caller, metadata: Record<string, unknown> | null | undefined): boolean =>
  caller !== null && metadata != null && OWNER in metadata && metadata[OWNER] !== caller.identity

/** Whether a store namespace (or namespace prefix) is the caller's: its first label is the identity; any without users. */
export const ownsNamespace = (caller: Caller, namespace: readonly string[]): boolean => caller === null || namespace[0] === caller.identity

/**
 * What a user's run gets in `config.configurable`, as the real server's `applyAuthToRunConfig`
 * stamps it: the user (never its token), its identity and its permissions (an empty list when the
 * file gives none, as the real server normalizes a user without permissions).
 */
export function authConfigurable(user: AuthUser): Record<string, unknown> {
  const permissions = user.permissions ?? []
  return {
    langgraph_auth_user: { identity: user.identity, display_name: user.identity, is_authenticated: true, permissions },
    langgraph_auth_user_id: user.identity,
    langgraph_auth_permissions: permissions,
  }
}
