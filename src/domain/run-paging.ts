// Paging through runs as the tracing service's queries do: newest first (or oldest first), a page
// at a time, each page ending with an opaque cursor that asks for the runs after its last one.
// The cursor is a run's place in that order, so it stays right while runs are added.

import type { Run } from '../store/runs.js'
import { RuleViolation } from './errors.js'
import { parseRunFilter, type FilterSubject, type RunFilter } from './run-filter.js'

/** The size of a page the query does not size: v1's `limit` may only lower it, v2's `page_size` is 1 to 1000. */
export const PAGE = 100

/** A run's place in the newest-first order: its start, then its creation sequence. */
const key = (run: Run) => `${String(Date.parse(run.created_at)).padStart(16, '0')}:${String(run.seq).padStart(16, '0')}`

const writeCursor = (k: string) => Buffer.from(`v1|${k}`).toString('base64url')

function readCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString()
  if (!/^v1\|\d{16}:\d{16}$/.test(text)) throw new RuleViolation('Invalid cursor: pass back the cursor of the previous page as it was.')
  return text.slice(3)
}

/** The filter expressions of a query, parsed (a 400 names the first that is wrong); blank ones are no filter. */
export function parseFilters(q: { filter?: string | null; trace_filter?: string | null; tree_filter?: string | null }): RunFilter[] {
  return [['filter', q.filter], ['trace_filter', q.trace_filter], ['tree_filter', q.tree_filter]]
    .filter((f): f is [string, string] => typeof f[1] === 'string' && f[1].trim() !== '')
    .map(([what, text]) => parseRunFilter(text, what))
}

export function matchesAll(filters: readonly RunFilter[], s: FilterSubject): boolean {
  return filters.every((f) => f.matches(s))
}

export interface PageRequest {
  /** The cursor of the previous page, if this is not the first. */
  cursor?: string | null
  /** The most items the page holds. */
  size: number
  /** Oldest first instead of newest first. */
  asc?: boolean
}

/**
 * One page of `runs` (newest first): from after the cursor, each run `take` turns into an item
 * (undefined: not wanted), until `size` are taken; `next` is the cursor of the page after it, null
 * when no wanted run follows.
 */
export function pageOf<T>(runs: readonly Run[], request: PageRequest, take: (run: Run) => T | undefined): { items: T[]; next: string | null } {
  const after = request.cursor ? readCursor(request.cursor) : undefined
  const asc = request.asc === true
  const ordered = asc ? [...runs].reverse() : runs
  const items: T[] = []
  let last: Run | undefined
  for (const run of ordered) {
    if (after !== undefined && (asc ? key(run) <= after : key(run) >= after)) continue
    const item = take(run)
    if (item === undefined) continue
    if (items.length === request.size) return { items, next: last ? writeCursor(key(last)) : null }
    items.push(item)
    last = run
  }
  return { items, next: null }
}
