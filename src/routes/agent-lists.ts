import type { FastifyReply } from 'fastify'

/**
 * Sorting, paging and field selection of the agent server's search results, with the
 * `X-Pagination-Total` / `X-Pagination-Next` headers the SDK reads.
 */
export function sortAndPage<T extends object>(
  reply: FastifyReply,
  items: T[],
  options: { sortBy: string; order: 'asc' | 'desc'; limit: number; offset: number; select?: string[] | null },
): T[] {
  const key = options.sortBy as keyof T
  const direction = options.order === 'asc' ? 1 : -1
  const sorted = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => {
      const x = a.item[key] as unknown as string
      const y = b.item[key] as unknown as string
      return (x < y ? -1 : x > y ? 1 : 0) * direction || (a.index - b.index) * direction
    })
    .map(({ item }) => item)
  const page = sorted.slice(options.offset, options.offset + options.limit)
  return sendPage(reply, { items: page, total: sorted.length, offset: options.offset, select: options.select })
}

/**
 * A page the store already sorted and cut, with the same pagination headers and field selection
 * as `sortAndPage`.
 */
export function sendPage<T extends object>(
  reply: FastifyReply,
  page: { items: T[]; total: number; offset: number; select?: string[] | null },
): T[] {
  const { items, total, offset, select } = page
  reply.header('x-pagination-total', String(total))
  if (offset + items.length < total) reply.header('x-pagination-next', String(offset + items.length))
  if (!select?.length) return items
  return items.map((item) => Object.fromEntries(select.filter((f) => f in item).map((f) => [f, item[f as keyof T]])) as T)
}
