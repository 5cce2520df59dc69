// The emulator's own control plane under /_hangar: its clock, reset and state, and hands on the
// revisions' progress. Everything the inspector page and test suites do goes through here.

import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { clockState } from '../admin/bus.js'
import type { EmulatorControls } from '../admin/controls.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import { ApiError } from '../errors.js'
import { MAX_DATETIME_MS, MIN_DATETIME_MS } from '../validation/datetime.js'
import { DeletionStep, nextDeletionStep } from '../lifecycle/deletions.js'
import { RevisionSpeed, RevisionStatus } from '../lifecycle/revisions.js'
import type { Fixtures } from '../fixtures.js'
import { AnyDict, DateTime, errorResponses, Nullable, StringEnum, Uuid } from '../schemas/common.js'
import { Revision, RevisionParams, DeploymentParams } from '../schemas/deployments.js'
import type { DeploymentRepository } from '../store/deployments.js'
import { StateError } from '../store/state.js'
import type { WorkspaceRepository } from '../store/workspaces.js'

export interface AdminRoutesOptions {
  clock: Clock
  controls: EmulatorControls
  deployments: DeploymentRepository
  workspaces: WorkspaceRepository
  /** For the workspaces' names. */
  fixtures: Fixtures
  config: Pick<Config, 'defaultTenant'>
}

const tags = ['Emulator']
const noContent = { 204: Type.Null({ description: 'Done' }) }

const ClockState = Type.Object({ now: Type.String({ format: 'date-time' }), now_ms: Type.Number(), frozen: Type.Boolean() }, { title: 'ClockState' })
const ClockChange = Type.Object({
  action: StringEnum(['freeze', 'unfreeze', 'set', 'advance']),
  /** For `set`: an ISO instant or epoch milliseconds. */
  to: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Number()])),
  /** For `advance`: milliseconds (negative goes back). */
  ms: Type.Optional(Type.Number()),
}, { title: 'ClockChange' })
const ResetRequest = Type.Union([Type.Object({ workspace: Type.Optional(Uuid()) }), Type.Null()])
/** The clock stays within the dates the real services' datetimes can hold. */
const inRange = (at: number) => at >= MIN_DATETIME_MS && at <= MAX_DATETIME_MS
const RANGE = 'between the years 1 and 9999'
const FORCEABLE = ['DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'INTERRUPTED'] as const

const WorkspaceList = Type.Object({
  workspaces: Type.Array(Type.Object({
    id: Uuid(),
    name: Nullable(Type.String({ description: 'From the workspace fixtures; null for a workspace they do not name' })),
    self_hosted_enterprise: Type.Boolean(),
    default: Type.Boolean({ description: 'Whether requests without X-Tenant-Id act in it' }),
  }, { title: 'WorkspaceSummary' })),
}, { title: 'WorkspaceList' })

const RevisionSchedule = Type.Object({
  deployment_id: Uuid(),
  workspace: Uuid(),
  speed: StringEnum(RevisionSpeed, { description: 'The speed of the deployment\'s revisions from now on' }),
  now: DateTime({ description: 'The clock when this was read' }),
  revisions: Type.Array(Type.Object({
    id: Uuid(),
    status: StringEnum(RevisionStatus),
    speed: StringEnum(RevisionSpeed),
    next_status: Nullable(StringEnum(RevisionStatus), { description: 'The status an advance moves it to; null once it has finished' }),
    next_at: Nullable(DateTime({ description: 'When it moves on by time alone; null when it will not (finished, or at the manual or poll speed)' })),
    next_in_ms: Nullable(Type.Number({ description: 'Clock milliseconds from `now` until `next_at`' })),
  }, { title: 'RevisionStep' }), { description: 'Newest first' }),
  deletion: Nullable(Type.Object({
    status: StringEnum(DeletionStep),
    speed: StringEnum(RevisionSpeed),
    next_status: Nullable(StringEnum(DeletionStep), { description: 'DELETED: the deployment is gone (404) after that step' }),
    next_at: Nullable(DateTime({ description: 'When it moves on by time alone; null at the manual or poll speed' })),
    next_in_ms: Nullable(Type.Number({ description: 'Clock milliseconds from `now` until `next_at`' })),
  }, { title: 'DeletionStep' }), { description: 'Where its deletion stands, once DELETE was answered; null before' }),
}, { title: 'RevisionSchedule' })

export const adminRoutes: FastifyPluginAsyncTypebox<AdminRoutesOptions> = async (app, options) => {
  const { clock, controls, deployments } = options

  app.get('/clock', { schema: { tags, summary: 'Read the clock', response: { 200: ClockState } } }, async () => clockState(clock))

  app.post('/clock', {
    schema: {
      tags, summary: 'Freeze, unfreeze, set or advance the clock',
      description: 'Everything that moves over time reads this clock: revisions, run delays, token expiry, OAuth waits.',
      body: ClockChange, response: { 200: ClockState, ...errorResponses(400, 422) },
    },
  }, async (request) => {
    const { action, to, ms } = request.body
    if (action === 'freeze') clock.freeze()
    else if (action === 'unfreeze') clock.unfreeze()
    else if (action === 'set') {
      const at = typeof to === 'number' ? to : to === undefined ? Number.NaN : Date.parse(to)
      if (!inRange(at)) throw ApiError.badRequest(`set needs "to": an ISO instant or epoch milliseconds, ${RANGE}.`)
      clock.set(at)
    } else {
      if (ms === undefined || !inRange(clock.now() + ms)) throw ApiError.badRequest(`advance needs "ms": a number of milliseconds that keeps the clock ${RANGE}.`)
      clock.advance(ms)
    }
    // What the move woke (runs waiting on the clock, token streams) takes its first steps before the
    // answer: their events are committed and written to their streams by the end of this burst of
    // ticks and microtasks, and the answer follows at setImmediate. A client that awaits the move
    // has then been sent what it caused; the answer written first (~0.3 ms here) delayed every event.
    if (action !== 'freeze') await nextTurn()
    return clockState(clock)
  })

  app.post('/reset', {
    schema: {
      tags, summary: 'Reset everything, or one workspace, and seed the fixtures again',
      description: 'Without a body: all data, faults and the request journal go, and the fixtures are seeded again. With {"workspace": id}: only that workspace\'s data.',
      body: ResetRequest, response: { ...noContent, ...errorResponses(422) },
    },
  }, async (request, reply) => {
    const workspace = request.body?.workspace
    if (workspace) await controls.resetWorkspace(workspace)
    else await controls.resetAll()
    return reply.code(204).send(null)
  })

  app.get('/state', {
    schema: { tags, summary: 'Export all state as JSON', response: { 200: AnyDict({ description: 'A hangar state document' }) } },
  }, async () => controls.export() as unknown as Record<string, unknown>)

  app.put('/state', {
    schema: {
      tags, summary: 'Replace all state with an exported document',
      body: AnyDict({ description: 'A document GET /_hangar/state wrote' }), response: { ...noContent, ...errorResponses(400, 422) },
    },
  }, async (request, reply) => {
    try {
      await controls.import(request.body)
    } catch (error) {
      if (error instanceof StateError) throw ApiError.badRequest(error.message)
      throw error
    }
    return reply.code(204).send(null)
  })

  app.get('/workspaces', {
    schema: { tags, summary: 'List the workspaces hangar knows', description: 'Those of the fixtures and every one a request has named, in the order first seen, the default one first.', response: { 200: WorkspaceList } },
  }, async () => {
    const names = new Map(options.fixtures.workspaces.map((w) => [w.id, w.name ?? null]))
    const list = options.workspaces.list().map((w) => ({ id: w.id, name: names.get(w.id) ?? null, self_hosted_enterprise: w.selfHostedEnterprise, default: w.id === options.config.defaultTenant }))
    return { workspaces: [...list.filter((w) => w.default), ...list.filter((w) => !w.default)] }
  })

  app.get('/deployments/:deployment_id/revisions', {
    schema: {
      tags, summary: 'Where a deployment\'s revisions stand and when each moves on',
      description: 'Every revision, newest first, with its speed, the status it moves to next and when that is due at its current speed. The deployment may be in any workspace.',
      params: DeploymentParams, response: { 200: RevisionSchedule, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id } = request.params
    const schedule = deployments.schedule(id)
    if (!schedule) throw ApiError.notFound(`Deployment ID ${id} not found.`)
    const now = clock.now()
    const timing = (at: number | null) => ({ next_at: at === null ? null : new Date(at).toISOString(), next_in_ms: at === null ? null : at - now })
    const revisions = schedule.revisions.map((r) => ({ ...r, ...timing(r.next_at) }))
    const { deletion } = schedule
    return {
      deployment_id: id, workspace: schedule.workspace, speed: schedule.speed, now: new Date(now).toISOString(), revisions,
      deletion: deletion && { ...deletion, next_status: nextDeletionStep(deletion.status), ...timing(deletion.next_at) },
    }
  })

  app.post('/deployments/:deployment_id/speed', {
    schema: {
      tags, summary: 'Set how fast a deployment\'s revisions advance',
      params: DeploymentParams, body: Type.Object({ speed: StringEnum(RevisionSpeed) }),
      response: { 200: Type.Object({ deployment_id: Uuid(), speed: StringEnum(RevisionSpeed) }), ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id } = request.params
    if (!deployments.setSpeed(id, request.body.speed)) throw ApiError.notFound(`Deployment ID ${id} not found.`)
    return { deployment_id: id, speed: request.body.speed }
  })

  app.post('/deployments/:deployment_id/deletion/advance', {
    schema: {
      tags, summary: 'Move a deployment\'s deletion one step on',
      description: 'AWAITING_DELETE → AWAITING_FINAL_DELETE → DELETED (the deployment is gone: 404). For deletions at the manual speed; any speed may be moved on.',
      params: DeploymentParams,
      response: { 200: Type.Object({ deployment_id: Uuid(), status: StringEnum(DeletionStep) }, { title: 'DeletionAdvance' }), ...errorResponses(404, 409, 422) },
    },
  }, async (request) => {
    const { deployment_id: id } = request.params
    const step = deployments.advanceDeletion(id)
    if (step === 'not_found') throw ApiError.notFound(`Deployment ID ${id} not found.`)
    if (step === 'not_deleting') throw ApiError.conflict(`Deployment ID ${id} is not being deleted.`)
    return { deployment_id: id, status: step }
  })

  const force = (deploymentId: string, revisionId: string, to: Parameters<DeploymentRepository['force']>[2]) => {
    const result = deployments.force(deploymentId, revisionId, to)
    if (result === 'not_found') throw ApiError.notFound(`Revision ID ${revisionId} of deployment ${deploymentId} not found.`)
    if (result === 'finished') throw ApiError.conflict(`Revision ID ${revisionId} has already finished.`)
    return result
  }

  app.post('/deployments/:deployment_id/revisions/:revision_id/advance', {
    schema: {
      tags, summary: 'Move a revision one step on', params: RevisionParams,
      response: { 200: Revision, ...errorResponses(404, 409, 422) },
    },
  }, async (request) => force(request.params.deployment_id, request.params.revision_id, 'next'))

  app.post('/deployments/:deployment_id/revisions/:revision_id/status', {
    schema: {
      tags, summary: 'End a revision in a chosen status', params: RevisionParams,
      body: Type.Object({ status: StringEnum(FORCEABLE) }),
      response: { 200: Revision, ...errorResponses(404, 409, 422) },
    },
  }, async (request) => force(request.params.deployment_id, request.params.revision_id, request.body.status))
}
