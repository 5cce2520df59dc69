// Tracing projects ("sessions"), as hangar derives them: every agent server traces into one project.
// The root agent server's project is `default` (the name the tracing SDKs use when LANGSMITH_PROJECT
// is not set); a deployment's agent server traces into a project named after the deployment, as a
// hosted deployment does. A project's id is a UUID v5 of its agent server's scope, so it is the same
// across restarts, exports and imports. Who sees what follows the runs: the root project is seen
// by every workspace, a deployment's only by the deployment's workspace.

import { v5 as uuid5 } from 'uuid'

/** The namespace of project ids (uuid5 of `project:<scope>`). */
const PROJECT_NAMESPACE = '9d3c6f0e-5b1a-4c7e-8f2d-6a4b3c2d1e0f'
export const ROOT_PROJECT_NAME = 'default'

export interface TracingProject {
  id: string
  name: string
  /** The agent server whose runs it holds: '' for the root one, else the deployment's id. */
  scope: string
}

export interface TracingProjectsOptions {
  /** The workspace of a deployment; undefined once it is deleted. */
  workspaceOf: (deploymentId: string) => string | undefined
  /** The name of a deployment of a workspace. */
  deploymentName: (workspace: string, deploymentId: string) => string | undefined
  /** The deployments of a workspace. */
  deploymentsOf: (workspace: string) => string[]
}

export const projectIdOf = (scope: string) => uuid5(`project:${scope}`, PROJECT_NAMESPACE)

export class TracingProjects {
  readonly #o: TracingProjectsOptions

  constructor(options: TracingProjectsOptions) {
    this.#o = options
  }

  /** Whether the workspace sees an agent server's runs (and so its project). */
  sees(scope: string, workspace: string): boolean {
    return scope === '' || this.#o.workspaceOf(scope) === workspace
  }

  /** The project of an agent server the workspace sees. */
  of(scope: string, workspace: string): TracingProject | undefined {
    if (!this.sees(scope, workspace)) return undefined
    const name = scope === '' ? ROOT_PROJECT_NAME : this.#o.deploymentName(workspace, scope)
    return name === undefined ? undefined : { id: projectIdOf(scope), name, scope }
  }

  /** Every project the workspace sees: the root agent server's, then its deployments'. */
  list(workspace: string): TracingProject[] {
    return ['', ...this.#o.deploymentsOf(workspace)].map((scope) => this.of(scope, workspace)).filter((p): p is TracingProject => p !== undefined)
  }

  byId(id: string, workspace: string): TracingProject | undefined {
    return this.list(workspace).find((p) => p.id === id)
  }
}
