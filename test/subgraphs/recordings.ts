// What the subgraph and parallel-branch tests share: the real server's recordings
// (test/fixtures/subgraphs/, README there), hangar serving the equivalent graphs
// (test/fixtures/subgraphs/hangar/ beside the shipped ones), and the projection of each stream
// event onto what a client reads of it — event order, namespaces, nodes, tasks, checkpoints —
// leaving out ids, times and wording the scripted graphs cannot share with the real ones.

import { readFileSync } from 'node:fs'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, runClockUntil, serveApp } from '../helpers.js'

export const GRAPHS = new URL('../fixtures/subgraphs/hangar', import.meta.url).pathname
export const MODES = ['values', 'updates', 'messages-tuple', 'checkpoints', 'tasks', 'debug']

interface Exchange { request: { method: string; path: string; body: string }; response: { status: number; body: string } }
interface Recorded { stream_mode: string[]; options?: { streamSubgraphs?: boolean }; exchanges: Exchange[] }
export type Wire = { event: string; data: any }

export const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/subgraphs/${name}.json`, import.meta.url), 'utf8'))

export function sse(body: string): Wire[] {
  return body.split('\n\n').filter((block) => block.includes('data: ')).map((block) => ({
    event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
    data: JSON.parse(block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')),
  }))
}

/** The recorded streams of some modes (with or without `stream_subgraphs`): the first run, and the resumed one when there is one. */
export function recorded(graph: string, modes: string[], subgraphs = false): Wire[][] {
  const stream = (fixture(graph).streams as Recorded[]).find((s) => s.stream_mode.join() === modes.join() && Boolean(s.options?.streamSubgraphs) === subgraphs)
  if (!stream) throw new Error(`no recording of ${graph} in ${modes.join()} (subgraphs: ${subgraphs})`)
  return stream.exchanges.filter((e) => e.request.path.endsWith('/runs/stream')).map((e) => sse(e.response.body))
}

/** The real graphs write answers as JSON (`a: "approve a"`), hangar's templates as text. */
const unquoted = (text: string) => text.replaceAll('"', '')

/** State keys hangar's graphs add (where the real ones compute: the Send topics, the answers an interrupt step writes). */
const HANGAR_ONLY = /^(topics|answer_[ab]|answer)$/

/** A streamed chunk (the JS server serializes it with `tool_call_chunks`, hangar as Python does, typed `AIMessageChunk`), or a whole message. */
const messageView = (m: any) => (m.type === 'AIMessageChunk' || 'tool_call_chunks' in m ? { chunk: m.content } : { whole: m.type })

/** An event's name with each namespace's task id left out: `updates|researcher:<id>` → `updates|researcher`. */
const eventName = (event: string) => event.replace(/:[0-9a-f-]{36}/g, '')

const keysOf = (values: object) => Object.keys(values).filter((k) => !HANGAR_ONLY.test(k)).sort()

/** What a client reads of one event (ids, times and the wording of joins aside). */
export function view({ event, data }: Wire): unknown {
  const name = eventName(event)
  switch (name.split('|')[0]) {
    case 'metadata': return name
    case 'values': return { [name]: data.__interrupt__ ? { interrupts: data.__interrupt__.map((i: any) => i.value) } : { keys: keysOf(data), messages: data.messages.length, results: data.results?.map(unquoted) } }
    case 'updates': return { [name]: Object.fromEntries(Object.entries(data).map(([node, w]: [string, any]) => [node, node === '__interrupt__' ? w.map((i: any) => i.value) : keysOf(w ?? {})])) }
    case 'messages': return { [name]: data[1].langgraph_node, ns: eventName(data[1].langgraph_checkpoint_ns), ...messageView(data[0]) }
    case 'tasks': return 'result' in data
      ? { [name]: data.name, done: true, interrupts: data.interrupts.map((i: any) => i.value), error: data.error }
      : { [name]: data.name, triggers: data.triggers, ...(data.name === 'research' ? { input: data.input } : {}) }
    // (The JS server's `checkpoints` mode carries only values, metadata and next; hangar's is the fuller Python form.)
    case 'checkpoints': return 'id' in data
      ? { [name]: 'brief', step: data.step, source: data.source }
      : { [name]: data.metadata.step, source: data.metadata.source, next: data.next }
    case 'debug': return { [name]: data.type, step: data.step, ...(data.type === 'checkpoint' ? { next: data.payload.next } : { task: data.payload.name }) }
    default: return { [name]: data }
  }
}

/** hangar with the recorded graphs, the SDK, and a stream that moves the clock along while the run waits on it. */
export async function serve(t: Parameters<typeof serveApp>[0]) {
  const served = await serveApp(t, { graphs: GRAPHS })
  const client = new Client({ apiUrl: served.base, apiKey: API_KEY })
  const stream = async (thread: string, graph: string, body: Record<string, unknown>, mode: string | string[], subgraphs = false) => {
    const events: Wire[] = []
    let done = false
    const reading = (async () => {
      for await (const part of client.runs.stream(thread, graph, { ...body, streamMode: mode as any, streamSubgraphs: subgraphs })) events.push(part as Wire)
      done = true
    })()
    await runClockUntil(served.clock, () => done, `the ${graph} run ends`, { stepMs: 10 })
    await reading
    return events
  }
  return { ...served, client, stream }
}
