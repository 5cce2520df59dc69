// The agent server each deployment serves at its `url` (`/deployments/{id}/agent`): which requests
// it admits (a deployment of the caller's workspace with a DEPLOYED revision), the graphs' system
// assistants it starts with, and what goes with it when the deployment is deleted: everything, at
// once, when DELETE is answered (the control plane still shows the deployment while its deletion
// walks to the end; its agent server is gone from the start).

import { NotFound, NotServing } from '../domain/errors.js'
import { DELETING_STATUSES } from '../lifecycle/deletions.js'
import type { ResetScope, Stateful } from '../stateful.js'
import type { AgentDataRepository } from '../store/agent-data.js'
import type { AssistantRepository } from '../store/assistants.js'
import type { DeploymentRepository } from '../store/deployments.js'
import type { RunExecutor } from './run-executor.js'
import { seedSystemAssistants } from './system-assistants.js'
import type { GraphEngine } from './types.js'

export interface DeployedAgentsOptions {
  deployments: DeploymentRepository
  assistants: AssistantRepository
  agentData: AgentDataRepository
  engine: GraphEngine
  executor: RunExecutor
  /** Runs `fn` in one database transaction: all of it is written, or none. */
  transaction: <T>(fn: () => T) => T
}

export class DeployedAgents implements Stateful {
  readonly #o: DeployedAgentsOptions
  /** Scopes whose system assistants exist already (seeded on their first admitted request). */
  readonly #seeded = new Set<string>()

  constructor(options: DeployedAgentsOptions) {
    this.#o = options
  }

  /**
   * The scope of the deployment's agent server, for a request that names `workspace` (or none: a
   * deployment's URL works without a workspace header). Not found from another workspace, as on
   * the control plane, nor once its deletion has started; not serving until one of its revisions
   * is DEPLOYED.
   */
  admit(deploymentId: string, workspace: string | undefined): string {
    const id = deploymentId.toLowerCase()
    const deployment = this.#o.deployments.serving(id)
    const foreign = workspace !== undefined && workspace.trim() !== '' && workspace.trim().toLowerCase() !== deployment?.tenant_id
    if (!deployment || foreign || DELETING_STATUSES.includes(deployment.status)) throw new NotFound(`Deployment ID ${id} not found.`)
    if (deployment.status !== 'READY') throw new NotServing(`Deployment ID ${id} is not serving yet: no revision of it is DEPLOYED.`)
    return id
  }

  /** Gives an agent server the graphs' system assistants on its first request past authentication ('' is seeded at boot). */
  seed(scope: string): void {
    if (scope === '' || this.#seeded.has(scope)) return
    seedSystemAssistants(this.#o.assistants, this.#o.engine, scope)
    this.#seeded.add(scope)
  }

  /**
   * Deletes deployments of a workspace with their agent servers: runs in flight on them stop
   * first; then, in one transaction, each deployment starts its deletion and every row of its
   * agent server goes. One already being deleted counts as deleted.
   */
  async remove(tenantId: string, ids: string[]): Promise<{ deleted: string[]; missing: string[] }> {
    const own = ids.map((id) => id.toLowerCase()).filter((id) => this.#o.deployments.tenantOf(id) === tenantId)
    await this.#o.executor.stopAll(new Set(own))
    return this.#o.transaction(() => {
      const { deleted, missing, started } = this.#o.deployments.startDeleting(tenantId, ids)
      this.#o.agentData.deleteScopes(started)
      return { deleted, missing }
    })
  }

  afterReset(_workspace: ResetScope): void {
    // Seeding again is harmless (existing assistants are kept), so every reset simply forgets.
    this.#seeded.clear()
  }
}
