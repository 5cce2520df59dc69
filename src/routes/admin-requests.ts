import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RequestJournal } from '../admin/journal.js'
import { DateTime, Dict, errorResponses, Nullable, StringEnum } from '../schemas/common.js'

const tags = ['Emulator']

const Headers = Dict(Type.Union([Type.String(), Type.Array(Type.String())]))

export const JournalEntry = Type.Object(
  {
    id: Type.Integer({ description: 'Increasing with every recorded request' }),
    time: DateTime({ description: "When the request arrived, on hangar's clock" }),
    method: Type.String(),
    path: Type.String(),
    query: Type.String({ description: 'The query string without "?", secret parameters redacted' }),
    status: Type.Integer({ description: '499 when the client left before any answer; on an outgoing call, 0 when no answer came' }),
    latency_ms: Type.Number({ description: 'Real time from arrival to the end of the answer (of the stream, for streams); on an outgoing call, from sending to the answer' }),
    workspace: Nullable(Type.String()),
    request_headers: Headers,
    request_body: Nullable(Type.String({ description: 'Redacted, at most 4 KiB of text' })),
    response_headers: Headers,
    direction: StringEnum(['incoming', 'outgoing'], { description: 'incoming: a request to hangar; outgoing: a call hangar made (a run\'s webhook)' }),
    webhook: Type.Optional(Type.Object({
      url: Type.String({ description: 'The receiver (secret query parameters redacted)' }),
      run_id: Type.String(),
      thread_id: Type.String(),
      attempt: Type.Integer({ description: '1 for the first attempt' }),
      max_attempts: Type.Integer(),
      outcome: StringEnum(['delivered', 'retrying', 'failed']),
      error: Nullable(Type.String({ description: 'Why no answer came (refused, unreachable, timed out)' })),
      next_attempt_at: Nullable(DateTime({ description: "When the next attempt goes, on hangar's clock" })),
    }, { description: 'On outgoing entries: the run whose webhook this attempt delivered' })),
  },
  { title: 'JournalEntry' },
)

const STATUS_FILTER = '^[1-5]([0-9]{2}|xx)$'

export const JournalQuery = Type.Object({
  method: Type.Optional(Type.String({ description: 'Exact HTTP method' })),
  path: Type.Optional(Type.String({ description: 'Substring of the path, or a glob with * (one segment) and ** (any)' })),
  status: Type.Optional(Type.String({ pattern: STATUS_FILTER, description: 'Exact status (404) or class (4xx)' })),
  workspace: Type.Optional(Type.String()),
  direction: Type.Optional(StringEnum(['incoming', 'outgoing'], { description: 'Only requests to hangar, or only calls it made (webhooks)' })),
  since_id: Type.Optional(Type.Integer({ minimum: 0, description: 'Only entries with a greater id' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, default: 100 })),
})

const JournalPage = Type.Object(
  { requests: Type.Array(JournalEntry), size: Type.Integer(), capacity: Type.Integer() },
  { title: 'JournalPage' },
)

/** The request journal, newest first; mounted under `/_hangar`. */
export const adminRequestRoutes: FastifyPluginAsyncTypebox<{ journal: RequestJournal }> = async (app, { journal }) => {
  app.get('/requests', {
    schema: {
      tags, summary: 'List Recorded Requests', operationId: 'list_requests__hangar_requests_get',
      querystring: JournalQuery, response: { 200: JournalPage, ...errorResponses(422) },
    },
  }, async (request) => {
    return { requests: journal.list(request.query), size: journal.size, capacity: journal.capacity }
  })

  app.delete('/requests', {
    schema: {
      tags, summary: 'Clear Recorded Requests', operationId: 'clear_requests__hangar_requests_delete',
      response: { 204: Type.Null({ description: 'Successful Response' }) },
    },
  }, async (_request, reply) => {
    journal.clear()
    return reply.code(204).send(null)
  })
}
