import type { FastifyRequest } from 'fastify'

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0].trim()

/**
 * The base URL (scheme://host[:port], no trailing slash) under which a client reaches hangar, for
 * the URLs hangar hands out: `HANGAR_PUBLIC_URL` when set, else what the request says — the
 * `X-Forwarded-Proto`/`X-Forwarded-Host` of a proxy, or its own `Host` — so URLs work behind Docker
 * port mappings and proxies.
 */
export function publicBase(request: FastifyRequest, configured: string): string {
  if (configured) return configured
  const proto = first(request.headers['x-forwarded-proto']) || request.protocol
  const host = first(request.headers['x-forwarded-host']) || request.headers.host || request.hostname
  return `${proto}://${host}`
}
