// The inspector page at /_hangar/ui: static files only. The page holds no data and needs no admin
// token to load; everything it shows it reads through the documented APIs, with the token the
// person gives it. Its markup and styles are in ui/, its scripts compiled from ui/src to dist/ui.

import { readFile } from 'node:fs/promises'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { ApiError } from '../errors.js'
import { PACKAGE_ROOT } from '../package-root.js'

/** What a name may be: one segment of lowercase letters, digits and dashes, and a known extension (so no path can escape). */
const FILE_NAME = /^[a-z0-9-]+\.(html|css|js)$/

const TYPES: Record<string, { type: string; dir: string }> = {
  html: { type: 'text/html; charset=utf-8', dir: 'ui/' },
  css: { type: 'text/css; charset=utf-8', dir: 'ui/' },
  js: { type: 'text/javascript; charset=utf-8', dir: 'dist/ui/' },
}

/** Only this origin's own scripts and styles; requests may go anywhere (feedback URLs can name another host). */
const POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src *; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

async function sendFile(reply: FastifyReply, name: string) {
  const match = FILE_NAME.exec(name)
  if (!match) throw ApiError.notFound('Not Found')
  const { type, dir } = TYPES[match[1]]
  let body: Buffer
  try {
    body = await readFile(new URL(`${dir}${name}`, PACKAGE_ROOT))
  } catch {
    throw ApiError.notFound('Not Found')
  }
  return reply
    .type(type)
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', POLICY)
    .send(body)
}

/** Mounted at `/_hangar/ui`, outside the admin token's gate. */
export const inspectorRoutes: FastifyPluginAsync = async (app) => {
  const hidden = { schema: { hide: true } }
  app.get('/', hidden, async (_request, reply) => sendFile(reply, 'index.html'))
  app.get<{ Params: { file: string } }>('/:file', hidden, async (request, reply) => sendFile(reply, request.params.file))
}
