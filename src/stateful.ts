// Services that hold something besides the database's rows (caches, work in flight, open streams,
// connections) say here what they do when the data changes under them or hangar stops. A reset or
// an import walks this list instead of a closure that must know every cache.

/** Which data a reset or import touches: one workspace, or (undefined) everything. */
export type ResetScope = string | undefined

export interface Stateful {
  /** Before the data of a workspace (or of all) is removed or replaced: stop what works on it. */
  beforeReset?(workspace: ResetScope): Promise<void>
  /** After it was: drop what was derived from it. `kind` says whether it was a reset or an import. */
  afterReset?(workspace: ResetScope, kind: 'reset' | 'import'): void
  /** At shutdown, before connections close: stop work in flight and end open streams. */
  shutdown?(): Promise<void>
  /** Last of all: release what was opened (the database). */
  close?(): void
}

/** The stateful services, in the order they were built; shutdown and close go in reverse order. */
export class StatefulServices {
  readonly #services: Stateful[] = []

  /** Adds a service's hooks; returns the service for convenience. */
  register<T extends Stateful>(service: T): T {
    this.#services.push(service)
    return service
  }

  async beforeReset(workspace: ResetScope): Promise<void> {
    for (const service of this.#services) await service.beforeReset?.(workspace)
  }

  afterReset(workspace: ResetScope, kind: 'reset' | 'import'): void {
    for (const service of this.#services) service.afterReset?.(workspace, kind)
  }

  async shutdown(): Promise<void> {
    for (const service of [...this.#services].reverse()) await service.shutdown?.()
  }

  close(): void {
    for (const service of [...this.#services].reverse()) service.close?.()
  }
}
