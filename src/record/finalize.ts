// What `hangar record` asks the upstream when it stops: what a replay needs that the clients'
// own requests may not have shown — each recorded graph's assistant, drawing and schemas, and each
// recorded thread's whole history (the checkpoints every run wrote). It is written, without
// secrets, to `upstream.json`; then the recording is compiled into replay files (compile.ts).
// What cannot be read (an upstream already gone) is noted in the file, and the replay goes without.

import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { systemAssistantId } from '../agent/system-assistants.js'
import { scrub, type CapturedExchange } from './capture.js'
import { compileRecording, runCreations, type UpstreamSnapshot } from './compile.js'

export const UPSTREAM_FILE = 'upstream.json'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** How long one read of the upstream may take (the JS dev server derives a graph's schemas on first ask: 20 s or more). */
const READ_TIMEOUT_MS = 180_000

export interface Upstream {
  base: string
  /** The credential headers to send (kept in memory only). */
  headers: () => Record<string, string>
  secrets: () => string[]
}

/** Reads what the replay needs from the upstream, writes upstream.json and the replay files; returns what went wrong. */
export async function finalizeRecording(out: string, upstream: Upstream, exchanges: CapturedExchange[], manifest: { upstream: string; recorded_at: string }): Promise<string[]> {
  const problems: string[] = []
  const attempt = async (method: string, path: string, body: unknown): Promise<unknown> => {
    const response = await fetch(`${upstream.base}${path}`, {
      method,
      headers: { ...upstream.headers(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    })
    if (!response.ok) throw new ReadError(`${response.status} ${(await response.text()).slice(0, 200)}`, response.status >= 500)
    return await response.json()
  }
  // A read that fails on the upstream's side (5xx, a dropped connection) is tried once more.
  const read = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt(method, path, body)
      } catch (error) {
        if (tries < 2 && (!(error instanceof ReadError) || error.retry)) continue
        problems.push(`${method} ${path}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`)
        return null
      }
    }
  }
  const creations = runCreations(exchanges)
  const snapshot: UpstreamSnapshot = { assistants: {}, threads: {} }
  const assistantIds = [...new Set(creations.map((c) => c.assistant).filter((a): a is string => a !== null))]
  await Promise.all(assistantIds.map(async (given) => {
    // A graph's name stands for its system assistant, whose id the real server derives as hangar does.
    const id = UUID.test(given) ? given.toLowerCase() : systemAssistantId(given)
    const assistant = await read('GET', `/assistants/${id}`) as { graph_id?: string } | null
    const [graph, schemas] = await Promise.all([read('GET', `/assistants/${id}/graph`), read('GET', `/assistants/${id}/schemas`)])
    snapshot.assistants[given] = { assistant_id: id, graph_id: assistant?.graph_id ?? (UUID.test(given) ? null : given), graph, schemas }
  }))
  const threads = [...new Set(creations.map((c) => c.thread).filter((t): t is string => t !== null))]
  await Promise.all(threads.map(async (thread) => {
    const history = await read('POST', `/threads/${thread}/history`, { limit: 1000 })
    if (Array.isArray(history)) snapshot.threads[thread] = history
  }))
  const scrubbed = scrub({ ...snapshot, problems }, upstream.secrets()) as UpstreamSnapshot
  writeFileSync(join(out, UPSTREAM_FILE), `${JSON.stringify(scrubbed, null, 2)}\n`)
  compileRecording(out, exchanges, scrubbed, manifest)
  return problems
}

class ReadError extends Error {
  constructor(message: string, readonly retry: boolean) {
    super(message)
  }
}

/** The exchanges of a recording directory, in the order they ended. */
export function readExchanges(file: string): CapturedExchange[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as CapturedExchange)
}
