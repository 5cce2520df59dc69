// `hangar record` for WebSockets (the session protocol's `GET /threads/{id}/stream/events` with
// `transport: "websocket"`): the client's socket is relayed to one opened on the upstream, frame for
// frame both ways, and the exchange is written when either side closes: every frame, which side
// sent it, when (ms after the upgrade), JSON when it parses, secrets blanked as for HTTP. An
// upstream that refuses the upgrade or cannot be reached closes the client's socket with 1011 and
// the reason, and is recorded, partial.

import type { FastifyRequest } from 'fastify'
import WebSocket from 'ws'
import type { Clock } from '../clock.js'
import { bodyValue, scrub, type CapturedExchange, type CapturedFrame } from './capture.js'

export interface Relaying {
  base: string
  apiKey?: string
  clock: Clock
  write: (exchange: CapturedExchange) => void
  remember: (headers: Headers) => void
  track: (relaying: Promise<void>) => void
}

/** Relays a client's socket to the upstream until either side closes. */
export function relaySocket(client: WebSocket, request: FastifyRequest, { base, apiKey, clock, write, remember, track }: Relaying): void {
  const started = clock.now()
  const headers = new Headers()
  for (const name of ['x-api-key', 'authorization']) {
    const value = request.headers[name]
    if (typeof value === 'string') headers.set(name, value)
  }
  if (apiKey && !headers.has('x-api-key') && !headers.has('authorization')) headers.set('x-api-key', apiKey)
  remember(headers)
  const secrets = [apiKey, headers.get('x-api-key'), headers.get('authorization')?.replace(/^Bearer\s+/i, ''), headers.get('authorization')]
    .filter((s): s is string => typeof s === 'string' && s !== '')
  const frames: CapturedFrame[] = []
  const frame = (from: CapturedFrame['from'], data: WebSocket.RawData) =>
    frames.push({ from, data: bodyValue(data.toString()) ?? '', at_ms: clock.now() - started })
  const sent: Record<string, string> = {}
  headers.forEach((value, name) => {
    sent[name] = value
  })
  const upstream = new WebSocket(`${base.replace(/^http/, 'ws')}${request.url}`, { headers: sent })
  const pending: WebSocket.RawData[] = []
  let status = 101
  let problem: string | undefined

  track(new Promise<void>((resolve) => {
    let ended = false
    const end = (reason?: string) => {
      if (ended) return
      ended = true
      problem ??= reason
      if (client.readyState === WebSocket.OPEN) client.close(problem ? 1011 : 1000, problem?.slice(0, 120))
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate()
      write(scrub({
        request: { method: 'GET', path: request.url, body: null },
        response: { status, content_type: 'websocket', frames },
        started_at: new Date(started).toISOString(),
        duration_ms: clock.now() - started,
        ...(problem === undefined ? {} : { partial: { reason: problem } }),
      }, secrets) as CapturedExchange)
      resolve()
    }
    client.on('message', (data) => {
      frame('client', data)
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data.toString())
      else pending.push(data)
    })
    upstream.on('open', () => {
      for (const data of pending.splice(0)) upstream.send(data.toString())
    })
    upstream.on('message', (data) => {
      frame('server', data)
      if (client.readyState === WebSocket.OPEN) client.send(data.toString())
    })
    upstream.on('unexpected-response', (_req, response) => {
      status = response.statusCode ?? 502
      end(`the upstream refused the WebSocket: ${status}`)
    })
    upstream.on('error', (error) => end(`the upstream ${base} did not answer: ${error.message}`))
    upstream.on('close', () => end(client.readyState === WebSocket.OPEN ? 'the upstream closed the socket' : undefined))
    client.on('close', () => end())
    client.on('error', () => end('the client socket failed'))
  }))
}
