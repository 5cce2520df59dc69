// Everything hangar is made of besides its routes, built once in dependency order: the database,
// the repositories, the agent server's engine and executor, the emulator's journal, faults and
// event bus. Each service that holds state outside the database registers, right where it is
// built, what it does on a reset and at shutdown (see stateful.ts).

import type { Logger } from 'pino'
import { A2AEndpoint } from './agent/a2a.js'
import { DeployedAgents } from './agent/deployed-agents.js'
import { createEngine } from './agent/engine.js'
import { CronScheduler } from './agent/cron-scheduler.js'
import { AgentCrons, runOccurrence } from './agent/crons.js'
import { AgentStore } from './agent/long-term-store.js'
import { McpEndpoint } from './agent/mcp.js'
import { loadReplays } from './agent/replay-file.js'
import { ProtocolCommands } from './agent/protocol-commands.js'
import { RunExecutor } from './agent/run-executor.js'
import { RunRequests } from './agent/run-requests.js'
import { ThreadLog } from './agent/thread-log.js'
import { WebhookDelivery } from './agent/webhook-delivery.js'
import { seedSystemAssistants } from './agent/system-assistants.js'
import type { GraphEngine } from './agent/types.js'
import { EventBus } from './admin/bus.js'
import { EmulatorControls } from './admin/controls.js'
import { FaultInjector } from './admin/faults.js'
import { RequestJournal } from './admin/journal.js'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import { DeploymentLogs } from './domain/deployment-logs.js'
import { FeedbackService } from './domain/feedback.js'
import { RunTraces } from './domain/run-traces.js'
import { snapshotter, SourceUploads } from './domain/source-uploads.js'
import { TracingProjects } from './domain/tracing-projects.js'
import { CallerIds } from './domain/oauth.js'
import { OAuthFlows } from './domain/oauth-flows.js'
import { AgentUsers, loadAgentUsers } from './domain/agent-users.js'
import { loadFixtures, WorkspaceSeeder, type Fixtures } from './fixtures.js'
import { createLogger } from './logging.js'
import { OpenStreams } from './sse/writer.js'
import { StatefulServices } from './stateful.js'
import { AgentDataRepository } from './store/agent-data.js'
import { AssistantRepository } from './store/assistants.js'
import { CronRepository } from './store/crons.js'
import { closeDatabase, openDatabase, type Db } from './store/db.js'
import { GroupCommit, atomically } from './store/group-commit.js'
import { DeploymentRepository } from './store/deployments.js'
import { FeedbackRepository } from './store/feedback.js'
import { ListenerRepository } from './store/listeners.js'
import { OAuthFlowRepository } from './store/oauth-flows.js'
import { OAuthProviderRepository } from './store/oauth-providers.js'
import { OAuthTokenRepository } from './store/oauth-tokens.js'
import { ReadCache } from './store/read-cache.js'
import { RevisionHistoryRepository } from './store/revision-history.js'
import { RunRepository } from './store/runs.js'
import { SourceUploadRepository } from './store/source-uploads.js'
import { StoreItemRepository } from './store/store-items.js'
import { ThreadEventRepository } from './store/thread-events.js'
import { ThreadRepository } from './store/threads.js'
import { WorkspaceRepository } from './store/workspaces.js'
import { VERSION } from './version.js'

/** How long (real time) shutdown lets open event streams finish before cutting them. */
const STREAM_CLOSE_GRACE_MS = 1000

export interface Services {
  readonly config: Config
  readonly clock: Clock
  readonly log: Logger
  /** When this hangar started (real time, not the emulated clock), for `/info`'s uptime. */
  readonly startedAt: number
  readonly db: Db
  /** Runs `fn` in one database transaction: all of it is written, or none. */
  readonly transaction: <T>(fn: () => T) => T
  /**
   * Null when everything written is committed; else a promise that resolves once it is (writes
   * are committed in groups: store/group-commit.ts). What answers
   * or streams a write waits for it: acknowledged means on disk.
   */
  readonly durable: () => Promise<void> | null
  /**
   * For a request read from a socket: what is written until this turn of the event loop ends (by
   * it and the requests read with it) commits together then, one commit for them all.
   */
  readonly commitAtTurnEnd: () => void
  readonly stateful: StatefulServices
  /** What boot seeds, and every reset seeds again: the fixture workspaces and the root agent server's assistants. */
  readonly seed: () => void

  // The emulator's own parts.
  readonly bus: EventBus
  readonly journal: RequestJournal
  readonly faults: FaultInjector
  readonly controls: EmulatorControls

  // The control plane.
  readonly fixtures: Fixtures
  readonly workspaces: WorkspaceRepository
  readonly seeder: WorkspaceSeeder
  readonly deployments: DeploymentRepository
  /** Deployment reads kept while the database is unchanged. */
  readonly deploymentReads: ReadCache<string>
  /** Remote builds' source uploads and local builds' push tokens. */
  readonly sourceUploads: SourceUploads
  /** Revisions' build and deploy logs. */
  readonly deploymentLogs: DeploymentLogs
  readonly listeners: ListenerRepository
  readonly providers: OAuthProviderRepository
  readonly tokens: OAuthTokenRepository
  readonly oauth: OAuthFlows
  readonly callers: CallerIds
  /** The agent server's Bearer users (`HANGAR_AGENT_AUTH=users`; none otherwise). */
  readonly agentUsers: AgentUsers

  // The agent server, at the root and for each deployment.
  readonly engine: GraphEngine
  readonly assistants: AssistantRepository
  readonly threads: ThreadRepository
  readonly runs: RunRepository
  readonly executor: RunExecutor
  /** Each thread's session-protocol log, followed by `/stream/events` and the WebSocket. */
  readonly threadLog: ThreadLog
  /** The session protocol's commands, over HTTP and the WebSocket. */
  readonly protocolCommands: ProtocolCommands
  readonly runRequests: RunRequests
  /** Runs' webhooks being delivered (in memory only). */
  readonly webhooks: WebhookDelivery
  readonly deployedAgents: DeployedAgents
  /** The A2A endpoint and agent cards (tasks are runs, contexts threads: it keeps nothing of its own). */
  readonly a2a: A2AEndpoint
  /** The MCP endpoint (stateless: every assistant a tool). */
  readonly mcp: McpEndpoint
  readonly openStreams: OpenStreams
  /** Each agent server's store (long-term memory). */
  readonly store: AgentStore
  /** Each agent server's crons (their occurrences fire over the clock). */
  readonly crons: AgentCrons

  // Feedback on runs, and the runs as the tracing service shows them.
  readonly feedback: FeedbackRepository
  readonly feedbackService: FeedbackService
  readonly tracingProjects: TracingProjects
  readonly runTraces: RunTraces
}

/** Builds every service; nothing listens yet. `close()` through `stateful` releases them. */
export function buildServices(config: Config, clock: Clock): Services {
  const startedAt = Date.now()
  const log = createLogger(config)
  // What is read from files comes first: a bad fixture or graph stops start-up before the database is opened (and locked).
  const fixtures = loadFixtures(config.fixtures)
  const agentUsers = loadAgentUsers(config)
  const engine = createEngine(fixtures.graphsDir, {
    clock,
    ownGraphs: config.graphs || undefined,
    replays: config.replay ? loadReplays(config.replay) : undefined,
    replaySpeed: config.replaySpeed === 'realtime' ? 1 : config.replaySpeed === 'instant' ? 0 : Number(config.replaySpeed),
    replayFallback: config.replayFallback || undefined,
  })
  const db = openDatabase(config.db)
  try {
    return wire({ config, clock, log, startedAt, fixtures, engine, db, agentUsers })
  } catch (error) {
    closeDatabase(db)
    throw error
  }
}

function wire({ config, clock, log, startedAt, fixtures, engine, db, agentUsers }: { config: Config; clock: Clock; log: Logger; startedAt: number; fixtures: Fixtures; engine: GraphEngine; db: Db; agentUsers: AgentUsers }): Services {
  const stateful = new StatefulServices()
  stateful.register({ close: () => closeDatabase(db) })
  const transaction = <T>(fn: () => T): T => atomically(db, fn)
  const commits = GroupCommit.of(db)
  const durable = () => commits?.durable() ?? null
  const commitAtTurnEnd = () => commits?.untilTurnEnd()

  // The emulator: what changes is published on the bus; the journal and faults see every request
  // to the emulated services, and a full reset (not an import) clears them.
  const bus = new EventBus(clock)
  const journal = new RequestJournal(config.journalSize, { listening: () => bus.subscribers > 0, record: (summary) => bus.publish('request', summary) })
  const faults = new FaultInjector(clock, (change) => bus.publish('faults', change))
  stateful.register({
    afterReset: (workspace, kind) => {
      if (workspace !== undefined || kind !== 'reset') return
      faults.clear()
      journal.clear()
    },
  })

  // The control plane.
  const agentData = new AgentDataRepository(db)
  const workspaces = new WorkspaceRepository(db, agentData)
  const providers = new OAuthProviderRepository(db, clock)
  const seeder = stateful.register(new WorkspaceSeeder(db, fixtures, { workspaces, providers }, clock, config.selfHostedEnterprise))
  // Each new revision takes a snapshot of what it is made from: for a remote build, the uploaded tarball.
  const uploads = new SourceUploadRepository(db)
  const deployments = new DeploymentRepository(db, clock, config.revisionSpeed, (change) => bus.publish('deployments', change), snapshotter(uploads))
  const sourceUploads = new SourceUploads({
    uploads, deployments, clock, registry: config.registryUrl,
    onChange: (id) => bus.publish('deployments', { workspace: deployments.tenantOf(id) ?? '', deployment_id: id, revision_id: null, status: null }),
  })
  const deploymentLogs = new DeploymentLogs({ history: new RevisionHistoryRepository(db), deployments, clock, registry: config.registryUrl })
  stateful.register({ afterReset: () => deployments.invalidate() })
  const listeners = new ListenerRepository(db, clock)
  const tokens = new OAuthTokenRepository(db, clock)
  const oauth = new OAuthFlows({ db, clock, flows: new OAuthFlowRepository(db), providers, tokens })

  // The agent server. Shutdown stops runs (they end interrupted) before their streams are ended:
  // a stream writes its run's last events and ends; one whose client stopped reading is cut.
  const assistants = new AssistantRepository(db, clock)
  const threads = new ThreadRepository(db, clock)
  const runs = new RunRepository(db, clock)
  const store = new AgentStore({ items: new StoreItemRepository(db), clock })
  const feedback = new FeedbackRepository(db, clock)
  const tracingProjects = new TracingProjects({
    workspaceOf: (deploymentId) => deployments.tenantOf(deploymentId),
    deploymentName: (workspace, deploymentId) => deployments.get(workspace, deploymentId)?.name,
    deploymentsOf: (workspace) => deployments.idsOf(workspace),
  })
  const feedbackService = new FeedbackService({ feedback, runs, projects: tracingProjects, clock, ttlSeconds: config.feedbackTtl })
  const runTraces = new RunTraces({ runs, threads, feedback, projects: tracingProjects, clock })
  const openStreams = new OpenStreams()
  stateful.register({ shutdown: () => openStreams.close(STREAM_CLOSE_GRACE_MS) })
  const threadLog = new ThreadLog({
    events: new ThreadEventRepository(db), threads, clock,
    commits: commits && { durable, onCommitted: (listener) => commits.onSettled(listener) },
  })
  // A run that named a webhook has it called when it ends; every attempt is journaled and announced.
  const webhooks = new WebhookDelivery({
    clock, log, userAgent: `hangar/${VERSION}`,
    onAttempt: (attempt) => {
      const { run_id, thread_id, scope, url, attempt: n, max_attempts, outcome, error, next_attempt_at } = attempt
      const id = journal.recordOutgoing({
        time: attempt.time, method: 'POST', url, requestHeaders: attempt.request_headers, body: attempt.body, status: attempt.status,
        latency_ms: attempt.latency_ms, responseHeaders: attempt.response_headers,
        webhook: { url, run_id, thread_id, attempt: n, max_attempts, outcome, error, next_attempt_at },
      })
      bus.publish('webhook', { run_id, thread_id, scope, attempt: n, status: attempt.status, outcome, request_id: id ?? null })
    },
  })
  const executor = new RunExecutor({
    runs, threads, engine, clock, threadLog, endEvent: config.sseEndEvent, log, transaction,
    commits: commits && { durable, onCommitted: (listener) => commits.onSettled(listener) },
    onSuccess: (run, base) => feedbackService.issueForRun(run, base),
    store: (scope) => ({
      put: (namespace, key, value) => store.put(scope, { namespace, key, value, index: null, ttl: null }),
      search: (namespacePrefix, { query, filter, limit }) => store.search(scope, { namespacePrefix, query, filter, limit, offset: 0, refreshTtl: false }),
    }),
    observe: (change) => bus.publish('run', change),
    onEnd: (end) => webhooks.runEnded(end),
  })
  stateful.register({
    // A workspace's data is its deployments' agent servers: their runs stop; a reset of everything stops all.
    beforeReset: (workspace) => executor.stopAll(workspace === undefined ? undefined : new Set(deployments.idsOf(workspace))),
    // Runs an imported document had in flight end interrupted, as after a restart.
    afterReset: (_workspace, kind) => {
      if (kind === 'import') executor.recover()
    },
    shutdown: () => executor.stopAll(),
  })
  executor.recover()
  // Registered after the executor, so it stops first at shutdown: runs that shutdown interrupts call no webhook.
  stateful.register(webhooks)
  const runRequests = new RunRequests({ assistants, threads, engine, executor, clock, transaction, allowLoopbackWebhooks: config.webhookLoopback })
  const protocolCommands = new ProtocolCommands({ threads, runs, runRequests, threadLog, clock })
  // Crons fire over the clock from boot on; a reset or import looks again at what is scheduled (an
  // imported cron that missed occurrences fires one run for them all, as after a restart); shutdown
  // stops the scheduler first.
  const cronRepository = new CronRepository(db)
  const cronScheduler = new CronScheduler({ crons: cronRepository, clock, log, transaction, fire: (cron) => runOccurrence(runRequests, cron, agentUsers) })
  const crons = new AgentCrons({ crons: cronRepository, threads, runRequests, clock, onChange: () => cronScheduler.sweep() })
  stateful.register({ afterReset: () => void cronScheduler.sweep(), shutdown: async () => cronScheduler.stop() })
  cronScheduler.sweep()
  const deployedAgents = stateful.register(new DeployedAgents({ deployments, assistants, agentData, engine, executor, transaction }))

  const a2a = new A2AEndpoint({ assistants, runs, threads, executor, runRequests, engine })
  const mcp = new McpEndpoint({ assistants, executor, runRequests, engine })

  const seed = () => {
    seeder.seedAll(config.defaultTenant)
    seedSystemAssistants(assistants, engine, '')
  }
  seed()
  const controls = new EmulatorControls({ db, workspaces, stateful, seed, settle: () => deployments.settle(), onChange: (change) => bus.publish('state', change) })

  return {
    config, clock, log, startedAt, db, transaction, durable, commitAtTurnEnd, stateful, seed,
    bus, journal, faults, controls,
    fixtures, workspaces, seeder, deployments, deploymentReads: new ReadCache<string>(db), sourceUploads, deploymentLogs, listeners, providers, tokens, oauth, callers: new CallerIds(), agentUsers,
    engine, assistants, threads, runs, executor, threadLog, protocolCommands, runRequests, webhooks, deployedAgents, a2a, mcp, openStreams, store, crons,
    feedback, feedbackService, tracingProjects, runTraces,
  }
}
