import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { FAULT_METHODS, type FaultInjector } from '../admin/faults.js'
import { ApiError } from '../errors.js'
import { DateTime, errorResponses, Nullable, StringEnum, Uuid } from '../schemas/common.js'

const tags = ['Emulator']

const FixedLatency = Type.Object({ ms: Type.Integer({ minimum: 0 }) }, { title: 'FixedLatency' })
const RangeLatency = Type.Object({ min_ms: Type.Integer({ minimum: 0 }), max_ms: Type.Integer({ minimum: 0 }) }, { title: 'RangeLatency' })
const Latency = Type.Union([FixedLatency, RangeLatency])

export const FaultCreate = Type.Object(
  {
    method: Type.Optional(StringEnum(FAULT_METHODS, { default: '*' })),
    path: Type.String({ minLength: 1, description: 'A glob (* one segment, ** any number) or a regular expression written /…/' }),
    workspace: Type.Optional(Nullable(Uuid({ description: 'Only requests acting in this workspace (X-Tenant-Id)' }))),
    latency: Type.Optional(Nullable(Latency)),
    status: Type.Optional(Nullable(Type.Integer({ minimum: 400, maximum: 599, description: 'Answer this status instead of the route' }))),
    detail: Type.Optional(Nullable(Type.String({ description: "The error's detail; default: the status's reason phrase" }))),
    probability: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }), { default: 1 })),
    seed: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4294967295, description: "The rule's random generator seed; default: derived from its id" }))),
    times: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: 'Apply at most this many times' }))),
    drop_after_events: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'Cut an event stream after this many events' }))),
  },
  { title: 'FaultCreate' },
)

export const Fault = Type.Object(
  {
    id: Uuid(),
    method: StringEnum(FAULT_METHODS),
    path: Type.String(),
    workspace: Nullable(Type.String()),
    latency: Nullable(Latency),
    status: Nullable(Type.Integer()),
    detail: Nullable(Type.String()),
    probability: Type.Number(),
    seed: Type.Integer(),
    times: Nullable(Type.Integer()),
    drop_after_events: Nullable(Type.Integer()),
    created_at: DateTime(),
    matched: Type.Integer({ description: 'How many times the fault was applied' }),
  },
  { title: 'Fault' },
)

const FaultParams = Type.Object({ fault_id: Type.String() })
const noContent = Type.Null({ description: 'Successful Response' })

/** Fault rules; mounted under `/_hangar`, a path faults never apply to. */
export const adminFaultRoutes: FastifyPluginAsyncTypebox<{ faults: FaultInjector }> = async (app, { faults }) => {
  app.post('/faults', {
    schema: {
      tags, summary: 'Add Fault', operationId: 'add_fault__hangar_faults_post',
      body: FaultCreate, response: { 201: Fault, ...errorResponses(400, 422) },
    },
  }, async (request, reply) => reply.code(201).send(faults.add(request.body)))

  app.get('/faults', {
    schema: {
      tags, summary: 'List Faults', operationId: 'list_faults__hangar_faults_get',
      response: { 200: Type.Object({ faults: Type.Array(Fault) }, { title: 'FaultList' }) },
    },
  }, async () => ({ faults: faults.list() }))

  app.delete('/faults/:fault_id', {
    schema: {
      tags, summary: 'Remove Fault', operationId: 'remove_fault__hangar_faults__fault_id__delete',
      params: FaultParams, response: { 204: noContent, ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    if (!faults.remove(request.params.fault_id)) throw ApiError.notFound(`Fault ${request.params.fault_id} not found`)
    return reply.code(204).send(null)
  })

  app.delete('/faults', {
    schema: {
      tags, summary: 'Remove Every Fault', operationId: 'clear_faults__hangar_faults_delete',
      response: { 204: noContent },
    },
  }, async (_request, reply) => {
    faults.clear()
    return reply.code(204).send(null)
  })
}
