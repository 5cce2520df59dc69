// GET /_hangar/events: what changes inside hangar, live, as server-sent events (the inspector page
// follows it, then reads what it shows through the documented APIs). Each message is
// `event: <topic>` and one `data:` line of JSON; see src/admin/bus.ts for the topics.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { clockState, type EventBus } from '../admin/bus.js'
import type { Clock } from '../clock.js'
import { SseWriter, type SseEvent } from '../sse/writer.js'

export interface AdminEventRoutesOptions {
  bus: EventBus
  clock: Clock
}

/** How often a `: heartbeat` comment keeps idle proxies from closing the stream. */
const HEARTBEAT_MS = 15_000
/** A client this many messages behind is cut off (memory stays bounded); it reconnects and reads everything afresh. */
const MAX_BEHIND = 10_000

const description = [
  'A server-sent event stream of what changes inside hangar; it never ends by itself.',
  'Each message is `event: <topic>` and one `data:` line of JSON. The first is a `clock` message with the clock as it is.',
  'Topics: `request` {id, method, path, status, latency_ms}: the journal recorded a request;',
  '`run` {run_id, thread_id, scope, status, event, event_id}: a run took a status, or an event was appended to its log (its data is read from the run\'s stream);',
  '`webhook` {run_id, thread_id, scope, attempt, status, outcome, request_id}: an attempt at a run\'s webhook has its outcome;',
  '`clock` {now, now_ms, frozen}; `deployments` {workspace, deployment_id, revision_id, status}: a deployment was written or a revision changed status;',
  '`faults` {action, fault_id}; `state` {action: reset | import, workspace}.',
  'A `: heartbeat` comment goes out every 15 s.',
].join(' ')

export const adminEventRoutes: FastifyPluginAsyncTypebox<AdminEventRoutesOptions> = async (app, { bus, clock }) => {
  // These streams never end by themselves: at shutdown they are ended here, before the server waits for its connections.
  const open = new Set<SseWriter>()
  app.addHook('preClose', async () => {
    for (const writer of open) writer.close()
  })

  app.get('/events', {
    schema: {
      tags: ['Emulator'], summary: 'Follow what changes inside hangar', description,
      response: { 200: { description: 'A server-sent event stream', content: { 'text/event-stream': { schema: Type.String() } } } },
    },
  }, async (_request, reply) => {
    reply.hijack()
    const writer = new SseWriter(reply.raw, { heartbeatMs: HEARTBEAT_MS, headers: reply.getHeaders() as Record<string, string> })
    open.add(writer)
    // Messages wait here while the socket drains, one send at a time.
    const behind: SseEvent[] = []
    let sending = false
    const pump = async () => {
      sending = true
      while (behind.length > 0 && (await writer.send(behind.shift()!)));
      sending = false
    }
    const push = (event: SseEvent) => {
      if (behind.push(event) > MAX_BEHIND) return writer.destroy()
      if (!sending) void pump()
    }
    const unsubscribe = bus.subscribe((message) => push({ event: message.topic, data: message.data }))
    writer.signal.addEventListener('abort', () => {
      unsubscribe()
      behind.length = 0
      open.delete(writer)
    }, { once: true })
    push({ event: 'clock', data: clockState(clock) })
  })
}
