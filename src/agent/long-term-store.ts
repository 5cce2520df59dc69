// The agent server's store (long-term memory): items under namespaces of labels, one store per
// agent-server scope, with time-to-live on hangar's clock. The rules the real server applies are
// here: which namespaces it refuses, what `ttl` and `refresh_ttl` do, how search filters, ranks and
// pages, and how namespaces are listed. docs/agent-server-wire.md ("Store") says what was observed.
// A caller that is a user (`HANGAR_AGENT_AUTH=users`) reaches only its own namespaces, those whose
// first label is its identity (LangGraph's documented `on("store")` handler): naming another is
// refused (Forbidden), after the labels are checked (a 422 first, as on the real server). A graph's
// own store steps have no caller.

import type { Clock } from '../clock.js'
import { ownsNamespace, type Caller } from '../domain/agent-users.js'
import { Forbidden, Unprocessable } from '../domain/errors.js'
import type { StoreItemRecord, StoreItemRepository } from '../store/store-items.js'
import { checkFilter, indexedText, lexicalScorer, matchesFilter } from './store-search.js'

type JsonObject = Record<string, unknown>

/** An item as the API answers it (`score` only in the results of a search with a query). */
export interface StoreItem {
  namespace: string[]
  key: string
  value: JsonObject
  created_at: string
  updated_at: string
  score?: number
}

export interface StorePut {
  namespace: string[]
  key: string
  value: JsonObject
  /** null: the whole value is indexed; false: not indexed; or the field paths that are. */
  index: false | string[] | null
  /** Minutes until the item is gone (null: never). */
  ttl: number | null
}

export interface StoreSearch {
  namespacePrefix: string[]
  filter: JsonObject | null
  limit: number
  offset: number
  query: string | null
  /** null: the store's default, which refreshes. */
  refreshTtl: boolean | null
}

export interface NamespaceListing {
  prefix: string[]
  suffix: string[]
  maxDepth: number | null
  limit: number
  offset: number
}

/** The latest instant a Date can hold: an expiry beyond it is as good as never. */
const LATEST = 8.64e15
const MINUTE = 60_000
/** A label of a namespace pattern that matches any label. */
const WILDCARD = '*'

/** Refuses (422, the real server's sentence) a namespace with an empty label or one holding a period. */
function checkLabels(namespace: readonly string[]): void {
  if (namespace.some((label) => label === '' || label.includes('.'))) {
    throw new Unprocessable(`Namespace labels cannot be empty or contain periods. Received: ${namespace.join('.')}`)
  }
}

/** Refuses (Forbidden) a namespace that is not the caller's. */
function checkOwner(caller: Caller, namespace: readonly string[]): void {
  if (!ownsNamespace(caller, namespace)) throw new Forbidden()
}

/** When an item written (or refreshed) at `now` with this ttl expires: epoch ms, or null for never. */
function expiry(now: number, ttlMinutes: number | null): number | null {
  if (ttlMinutes === null) return null
  return Math.floor(Math.min(LATEST, Math.max(-LATEST, now + ttlMinutes * MINUTE)))
}

const present = (record: StoreItemRecord): StoreItem => ({
  namespace: record.namespace.split('.'),
  key: record.key,
  value: JSON.parse(record.value) as JsonObject,
  created_at: new Date(record.createdAt).toISOString(),
  updated_at: new Date(record.updatedAt).toISOString(),
})

/** Label by label, then the shorter first: a stable order for namespaces. */
function compareNamespaces(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1
  }
  return a.length - b.length
}

const matchesAt = (namespace: string[], pattern: string[], start: number) =>
  pattern.every((label, i) => label === WILDCARD || namespace[start + i] === label)

export class AgentStore {
  readonly #items: StoreItemRepository
  readonly #clock: Clock

  constructor(options: { items: StoreItemRepository; clock: Clock }) {
    this.#items = options.items
    this.#clock = options.clock
  }

  /** Creates or replaces an item (its `created_at` is kept; its ttl starts again). */
  put(scope: string, item: StorePut, caller: Caller = null): void {
    if (item.namespace.length === 0) throw new Unprocessable('Namespace is required')
    checkLabels(item.namespace)
    checkOwner(caller, item.namespace)
    if (item.namespace[0] === 'langgraph') throw new Unprocessable(`Root label for namespace cannot be "langgraph". Received: ${item.namespace.join('.')}`)
    const now = this.#clock.now()
    const ttlMinutes = item.ttl === null || Number.isNaN(item.ttl) ? null : item.ttl
    this.#items.put(scope, {
      namespace: item.namespace.join('.'),
      key: item.key,
      value: JSON.stringify(item.value),
      indexFields: item.index === null ? null : JSON.stringify(item.index),
      ttlMinutes,
      expiresAt: expiry(now, ttlMinutes),
    }, now)
  }

  /** The item, or null (no item lives in the empty namespace); a read refreshes its ttl unless told not to. */
  get(scope: string, namespace: string[], key: string, refreshTtl: boolean | null, caller: Caller = null): StoreItem | null {
    checkLabels(namespace)
    checkOwner(caller, namespace)
    if (namespace.length === 0) return null
    const now = this.#clock.now()
    const record = this.#items.get(scope, namespace.join('.'), key, now)
    if (!record) return null
    this.#refresh([record], refreshTtl, now)
    return present(record)
  }

  /** Removes the item; removing what is not there is no error. */
  delete(scope: string, namespace: string[], key: string, caller: Caller = null): void {
    checkLabels(namespace)
    checkOwner(caller, namespace)
    if (namespace.length > 0) this.#items.delete(scope, namespace.join('.'), key)
  }

  /**
   * Items under the prefix that pass the filter: most recently written first, or with a query
   * ranked by `lexicalScorer` (ties keep that order; items indexed `false` are left out). The page
   * returned has its ttls refreshed unless told not to.
   */
  search(scope: string, request: StoreSearch, caller: Caller = null): StoreItem[] {
    checkLabels(request.namespacePrefix)
    checkOwner(caller, request.namespacePrefix)
    const filter = request.filter ?? {}
    checkFilter(filter)
    const filtered = Object.keys(filter).length > 0
    const now = this.#clock.now()
    const prefix = request.namespacePrefix.join('.')
    const query = request.query ?? ''
    const page: { record: StoreItemRecord; score: number | undefined }[] = []
    if (query === '') {
      // In order: rows are read (and values parsed) only until the page is full.
      let skipped = 0
      for (const record of this.#items.scan(scope, prefix, now)) {
        if (page.length >= request.limit) break
        if (filtered && !matchesFilter(JSON.parse(record.value) as JsonObject, filter)) continue
        if (skipped < request.offset) skipped++
        else page.push({ record, score: undefined })
      }
    } else {
      // Every item is ranked; a value is parsed only when a filter or its index fields need it (the
      // whole document's text is the JSON stored, which JSON.stringify wrote), and only the page's
      // items are read whole.
      const score = lexicalScorer(query)
      const ranked: { seq: number; rank: number; score: number }[] = []
      for (const [seq, json, indexFields] of this.#items.rankable(scope, prefix, now)) {
        const index = indexFields === null ? null : JSON.parse(indexFields) as false | string[] | null
        if (index === false) continue
        const value = filtered || index !== null ? JSON.parse(json) as JsonObject : undefined
        if (filtered && !matchesFilter(value!, filter)) continue
        const text = index === null ? json : indexedText(value!, index)!
        ranked.push({ seq, rank: ranked.length, score: score(text) })
      }
      ranked.sort((a, b) => b.score - a.score || a.rank - b.rank)
      for (const { seq, score } of ranked.slice(request.offset, request.offset + request.limit)) page.push({ record: this.#items.bySeq(seq)!, score })
    }
    this.#refresh(page.map((each) => each.record), request.refreshTtl, now)
    return page.map(({ record, score }) => (score === undefined ? present(record) : { ...present(record), score }))
  }

  /**
   * The namespaces holding items, matching the prefix and suffix (`*` matches any label), cut to
   * `maxDepth`, sorted, paged; of a user's, only its own (another's prefix finds nothing).
   */
  namespaces(scope: string, request: NamespaceListing, caller: Caller = null): string[][] {
    checkLabels(request.prefix)
    checkLabels(request.suffix)
    const { prefix, suffix, maxDepth } = request
    const matching = this.#items.namespaces(scope, this.#clock.now())
      .map((text) => text.split('.'))
      .filter((ns) => ownsNamespace(caller, ns))
      .filter((ns) => ns.length >= prefix.length && matchesAt(ns, prefix, 0))
      .filter((ns) => ns.length >= suffix.length && matchesAt(ns, suffix, ns.length - suffix.length))
    const cut = maxDepth === null ? matching : matching.map((ns) => ns.slice(0, maxDepth))
    const distinct = [...new Map(cut.map((ns) => [ns.join('.'), ns])).values()]
    return distinct.sort(compareNamespaces).slice(request.offset, request.offset + request.limit)
  }

  #refresh(records: StoreItemRecord[], refreshTtl: boolean | null, now: number): void {
    if (refreshTtl === false) return
    this.#items.setExpiry(records.flatMap((r) => (r.ttlMinutes === null ? [] : [{ seq: r.seq, expiresAt: expiry(now, r.ttlMinutes)! }])))
  }
}
