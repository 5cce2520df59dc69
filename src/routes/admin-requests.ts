import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RequestJournal } from '../admin/journal.js'
import { DateTime, Dict, errorResponses, Nullable } from '../schemas/common.js'

const tags = ['Emulator']

const Headers = Dict(Type.Union([Type.String(), Type.Array(Type.String())]))

export const JournalEntry = Type.Object(
  {
    id: Type.Integer({ description: 'Increasing with every recorded request' }),
    time: DateTime({ description: "When the request arrived, on hangar's clock" }),
    method: Type.String(),
    path: Type.String(),
    query: Type.String({ description: 'The query string without "?", secret parameters redacted' }),
    status: Type.Integer({ description: '499 when the client left before any answer' }),
    latency_ms: Type.Number({ description: 'Real time from arrival to the end of the answer (of the stream, for streams)' }),
    workspace: Nullable(Type.String()),
    request_headers: Headers,
    request_body: Nullable(Type.String({ description: 'Redacted, at most 4 KiB of text' })),
    response_headers: Headers,
  },
  { title: 'JournalEntry' },
)

const STATUS_FILTER = '^[1-5]([0-9]{2}|xx)$'

export const JournalQuery = Type.Object({
  method: Type.Optional(Type.String({ description: 'Exact HTTP method' })),
  path: Type.Optional(Type.String({ description: 'Substring of the path, or a glob with * (one segment) and ** (any)' })),
  status: Type.Optional(Type.String({ pattern: STATUS_FILTER, description: 'Exact status (404) or class (4xx)' })),
  workspace: Type.Optional(Type.String()),
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
