// The build and deploy logs the control plane serves: of one revision, or of a deployment (every
// revision's, merged in time order). Lines are computed from the revisions' histories at the
// clock's now (lifecycle/revision-logs.ts); nothing about them is stored.

import type { Clock } from '../clock.js'
import { failureStatus } from '../lifecycle/revision-failures.js'
import { revisionLog, type LogLine, type LogSubject, type LogType } from '../lifecycle/revision-logs.js'
import type { RevisionSnapshot } from '../lifecycle/revision-snapshot.js'
import { trackFor } from '../lifecycle/revisions.js'
import type { DeploymentRepository } from '../store/deployments.js'
import type { DeploymentRecord, RevisionHistoryRepository, RevisionRecord } from '../store/revision-history.js'
import { NotFound } from './errors.js'
import { pageOf, type LogPage, type LogQuery } from './log-pages.js'

export interface DeploymentLogsOptions {
  history: RevisionHistoryRepository
  deployments: DeploymentRepository
  clock: Clock
  /** Where built images are pushed (what the build logs name). */
  registry: string
}

/** For a revision stored before snapshots were kept: the deployment as it is now. */
const currentSnapshot = (deployment: DeploymentRecord): RevisionSnapshot => ({
  deployment_name: deployment.name,
  secret_names: deployment.secrets.map((secret) => secret.name),
  repo_url: deployment.sourceConfig.repo_url ?? null,
  install_command: deployment.sourceConfig.install_command ?? null,
  build_command: deployment.sourceConfig.build_command ?? null,
  tarball: null,
})

export class DeploymentLogs {
  readonly #o: DeploymentLogsOptions

  constructor(options: DeploymentLogsOptions) {
    this.#o = options
  }

  /** One page of a revision's build or deploy log. */
  ofRevision(tenantId: string, deploymentId: string, revisionId: string, type: LogType, query: LogQuery): LogPage {
    const { deployment, revisions } = this.#read(tenantId, deploymentId)
    const revision = revisions.find((r) => r.id === revisionId)
    if (!revision) throw new NotFound(`Revision ID ${revisionId} not found.`)
    return this.#page(deployment, [revision], type, query)
  }

  /** One page of the log of every revision of a deployment, merged. */
  ofDeployment(tenantId: string, deploymentId: string, type: LogType, query: LogQuery): LogPage {
    const { deployment, revisions } = this.#read(tenantId, deploymentId)
    return this.#page(deployment, revisions, type, query)
  }

  #read(tenantId: string, deploymentId: string) {
    // Due transitions are written first, so what is read is where the revisions stand now.
    this.#o.deployments.settle()
    const found = this.#o.history.read(tenantId, deploymentId)
    if (!found) throw new NotFound(`Deployment ID ${deploymentId} not found.`)
    return found
  }

  #page(deployment: DeploymentRecord, revisions: readonly RevisionRecord[], type: LogType, query: LogQuery): LogPage {
    const now = this.#o.clock.now()
    const lines: LogLine[] = []
    let growing = false
    for (const revision of revisions) {
      const log = revisionLog(this.#subject(deployment, revision), type, now)
      lines.push(...log.lines)
      growing ||= !log.complete
    }
    return pageOf(lines, query, growing)
  }

  #subject(deployment: DeploymentRecord, revision: RevisionRecord): LogSubject {
    const snapshot = revision.snapshot ?? currentSnapshot(deployment)
    return {
      revisionId: revision.id,
      ordinal: revision.seq,
      source: revision.source,
      config: revision.config,
      snapshot,
      history: {
        track: trackFor(revision.source, failureStatus(revision.config, revision.snapshot)),
        speed: revision.speed,
        createdAt: revision.createdAt,
        steps: revision.steps,
        anchor: { status: revision.status, since: revision.statusAt },
      },
      registry: this.#o.registry,
      secretValues: deployment.secrets.map((secret) => secret.value),
    }
  }
}
