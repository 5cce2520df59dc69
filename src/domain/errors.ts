// What the layers below the routes report when a request cannot be served. No HTTP and no imports:
// the domain, the agent server and the stores throw these, and the one error handler
// (src/errors.ts) maps each kind to the status the real service answers with. The message is the
// `detail` the client reads.

export abstract class DomainError extends Error {
  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}

/** Something the request names does not exist, or is not visible to the caller (404). */
export class NotFound extends DomainError {}

/** The caller is known but may not do this: a user's permissions, or a store namespace that is not its own (403). */
export class Forbidden extends DomainError {
  constructor() {
    super('Forbidden')
  }
}

/** A rule of the real service beyond its schemas was broken (400). */
export class RuleViolation extends DomainError {}

/** The request is well-formed but the real service refuses what it holds with a 422 and a sentence (a store namespace label with a period). */
export class Unprocessable extends DomainError {}

/** The request would create something that already exists (409). */
export class Conflict extends DomainError {}

/** What the request names existed but has lapsed, like a feedback token past its expiry (410). */
export class Expired extends DomainError {}

/** The thread already runs a task and the run's multitask strategy is `reject` (the agent server answers 422). */
export class ThreadBusy extends DomainError {
  constructor() {
    super('Thread is already running a task. Wait for it to finish or choose a different multitask strategy.')
  }
}

/** The resource exists but cannot serve yet, like a deployment none of whose revisions is DEPLOYED (503). */
export class NotServing extends DomainError {}

/** The real service offers this, but not where hangar stands in for it, like AI search on a deployment without it (501). */
export class NotImplemented extends DomainError {}
