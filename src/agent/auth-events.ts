// Which LangGraph auth events each agent-server route raises: what a user of
// `HANGAR_AGENT_AUTH=users` needs permission for (domain/agent-permissions.ts). Where the real JS
// server (`@langchain/langgraph-api` 1.5.1, storage/ops and api/store) calls its auth handler, the
// event here is the one it raises; crons, which it does not serve, follow the hosted server's
// `crons:*` events; the session protocol, A2A and MCP are hangar's reading (docs/agent-server-wire.md §10).
// Every route of the gated agent server must be listed: one that is not stops start-up.

import type { AuthEvent } from '../domain/agent-permissions.js'

/** What a route needs: every event listed, or for a JSON-RPC route the events of the body's `method` (none for a method not listed). */
export type EventRule = readonly AuthEvent[] | { readonly rpc: Readonly<Record<string, readonly AuthEvent[]>> }

const CREATE_RUN: readonly AuthEvent[] = ['threads:create_run']

/** Each route (`METHOD path`, the path under the agent server's root) and what it needs. */
export const ROUTE_EVENTS: ReadonlyMap<string, EventRule> = new Map<string, EventRule>([
  ['POST /assistants', ['assistants:create']],
  ['POST /assistants/search', ['assistants:search']],
  ['POST /assistants/count', ['assistants:search']],
  ['GET /assistants/:assistant_id', ['assistants:read']],
  ['PATCH /assistants/:assistant_id', ['assistants:update']],
  ['DELETE /assistants/:assistant_id', ['assistants:delete']],
  ['GET /assistants/:assistant_id/graph', ['assistants:read']],
  ['GET /assistants/:assistant_id/schemas', ['assistants:read']],
  ['GET /assistants/:assistant_id/subgraphs', ['assistants:read']],
  ['GET /assistants/:assistant_id/subgraphs/:namespace', ['assistants:read']],
  ['POST /assistants/:assistant_id/versions', ['assistants:read']],
  ['POST /assistants/:assistant_id/latest', ['assistants:update']],

  ['POST /threads', ['threads:create']],
  ['POST /threads/search', ['threads:search']],
  ['POST /threads/count', ['threads:search']],
  ['POST /threads/prune', ['threads:delete']],
  ['GET /threads/:thread_id', ['threads:read']],
  ['PATCH /threads/:thread_id', ['threads:update']],
  ['DELETE /threads/:thread_id', ['threads:delete']],
  ['POST /threads/:thread_id/copy', ['threads:read', 'threads:create']],
  ['GET /threads/:thread_id/state', ['threads:read']],
  ['POST /threads/:thread_id/state', ['threads:update']],
  ['PATCH /threads/:thread_id/state', ['threads:update']],
  ['GET /threads/:thread_id/state/:checkpoint_id', ['threads:read']],
  ['POST /threads/:thread_id/state/checkpoint', ['threads:read']],
  ['POST /threads/:thread_id/history', ['threads:read']],
  ['GET /threads/:thread_id/history', ['threads:read']],
  ['GET /threads/:thread_id/stream', ['threads:read']],

  ['POST /threads/:thread_id/runs', CREATE_RUN],
  ['POST /threads/:thread_id/runs/stream', CREATE_RUN],
  ['POST /threads/:thread_id/runs/wait', CREATE_RUN],
  // The real server's run list is a search of the thread's runs.
  ['GET /threads/:thread_id/runs', ['threads:search']],
  ['GET /threads/:thread_id/runs/:run_id', ['threads:read']],
  ['DELETE /threads/:thread_id/runs/:run_id', ['threads:delete']],
  ['GET /threads/:thread_id/runs/:run_id/join', ['threads:read']],
  ['GET /threads/:thread_id/runs/:run_id/stream', ['threads:read']],
  ['POST /threads/:thread_id/runs/:run_id/cancel', ['threads:update']],
  ['POST /runs/cancel', ['threads:update']],
  ['POST /runs', CREATE_RUN],
  ['POST /runs/stream', CREATE_RUN],
  ['POST /runs/wait', CREATE_RUN],
  ['POST /runs/batch', CREATE_RUN],

  // The session protocol: commands start runs; the event stream reads; the WebSocket does both.
  ['POST /threads/:thread_id/commands', CREATE_RUN],
  ['POST /threads/:thread_id/stream/events', ['threads:read']],
  ['GET /threads/:thread_id/stream/events', ['threads:read', 'threads:create_run']],

  ['POST /threads/:thread_id/runs/crons', ['crons:create']],
  ['POST /runs/crons', ['crons:create']],
  ['POST /runs/crons/search', ['crons:search']],
  ['POST /runs/crons/count', ['crons:search']],
  ['GET /runs/crons/:cron_id', ['crons:read']],
  ['PATCH /runs/crons/:cron_id', ['crons:update']],
  ['DELETE /runs/crons/:cron_id', ['crons:delete']],

  ['PUT /store/items', ['store:put']],
  ['GET /store/items', ['store:get']],
  ['DELETE /store/items', ['store:delete']],
  ['POST /store/items/search', ['store:search']],
  ['POST /store/namespaces', ['store:list_namespaces']],

  // A2A: a message is a run on its context (thread); a task is a run read or cancelled.
  ['GET /.well-known/agent-card.json', ['assistants:read']],
  ['POST /a2a/:assistant_id', { rpc: { 'message/send': CREATE_RUN, 'message/stream': CREATE_RUN, 'tasks/get': ['threads:read'], 'tasks/resubscribe': ['threads:read'], 'tasks/cancel': ['threads:update'] } }],
  // MCP: the tools are the assistants; a call is a stateless run. initialize and ping need nothing.
  ['POST /mcp/', { rpc: { 'tools/list': ['assistants:search'], 'tools/call': CREATE_RUN } }],
  ['GET /mcp/', []],
  ['DELETE /mcp/', []],
])

/** The events a request to a route with this rule raises (`body` as parsed: a JSON-RPC route reads its `method`). */
export function eventsOf(rule: EventRule, body: unknown): readonly AuthEvent[] {
  if (!('rpc' in rule)) return rule
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined
  return typeof method === 'string' && Object.hasOwn(rule.rpc, method) ? rule.rpc[method] : []
}
