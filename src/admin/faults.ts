// Fault injection: rules that make matching requests slow, fail, or (for event streams) drop.
// Every random choice comes from a seeded generator per rule, so the same rules and the same
// requests give the same outcomes, and a failing run is replayed by re-adding the rule with its seed.

import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import type { Clock } from '../clock.js'
import { RuleViolation } from '../domain/errors.js'
import { ApiError, phrase } from '../errors.js'
import { clientUrl } from '../copies.js'

export const FAULT_METHODS = ['*', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const
export type FaultMethod = (typeof FAULT_METHODS)[number]

export type Latency = { ms: number } | { min_ms: number; max_ms: number }

/** A rule as a client writes it; absent (or null) fields take their defaults. */
export interface FaultInput {
  method?: FaultMethod | null
  path: string
  workspace?: string | null
  latency?: Latency | null
  status?: number | null
  detail?: string | null
  probability?: number | null
  seed?: number | null
  times?: number | null
  drop_after_events?: number | null
}

/** A rule as hangar holds it: every field present, `null` when unset; `seed` is always the one in use. */
export interface FaultRule {
  id: string
  method: FaultMethod
  path: string
  workspace: string | null
  latency: Latency | null
  status: number | null
  detail: string | null
  probability: number
  seed: number
  times: number | null
  drop_after_events: number | null
  created_at: string
  /** How many times the fault was applied. */
  matched: number
}

/** What a matching rule does to one request. */
export interface FaultOutcome {
  latencyMs: number
  status: number | undefined
  detail: string | undefined
  dropAfterEvents: number | undefined
}

/**
 * A path pattern: a regular expression written `/…/` (unanchored unless it says `^…$`), or a glob
 * where `*` matches within one path segment and `**` any number of segments (`/v2/**` also matches
 * `/v2`). Throws a RuleViolation naming the problem.
 */
export function compilePathPattern(pattern: string): RegExp {
  if (pattern.length > 2 && pattern.startsWith('/') && pattern.endsWith('/')) {
    try {
      return new RegExp(pattern.slice(1, -1))
    } catch (error) {
      throw new RuleViolation(`path ${pattern} is not a valid regular expression: ${(error as Error).message}`)
    }
  }
  if (!pattern.startsWith('/') && !pattern.startsWith('*')) {
    throw new RuleViolation(`path ${pattern} must start with / or *, or be a regular expression written /…/`)
  }
  if (/\*\*\*|[^/]\*\*|\*\*[^/]/.test(pattern)) {
    throw new RuleViolation(`path ${pattern}: ** must stand alone as a whole path segment`)
  }
  return globToRegExp(pattern)
}

const GLOB_TOKENS: ReadonlyMap<string, string> = new Map([
  ['/**', '(?:/.*)?'],
  ['**', '.*'],
  ['*', '[^/]*'],
])

/** Converts a glob (see compilePathPattern) to an anchored regular expression, without checking it. */
export function globToRegExp(glob: string): RegExp {
  const source = glob
    .split(/(\/\*\*(?=\/|$)|\*\*|\*)/)
    .map((part) => GLOB_TOKENS.get(part) ?? part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
    .join('')
  return new RegExp(`^${source}$`)
}

/** mulberry32: a tiny 32-bit generator; `next()` returns a float in [0, 1). */
function generator(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

/** FNV-1a of a string: the default seed of a rule, derived from its id. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}


export interface FaultChange {
  action: 'added' | 'removed' | 'cleared'
  fault_id: string | null
}

interface Held {
  rule: FaultRule
  pattern: RegExp
  random: () => number
}

/** The fault rules, tried in the order they were added: the first that fires decides. */
export class FaultInjector {
  readonly #clock: Clock
  readonly #rules = new Map<string, Held>()
  readonly #drops = new WeakMap<FastifyRequest, number>()
  readonly #onChange: ((change: FaultChange) => void) | undefined

  /** `onChange` hears of every rule added or removed (the inspector's live view). */
  constructor(clock: Clock, onChange?: (change: FaultChange) => void) {
    this.#clock = clock
    this.#onChange = onChange
  }

  /** Adds a rule; throws a RuleViolation (a 400) when it cannot work as written. */
  add(input: FaultInput): FaultRule {
    const pattern = compilePathPattern(input.path)
    const status = input.status ?? null
    const latency = input.latency ?? null
    const drop = input.drop_after_events ?? null
    const probability = input.probability ?? 1
    if (status !== null && !(Number.isInteger(status) && status >= 400 && status <= 599)) {
      throw new RuleViolation(`status ${status} is not an error status (400 to 599)`)
    }
    if (!(probability >= 0 && probability <= 1)) throw new RuleViolation(`probability ${probability} is not between 0 and 1`)
    if (latency !== null && 'min_ms' in latency && latency.min_ms > latency.max_ms) {
      throw new RuleViolation(`latency min_ms (${latency.min_ms}) is greater than max_ms (${latency.max_ms})`)
    }
    if (status === null && latency === null && drop === null) {
      throw new RuleViolation('a fault needs at least one of status, latency or drop_after_events')
    }
    if (input.detail != null && status === null) throw new RuleViolation('detail needs a status to answer with')
    if (drop !== null && status !== null) throw new RuleViolation('drop_after_events cannot be combined with status: the request is answered with the status')
    if (input.times != null && !(Number.isInteger(input.times) && input.times >= 1)) throw new RuleViolation('times must be a positive integer')

    const id = randomUUID()
    const seed = input.seed ?? fnv1a(id)
    const rule: FaultRule = {
      id,
      method: input.method ?? '*',
      path: input.path,
      workspace: input.workspace?.toLowerCase() ?? null,
      latency,
      status,
      detail: input.detail ?? null,
      probability,
      seed,
      times: input.times ?? null,
      drop_after_events: drop,
      created_at: new Date(this.#clock.now()).toISOString(),
      matched: 0,
    }
    this.#rules.set(id, { rule, pattern, random: generator(seed) })
    this.#onChange?.({ action: 'added', fault_id: id })
    return { ...rule }
  }

  /** Every rule, in the order they are tried. */
  list(): FaultRule[] {
    return [...this.#rules.values()].map(({ rule }) => ({ ...rule }))
  }

  /** Removes one rule; false when there is none with that id. */
  remove(id: string): boolean {
    const removed = this.#rules.delete(id)
    if (removed) this.#onChange?.({ action: 'removed', fault_id: id })
    return removed
  }

  clear(): void {
    this.#rules.clear()
    this.#onChange?.({ action: 'cleared', fault_id: null })
  }

  get size(): number {
    return this.#rules.size
  }

  /**
   * The outcome for one request, or undefined when no rule fires. Each candidate rule (method,
   * path and workspace match, `times` not used up) draws from its generator; the first whose draw is
   * under its probability fires, counts the match and draws its latency when it has a range.
   */
  /** Whether any rule is installed (none: no request needs to be matched at all). */
  get active(): boolean {
    return this.#rules.size > 0
  }

  match(method: string, path: string, workspace: string | null): FaultOutcome | undefined {
    const verb = method.toUpperCase()
    for (const { rule, pattern, random } of this.#rules.values()) {
      if (rule.method !== '*' && rule.method !== verb) continue
      if (rule.workspace !== null && rule.workspace !== workspace) continue
      if (!pattern.test(path)) continue
      if (rule.times !== null && rule.matched >= rule.times) continue
      if (random() >= rule.probability) continue
      rule.matched += 1
      return {
        latencyMs: latencyOf(rule.latency, random),
        status: rule.status ?? undefined,
        detail: rule.status === null ? undefined : (rule.detail ?? phrase(rule.status)),
        dropAfterEvents: rule.drop_after_events ?? undefined,
      }
    }
    return undefined
  }

  /** `match` for a request, remembering its stream drop for `dropAfter`. */
  matchRequest(request: FastifyRequest, path: string): FaultOutcome | undefined {
    const outcome = this.match(request.method, path, request.tenantId || null)
    if (outcome?.dropAfterEvents !== undefined) this.#drops.set(request, outcome.dropAfterEvents)
    return outcome
  }

  /** After how many events the request's event stream must be cut, when a fault said so. */
  dropAfter(request: FastifyRequest): number | undefined {
    return this.#drops.get(request)
  }
}

function latencyOf(latency: Latency | null, random: () => number): number {
  if (latency === null) return 0
  if ('ms' in latency) return latency.ms
  return latency.min_ms + Math.floor(random() * (latency.max_ms - latency.min_ms + 1))
}

const pathOf = (url: string) => {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}

const SHUTDOWN = Symbol('shutdown')

/**
 * Applies the faults to every request whose path is not excluded. The hook is a root `preParsing`
 * one: it runs after routing and after the scopes' `onRequest` gates (so `request.tenantId` is
 * known where a gate sets it, and a request refused by its gate is answered by the gate), and
 * before the body is read and validated. A latency waits on the clock (real time on a running
 * clock; a manual clock must be moved); a client that leaves ends the wait, and closing the app
 * lets every waiting request go on.
 */
export function installFaults(app: FastifyInstance, faults: FaultInjector, clock: Clock, options: { exclude: (path: string) => boolean }) {
  const waiting = new Set<AbortController>()
  app.addHook('preClose', (done) => {
    for (const controller of waiting) controller.abort(SHUTDOWN)
    done()
  })

  /** Waits `ms` on the clock; false when the client left meanwhile. */
  const hold = async (reply: FastifyReply, ms: number): Promise<boolean> => {
    const controller = new AbortController()
    const left = () => {
      if (!reply.raw.writableFinished) controller.abort()
    }
    waiting.add(controller)
    reply.raw.once('close', left)
    try {
      await clock.until(clock.now() + ms, controller.signal)
      return true
    } catch (reason) {
      return reason === SHUTDOWN
    } finally {
      waiting.delete(controller)
      reply.raw.off('close', left)
    }
  }

  /** What a request meets when a fault rule is installed: latency, then an error status, or nothing. */
  const apply = async (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload) => {
    const path = pathOf(clientUrl(request))
    if (options.exclude(path)) return payload
    const outcome = faults.matchRequest(request, path)
    if (outcome === undefined) return payload
    if (outcome.latencyMs > 0 && !(await hold(reply, outcome.latencyMs))) {
      // Nobody is left to answer: stop here, quietly.
      reply.hijack()
      return payload
    }
    if (outcome.status !== undefined) throw new ApiError(outcome.status, outcome.detail ?? phrase(outcome.status))
    return payload
  }
  // Without rules (the usual case) a request passes without a promise made for it.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!faults.active) return done(null, payload)
    apply(request, reply, payload).then((passed) => done(null, passed), done)
  })
}
