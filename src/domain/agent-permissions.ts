// What a user of `HANGAR_AGENT_AUTH=users` may do. A LangGraph custom auth handler is called with
// an event `resource:action` for every action of the agent server and may refuse it (the server then
// answers 403); hangar's stand-in handler reads the user's `permissions` from the users file as
// the events it allows. A user without `permissions` may do everything; an empty list allows nothing.

/** LangGraph's auth events, by resource (the names its `Auth.on` handlers are registered under). */
const EVENTS = {
  threads: ['create', 'read', 'update', 'delete', 'search', 'create_run'],
  assistants: ['create', 'read', 'update', 'delete', 'search'],
  crons: ['create', 'read', 'update', 'delete', 'search'],
  store: ['put', 'get', 'search', 'delete', 'list_namespaces'],
} as const

type Events = typeof EVENTS
/** One auth event, e.g. `threads:create_run`. */
export type AuthEvent = { [R in keyof Events]: `${R}:${Events[R][number]}` }[keyof Events]

const RESOURCES: readonly string[] = Object.keys(EVENTS)
const ACTIONS: readonly string[] = [...new Set(Object.values(EVENTS).flat())]
const actionsOf = (resource: string): readonly string[] => (resource === '*' ? ACTIONS : EVENTS[resource as keyof Events])

/** The forms a permission may take, for the message that refuses another. */
export const PERMISSION_FORMS = 'resource:action (e.g. threads:create_run), resource:*, *:action or *'

/**
 * Whether hangar understands a permission: an event, `resource:*`, `*:action` or `*`. A permission
 * that names no event would silently allow nothing (a typo such as `threads:write`), so the users
 * file is refused instead.
 */
export function isPermission(permission: string): boolean {
  if (permission === '*') return true
  const [resource, action, ...rest] = permission.split(':')
  if (rest.length > 0 || action === undefined) return false
  if (resource !== '*' && !RESOURCES.includes(resource)) return false
  return action === '*' || actionsOf(resource).includes(action)
}

/** Whether the permissions allow the event; no list at all (undefined) allows every event. */
export function permits(permissions: readonly string[] | undefined, event: AuthEvent): boolean {
  if (permissions === undefined) return true
  const [resource, action] = event.split(':')
  return permissions.some((p) => p === '*' || p === event || p === `${resource}:*` || p === `*:${action}` || p === '*:*')
}
