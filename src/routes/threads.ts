import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { RunExecutor } from '../agent/run-executor.js'
import { threadNotFound } from '../agent/run-requests.js'
import type { GraphEngine } from '../agent/types.js'
import { GraphError } from '../agent/engine.js'
import { extractAll, extractProblems } from '../agent/thread-extract.js'
import { asksForOthers, owns, withOwner } from '../domain/agent-users.js'
import { ApiError } from '../errors.js'
import { errorResponses } from '../schemas/common.js'
import {
  CheckpointConfig,
  CheckpointParams,
  HistoryQuery,
  HistoryRequest,
  StateCheckpointQuery,
  StatePatch,
  StateUpdate,
  StateUpdateResult,
  SubgraphsQuery,
  Thread,
  ThreadCount,
  ThreadCreate,
  ThreadParams,
  ThreadPatch,
  ThreadPrune,
  ThreadPruneResult,
  ThreadSearch,
  ThreadState,
} from '../schemas/agent.js'
import type { RunRepository } from '../store/runs.js'
import { contains, type Thread as ThreadRecord, type ThreadRepository } from '../store/threads.js'
import { sendPage } from './agent-lists.js'
import { presentState } from './thread-state.js'

export interface ThreadRoutesOptions {
  threads: ThreadRepository
  runs: RunRepository
  engine: GraphEngine
  executor: RunExecutor
  /** Runs `fn` in one database transaction: all of it is written, or none. */
  transaction: <T>(fn: () => T) => T
}

const tags = ['Threads']
const noContent = { 204: Type.Null({ description: 'Successful Response' }) }

/** The API's Thread (the store's record without its handle). */
export function presentThread(thread: ThreadRecord) {
  // Written out, not spread (a thread is answered at every run's start): the record's fields but `seq`, in its order.
  return {
    thread_id: thread.thread_id, created_at: thread.created_at, updated_at: thread.updated_at, state_updated_at: thread.state_updated_at,
    metadata: thread.metadata, status: thread.status, values: thread.values, interrupts: thread.interrupts,
    config: thread.config ?? {}, error: thread.error, boundAssistantId: thread.boundAssistantId,
  }
}

export const threadRoutes: FastifyPluginAsyncTypebox<ThreadRoutesOptions> = async (app, options) => {
  const { threads, runs, engine, executor } = options
  /** With `?subgraphs=true`, how a state finds the subgraphs its tasks run. */
  const subgraphsOf = (thread: ThreadRecord, subgraphs: boolean | null | undefined) =>
    subgraphs ? (ns: string) => threads.latestCheckpoint(thread, ns) : null
  const find = (scope: string, id: string) => {
    const thread = threads.get(scope, id)
    if (!thread) throw threadNotFound(id)
    return thread
  }
  /**
   * A state update goes through the thread's graph (the one it last ran, or named in its metadata):
   * one superstep of updates, each as if its node had returned it, in one checkpoint — a child of
   * the latest checkpoint or of the one named (`base`).
   */
  const applyUpdate = (thread: ThreadRecord, updates: { values: unknown; asNode: string | null }[], base: string | null = null) => {
    const graphId = typeof thread.metadata.graph_id === 'string' ? thread.metadata.graph_id : null
    if (graphId === null && thread.values === null) throw ApiError.badRequest(`Thread ${thread.thread_id} has no graph ID`)
    const latest = base === null ? threads.latestCheckpoint(thread) : threads.checkpoint(thread, base)
    // Steps go on from the latest checkpoint; on a new thread an input is step -1, an update step 0 (as LangGraph counts).
    const firstStep = updates.some((u) => u.asNode === '__input__') ? -1 : 0
    let checkpoint
    try {
      checkpoint = engine.applySuperstep(graphId, {
        values: latest?.values ?? null,
        checkpointId: latest?.checkpoint_id ?? null,
        step: latest ? Number(latest.metadata.step ?? -1) + 1 : firstStep,
      }, updates)
    } catch (error) {
      // An update the graph refuses (an unknown node, a message to remove that is not there) is the client's.
      if (error instanceof GraphError) throw ApiError.badRequest(error.message)
      throw error
    }
    checkpoint.metadata = { ...checkpoint.metadata, thread_id: thread.thread_id, ...(graphId ? { graph_id: graphId } : {}) }
    threads.addCheckpoint(thread, checkpoint, null)
    return checkpoint
  }

  app.post('/threads', {
    schema: { tags, summary: 'Create Thread', body: ThreadCreate, response: { 200: Thread, ...errorResponses(409, 422) } },
  }, async (request) => {
    const body = request.body ?? {}
    const id = body.thread_id ?? randomUUID()
    const existing = threads.get(request.agentScope, id)
    if (existing) {
      // Another user's thread is not handed over: its id is taken, that is all the caller learns.
      if (body.if_exists === 'do_nothing' && owns(request.agentUser, existing.metadata)) return presentThread(existing)
      throw ApiError.conflict('Thread already exists')
    }
    // A superstep the graph refuses (a 400) leaves no thread behind.
    const thread = options.transaction(() => {
      const created = threads.create(request.agentScope, id, withOwner(request.agentUser, body.metadata ?? {}))
      for (const superstep of body.supersteps ?? []) {
        applyUpdate(threads.bySeq(created.seq)!, superstep.updates.map((u) => ({ values: u.values ?? u.command?.update ?? null, asNode: u.as_node })))
      }
      // Read again only when the supersteps changed it: the row just made is what it holds otherwise.
      return body.supersteps?.length ? threads.bySeq(created.seq)! : created
    })
    return presentThread(thread)
  })

  app.post('/threads/search', {
    schema: { tags, summary: 'Search Threads', body: ThreadSearch, response: { 200: Type.Array(Type.Unknown(), { description: 'Threads (only the selected fields with select; `extracted` with extract)' }), ...errorResponses(422) } },
  }, async (request, reply) => {
    const q = request.body ?? {}
    const extract = q.extract ?? null
    const problems = extract ? extractProblems(extract) : []
    if (problems.length > 0) throw ApiError.validation(problems)
    const offset = q.offset ?? 0
    if (asksForOthers(request.agentUser, q.metadata)) return sendPage(reply, { items: [], total: 0, offset, select: q.select })
    const found = threads.search(request.agentScope, { ids: q.ids, metadata: withOwner(request.agentUser, q.metadata), values: q.values, status: q.status }, {
      sortBy: q.sort_by ?? 'created_at', order: q.sort_order ?? 'desc', limit: q.limit ?? 10, offset,
    })
    const presented = found.threads.map(presentThread)
    const page = sendPage(reply, { items: presented, total: found.total, offset, select: q.select })
    return extract ? page.map((thread, i) => ({ ...thread, extracted: extractAll(presented[i], extract) })) : page
  })

  app.post('/threads/prune', {
    schema: { tags, summary: 'Prune Threads', body: ThreadPrune, response: { 200: ThreadPruneResult, ...errorResponses(422) } },
  }, async (request) => {
    // `delete` removes each thread as DELETE /threads/{id} does; `keep_latest` keeps its latest checkpoint only. Unknown ids are skipped.
    let pruned = 0
    for (const id of new Set(request.body.thread_ids)) {
      const thread = threads.get(request.agentScope, id)
      if (!thread || !owns(request.agentUser, thread.metadata)) continue
      if ((request.body.strategy ?? 'delete') === 'delete') {
        await executor.cancelThread(thread)
        threads.delete(thread)
      } else threads.keepLatestCheckpoint(thread)
      pruned++
    }
    return { pruned_count: pruned }
  })

  app.post('/threads/count', {
    schema: { tags, summary: 'Count Threads', body: ThreadCount, response: { 200: Type.Integer(), ...errorResponses(422) } },
  }, async (request) => {
    const q = request.body ?? {}
    if (asksForOthers(request.agentUser, q.metadata)) return 0
    return threads.count(request.agentScope, { metadata: withOwner(request.agentUser, q.metadata), values: q.values, status: q.status })
  })

  app.get('/threads/:thread_id', {
    schema: { tags, summary: 'Get Thread', params: ThreadParams, response: { 200: Thread, ...errorResponses(404, 422) } },
  }, async (request) => presentThread(find(request.agentScope, request.params.thread_id)))

  app.patch('/threads/:thread_id', {
    schema: { tags, summary: 'Patch Thread', params: ThreadParams, body: ThreadPatch, response: { 200: Thread, ...errorResponses(404, 422) } },
  }, async (request) => presentThread(threads.patchMetadata(find(request.agentScope, request.params.thread_id), withOwner(request.agentUser, request.body.metadata))))

  app.delete('/threads/:thread_id', {
    schema: { tags, summary: 'Delete Thread', params: ThreadParams, response: { ...noContent, ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const thread = find(request.agentScope, request.params.thread_id)
    await executor.cancelThread(thread)
    threads.delete(thread)
    return reply.code(204).send(null)
  })

  app.post('/threads/:thread_id/copy', {
    schema: { tags, summary: 'Copy Thread', params: ThreadParams, response: { 200: Thread, ...errorResponses(404, 422) } },
  }, async (request) => {
    const source = find(request.agentScope, request.params.thread_id)
    const id = randomUUID()
    const copy = threads.copy(request.agentScope, source, id)
    return presentThread(threads.patchMetadata(copy, { thread_id: id }))
  })

  app.get('/threads/:thread_id/state', {
    schema: { tags, summary: 'Get Thread State', params: ThreadParams, querystring: SubgraphsQuery, response: { 200: ThreadState, ...errorResponses(404, 422) } },
  }, async (request) => {
    const thread = find(request.agentScope, request.params.thread_id)
    return presentState(thread.thread_id, threads.latestCheckpoint(thread), subgraphsOf(thread, request.query.subgraphs))
  })

  app.post('/threads/:thread_id/state', {
    schema: { tags, summary: 'Update Thread State', params: ThreadParams, body: StateUpdate, response: { 200: StateUpdateResult, ...errorResponses(400, 404, 409, 422) } },
  }, async (request) => {
    const thread = find(request.agentScope, request.params.thread_id)
    if (runs.active(thread.seq).length > 0) throw ApiError.conflict('Thread is busy')
    const { body } = request
    const named = body.checkpoint_id ?? (typeof body.checkpoint?.checkpoint_id === 'string' ? body.checkpoint.checkpoint_id : null)
    const checkpoint = applyUpdate(thread, [{ values: body.values ?? null, asNode: body.as_node ?? null }], named)
    return { checkpoint: { thread_id: thread.thread_id, checkpoint_ns: '', checkpoint_id: checkpoint.checkpoint_id } }
  })

  app.patch('/threads/:thread_id/state', {
    schema: { tags, summary: 'Patch Thread State', params: ThreadParams, body: StatePatch, response: { 204: noContent[204], ...errorResponses(404, 422) } },
  }, async (request, reply) => {
    const thread = find(request.agentScope, request.params.thread_id)
    const wanted = request.body.checkpoint_id ?? request.body.checkpoint?.checkpoint_id
    const checkpoint = typeof wanted === 'string' ? threads.checkpoint(thread, wanted) : threads.latestCheckpoint(thread)
    if (!checkpoint) throw ApiError.notFound(typeof wanted === 'string' ? `Checkpoint ${wanted} not found` : `Thread ${thread.thread_id} has no checkpoint`)
    threads.patchCheckpointMetadata(thread, checkpoint, request.body.metadata)
    return reply.code(204).send(null)
  })

  app.get('/threads/:thread_id/state/:checkpoint_id', {
    schema: { tags, summary: 'Get Thread State At Checkpoint', params: CheckpointParams, querystring: SubgraphsQuery, response: { 200: ThreadState, ...errorResponses(404, 422) } },
  }, async (request) => {
    const thread = find(request.agentScope, request.params.thread_id)
    const checkpoint = threads.checkpoint(thread, request.params.checkpoint_id)
    if (!checkpoint) throw ApiError.notFound(`Checkpoint ${request.params.checkpoint_id} not found`)
    return presentState(thread.thread_id, checkpoint, subgraphsOf(thread, request.query.subgraphs))
  })

  app.post('/threads/:thread_id/state/checkpoint', {
    schema: { tags, summary: 'Get Thread State At Checkpoint Post', params: ThreadParams, body: StateCheckpointQuery, response: { 200: ThreadState, ...errorResponses(404, 422) } },
  }, async (request) => {
    const thread = find(request.agentScope, request.params.thread_id)
    // The checkpoint named, or the latest of the namespace named (a subgraph's, or the root's).
    const { checkpoint_id: wanted, checkpoint_ns: ns } = request.body.checkpoint ?? {}
    const checkpoint = typeof wanted === 'string' ? threads.checkpoint(thread, wanted) : threads.latestCheckpoint(thread, ns ?? '')
    if (typeof wanted === 'string' && (!checkpoint || (typeof ns === 'string' && checkpoint.checkpoint_ns !== ns))) {
      throw ApiError.notFound(`Checkpoint ${wanted} not found`)
    }
    return presentState(thread.thread_id, checkpoint, subgraphsOf(thread, request.body.subgraphs))
  })

  const history = (thread: ThreadRecord, options: { limit: number; before?: unknown; metadata?: Record<string, unknown> | null; checkpoint?: CheckpointConfig | null }) => {
    // The root graph's checkpoints, or with `checkpoint: {checkpoint_ns}` a subgraph's (none: an empty list).
    let list = threads.history(thread, options.checkpoint?.checkpoint_ns ?? '')
    // `checkpoint: {checkpoint_id}` lists that checkpoint only, as LangGraph's checkpointer does.
    const only = options.checkpoint?.checkpoint_id
    if (typeof only === 'string') list = list.filter((c) => c.checkpoint_id === only)
    // As the SDKs send it: the id, `{checkpoint_id}`, or a config `{configurable: {checkpoint_id}}`.
    const given = options.before as { checkpoint_id?: string; configurable?: { checkpoint_id?: string } } | string | null | undefined
    const before = typeof given === 'string' ? given : given?.checkpoint_id ?? given?.configurable?.checkpoint_id
    if (before) {
      const at = list.findIndex((c) => c.checkpoint_id === before)
      list = at >= 0 ? list.slice(at + 1) : list
    }
    if (options.metadata) list = list.filter((c) => contains(c.metadata, options.metadata))
    return list.slice(0, options.limit).map((c) => presentState(thread.thread_id, c))
  }

  app.post('/threads/:thread_id/history', {
    schema: { tags, summary: 'Get Thread History Post', params: ThreadParams, body: HistoryRequest, response: { 200: Type.Array(ThreadState), ...errorResponses(404, 422) } },
  }, async (request) => {
    const body = request.body ?? {}
    return history(find(request.agentScope, request.params.thread_id), { limit: body.limit ?? 10, before: body.before, metadata: body.metadata, checkpoint: body.checkpoint })
  })

  app.get('/threads/:thread_id/history', {
    schema: { tags, summary: 'Get Thread History', params: ThreadParams, querystring: HistoryQuery, response: { 200: Type.Array(ThreadState), ...errorResponses(404, 422) } },
  }, async (request) => history(find(request.agentScope, request.params.thread_id), { limit: request.query.limit ?? 10, before: request.query.before }))
}
