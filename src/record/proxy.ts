// `hangar record`: hangar as a proxy in front of a real agent server. Every request a client makes
// (the SDKs, useStream, RemoteGraph, curl) is forwarded as it is and answered with what the
// upstream answers, streams streamed through as they come; each exchange is written to the
// recording directory as it ends (capture.ts says what is kept, and that secrets are not); a
// WebSocket is relayed frame by frame (socket-relay.ts). A stream the upstream drops is passed on
// dropped, and kept as far as it went, marked partial. When it stops, once every response passing
// through is written, it reads what a replay needs from the upstream and compiles the replay files
// (finalize.ts, compile.ts).

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import websocket from '@fastify/websocket'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { Clock } from '../clock.js'
import { VERSION } from '../version.js'
import { bodyValue, EventStreamReader, scrub, type CapturedExchange } from './capture.js'
import { finalizeRecording, readExchanges } from './finalize.js'
import { relaySocket } from './socket-relay.js'

export interface RecorderOptions {
  /** The agent server's URL (a deployment's, or `langgraph dev`'s). */
  upstream: string
  /** Sent to the upstream as `x-api-key` when the client sends no key of its own. Never written. */
  apiKey?: string
  /** The recording directory: `recording.json` (what was recorded, from where) and `exchanges.jsonl`. */
  out: string
  clock?: Clock
  logLevel?: string
}

/** The file of a recording that holds its exchanges, one JSON object per line, in the order they ended. */
export const EXCHANGES_FILE = 'exchanges.jsonl'
export const MANIFEST_FILE = 'recording.json'

/** Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and those fetch recomputes. */
const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'content-encoding'])

/** The upstream's URL without credentials, as the manifest shows it. */
function shownUrl(upstream: string): string {
  const url = new URL(upstream)
  url.username = ''
  url.password = ''
  return url.toString().replace(/\/$/, '')
}

export function buildRecorder(options: RecorderOptions): FastifyInstance {
  const clock = options.clock ?? Clock.system()
  const base = options.upstream.replace(/\/$/, '')
  mkdirSync(options.out, { recursive: true })
  const manifest = {
    format: 'hangar-recording/1',
    upstream: shownUrl(options.upstream),
    recorded_at: new Date(clock.now()).toISOString(),
    hangar: VERSION,
  }
  const writeManifest = (extra: object = {}) => writeFileSync(join(options.out, MANIFEST_FILE), `${JSON.stringify({ ...manifest, ...extra }, null, 2)}\n`)
  writeManifest()
  const write = (exchange: CapturedExchange) => appendFileSync(join(options.out, EXCHANGES_FILE), `${JSON.stringify(exchange)}\n`)
  // Responses still passing through: recording stops once each is written.
  const inflight = new Set<Promise<void>>()
  const track = (passing: Promise<void>) => {
    inflight.add(passing)
    void passing.finally(() => inflight.delete(passing))
  }
  // The credentials the clients sent last (in memory only): the reads made when recording stops use them.
  let credentials: Record<string, string> = options.apiKey ? { 'x-api-key': options.apiKey } : {}
  const remember = (headers: Headers) => {
    const seen = Object.fromEntries(['x-api-key', 'authorization'].flatMap((name) => (headers.has(name) ? [[name, headers.get(name)!]] : [])))
    if (Object.keys(seen).length > 0) credentials = seen
  }

  const app = Fastify({ logger: { level: options.logLevel ?? 'info' }, bodyLimit: 64 * 1024 * 1024 })
  // Bodies pass through as they came; the recording reads them as JSON when they are.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
  const forwarding = { base, apiKey: options.apiKey, clock, write, remember, track }
  app.register(websocket, { options: { maxPayload: 64 * 1024 * 1024 } })
  app.register(async (routes) => {
    routes.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'],
      url: '/*',
      handler: (request, reply) => forward(request, reply, forwarding),
    })
    // A GET may be a WebSocket (the session protocol's): relayed frame by frame.
    routes.route({
      method: 'GET',
      url: '/*',
      handler: (request, reply) => forward(request, reply, forwarding),
      wsHandler: (socket, request) => relaySocket(socket, request, forwarding),
    })
  })
  // When recording stops: what a replay needs from the upstream, then the replay files.
  app.addHook('onClose', async () => {
    await Promise.allSettled([...inflight])
    const secrets = [options.apiKey, ...Object.values(credentials), ...Object.values(credentials).map((v) => v.replace(/^Bearer\s+/i, ''))]
      .filter((v): v is string => typeof v === 'string' && v !== '')
    const upstream = { base, headers: () => credentials, secrets: () => secrets }
    const problems = await finalizeRecording(options.out, upstream, readExchanges(join(options.out, EXCHANGES_FILE)), manifest)
    writeManifest({ finished_at: new Date(clock.now()).toISOString(), ...(problems.length > 0 ? { problems } : {}) })
    for (const problem of problems) app.log.warn(`hangar record: could not read from the upstream: ${problem}`)
  })
  return app
}

interface Forwarding {
  base: string
  apiKey?: string
  clock: Clock
  write: (exchange: CapturedExchange) => void
  remember: (headers: Headers) => void
  /** Hands over the work of passing a response through, which goes on after the handler returns. */
  track: (passing: Promise<void>) => void
}

async function forward(request: FastifyRequest, reply: FastifyReply, { base, apiKey, clock, write, remember, track }: Forwarding) {
  const started = clock.now()
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue
    headers.set(name, Array.isArray(value) ? value.join(', ') : value)
  }
  if (apiKey && !headers.has('x-api-key') && !headers.has('authorization')) headers.set('x-api-key', apiKey)
  remember(headers)
  // Every credential the exchange carries is blanked wherever it shows up in what is written.
  const secrets = [apiKey, headers.get('x-api-key'), headers.get('authorization')?.replace(/^Bearer\s+/i, ''), headers.get('authorization')]
    .filter((s): s is string => typeof s === 'string' && s !== '')
  const body = Buffer.isBuffer(request.body) ? request.body : undefined
  const captured = (response: CapturedExchange['response'], partial?: string): CapturedExchange => ({
    request: { method: request.method, path: request.url, body: scrub(bodyValue(body?.toString('utf8') ?? ''), secrets) ?? null },
    response: scrub(response, secrets) as CapturedExchange['response'],
    started_at: new Date(started).toISOString(),
    duration_ms: clock.now() - started,
    ...(partial === undefined ? {} : { partial: { reason: partial } }),
  })

  // A client that goes away ends the upstream request too.
  const upstreamAbort = new AbortController()
  let ended = false
  reply.raw.on('close', () => {
    if (!ended && !reply.raw.writableFinished) upstreamAbort.abort(new Error('the client closed the connection'))
  })
  let response: Response
  try {
    response = await fetch(`${base}${request.url}`, {
      method: request.method,
      headers,
      body: body && body.length > 0 && !['GET', 'HEAD'].includes(request.method) ? new Uint8Array(body) : undefined,
      redirect: 'manual',
      signal: upstreamAbort.signal,
    })
  } catch (error) {
    ended = true
    const reason = `the upstream ${base} did not answer: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`
    write(captured({ status: 502, content_type: 'application/json', body: { detail: reason } }, reason))
    return reply.code(502).send({ detail: `hangar record: ${reason}` })
  }
  const contentType = response.headers.get('content-type')
  reply.code(response.status)
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) reply.header(name, value)
  })
  const streamed = contentType?.includes('text/event-stream') ?? false
  const events = new EventStreamReader(() => clock.now())
  const decoder = new TextDecoder()
  let text = ''
  const out = new PassThrough()
  track((async () => {
    try {
      if (response.body) {
        for await (const chunk of Readable.fromWeb(response.body as never)) {
          out.write(chunk)
          const piece = decoder.decode(chunk as Uint8Array, { stream: true })
          if (streamed) events.push(piece)
          else text += piece
        }
      }
      ended = true
      out.end()
      write(captured(streamed ? { status: response.status, content_type: contentType, events: events.events } : { status: response.status, content_type: contentType, body: bodyValue(text) ?? null }))
    } catch (error) {
      ended = true
      const reason = upstreamAbort.signal.aborted ? 'the client closed the connection' : `the upstream dropped the response: ${(error as Error).message}`
      // The client sees the drop as it happened: the response ends abruptly.
      out.destroy(error as Error)
      reply.raw.destroy()
      const rest = streamed ? (events.rest === '' ? {} : { unfinished: events.rest }) : {}
      write(captured({ status: response.status, content_type: contentType, ...(streamed ? { events: events.events, ...rest } : { body: bodyValue(text) ?? null }) }, reason))
    }
  })())
  return reply.send(out)
}
