// Reading the session protocol's SSE stream over real HTTP, for tests: the stream never ends by
// itself, so a reader stops once what it wants has arrived (and fails loudly if the stream ends first).

import { API_KEY } from './helpers.js'

export interface WireEvent {
  type: 'event'
  seq: number
  event_id: string
  method: string
  params: { namespace: string[]; timestamp: number; node?: string; data: Record<string, unknown> }
}

export const ALL_CHANNELS = ['values', 'updates', 'messages', 'tools', 'custom', 'lifecycle', 'input', 'checkpoints', 'tasks']

/** The envelopes of an SSE body's `data:` lines. */
export function envelopes(text: string): WireEvent[] {
  return text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as WireEvent)
}

/** Opens `/stream/events` with `body` and reads until `done(events)` holds; answers the bytes read and the events. */
export async function readEvents(base: string, threadId: string, body: unknown, done: (events: WireEvent[]) => boolean, headers: Record<string, string> = {}) {
  const controller = new AbortController()
  const res = await fetch(`${base}/threads/${threadId}/stream/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  })
  if (res.status !== 200) throw new Error(`stream/events answered ${res.status}: ${await res.text()}`)
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    while (!done(envelopes(text.slice(0, text.lastIndexOf('\n\n') + 2)))) {
      const { value, done: ended } = await reader.read()
      if (ended) throw new Error(`the stream ended before the wanted events arrived; read:\n${text}`)
      text += decoder.decode(value, { stream: true })
    }
  } finally {
    controller.abort()
  }
  const complete = text.slice(0, text.lastIndexOf('\n\n') + 2)
  return { status: res.status, headers: res.headers, text: complete, events: envelopes(complete) }
}

/** Whether a root lifecycle event ended a run `count` times. */
export const rootEnded = (count: number) => (events: WireEvent[]) =>
  events.filter((e) => e.method === 'lifecycle' && e.params.namespace.length === 0 && ['completed', 'interrupted', 'failed'].includes(e.params.data.event as string)).length >= count

/** Sends one command over HTTP; answers the status, content type and parsed (or plain) body. */
export async function command(base: string, threadId: string, body: unknown, raw?: string) {
  const res = await fetch(`${base}/threads/${threadId}/commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: raw ?? JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, type: res.headers.get('content-type'), text, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text }
}
