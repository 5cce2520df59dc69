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
  reply.header('x-pagination-total', String(sorted.length))
  if (options.offset + page.length < sorted.length) reply.header('x-pagination-next', String(options.offset + page.length))
  if (!options.select?.length) return page
  return page.map((item) => Object.fromEntries(options.select!.filter((f) => f in item).map((f) => [f, item[f as keyof T]])) as T)
}
