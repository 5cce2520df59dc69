/// <reference lib="dom" />
// A page for an agent team, as a frontend developer builds one on useStream, for the browser tests:
// each subagent (a subgraph node of the graph) in its own panel with its messages, the thread's
// messages, and approval cards for every pending interrupt, answered together. The current hook
// (`@langchain/react`, the session protocol) reads a subagent's messages through its selector hook
// `useMessages(stream, subgraph)` on the subgraphs it discovers; the older one
// (`@langchain/langgraph-sdk/react`, `hook=legacy`, run streams with `streamSubgraphs`) has them in
// the thread's messages, each with the stream metadata (`getMessagesMetadata`) that names its
// namespace and node. The page exposes its buttons as `window.team`.

import { useEffect, useRef } from 'react'
import { createRoot } from 'react-dom/client'
import { useMessages, useStream as useCurrentStream, type AnyStream, type SubgraphDiscoverySnapshot } from '@langchain/react'
import { useStream as useLegacyStream } from '@langchain/langgraph-sdk/react'

const query = new URLSearchParams(location.search)
const legacy = query.get('hook') === 'legacy'

declare global {
  interface Window {
    team: {
      submit(text: string): Promise<void>
      /** Answers every pending approval in one command: by the action it asks about, the answer's type (accept, ignore, …). */
      answer(types: Record<string, string>): Promise<void>
    }
  }
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (typeof b === 'string' ? b : (b as { text?: string }).text ?? '')).join('') : ''

interface Message { id?: string; type?: string; content: unknown }
/** An approval request of the structured HITL schema: the interrupt's value is a list of these. */
interface ApprovalRequest { action_request: { action: string }; description: string }
interface Interrupt { id?: string; value?: unknown }

const requestOf = (interrupt: Interrupt) => (interrupt.value as ApprovalRequest[] | undefined)?.[0]

/** The resume map the graph reads: each pending interrupt's id → `[{type}]` for its action. */
function resumeMap(interrupts: Interrupt[], types: Record<string, string>) {
  return Object.fromEntries(interrupts.map((interrupt) => [interrupt.id!, [{ type: types[requestOf(interrupt)!.action_request.action] }]]))
}

const Texts = ({ messages, nodes }: { messages: Message[]; nodes?: (string | undefined)[] }) => (
  <ul>{messages.map((m, i) => <li key={m.id ?? i} data-node={nodes?.[i] ?? ''}>{textOf(m.content)}</li>)}</ul>
)

function Approvals({ interrupts }: { interrupts: Interrupt[] }) {
  return (
    <ul id="approvals">
      {interrupts.map((interrupt) => <li key={interrupt.id} data-action={requestOf(interrupt)?.action_request.action}>{requestOf(interrupt)?.description}</li>)}
    </ul>
  )
}

function Status({ stream }: { stream: { isLoading: boolean; error: unknown } }) {
  const error = stream.error as { message?: string } | undefined
  return (
    <>
      <p id="loading">{String(stream.isLoading)}</p>
      <pre id="error">{error ? String(error.message ?? error) : ''}</pre>
    </>
  )
}

/** Keeps `window.team` calling the latest render's stream. */
function useTeamButtons<S>(stream: S, buttons: (stream: () => S) => Window['team']) {
  const current = useRef(stream)
  current.current = stream
  useEffect(() => { window.team = buttons(() => current.current) }, [])
}

/** One subagent's panel: its messages, read through the selector hook scoped to its namespace. */
function SubgraphPanel({ stream, subgraph }: { stream: AnyStream; subgraph: SubgraphDiscoverySnapshot }) {
  const messages = useMessages(stream, subgraph)
  return <section data-agent={subgraph.nodeName}><Texts messages={messages} /></section>
}

function CurrentTeam() {
  const stream = useCurrentStream({ assistantId: query.get('assistant')!, apiUrl: query.get('api')!, apiKey: query.get('key') || undefined })
  useTeamButtons(stream, (s) => ({
    submit: (text) => s().submit({ messages: [{ type: 'human', content: text }] }),
    answer: (types) => s().respondAll(resumeMap(s().interrupts, types)),
  }))
  return (
    <main>
      <Status stream={stream} />
      <div id="messages"><Texts messages={stream.messages} /></div>
      <div id="agents">{[...stream.subgraphs.values()].map((subgraph) => <SubgraphPanel key={subgraph.id} stream={stream as AnyStream} subgraph={subgraph} />)}</div>
      <Approvals interrupts={stream.interrupts} />
    </main>
  )
}

interface StreamMetadata { langgraph_node?: string; langgraph_checkpoint_ns?: string }

/**
 * The subagent a streamed message comes from: the node that runs the subgraph, first in a nested
 * namespace (`researcher:<task id>|search:<task id>`). Without `streamSubgraphs` a subgraph's
 * messages come whole, at its node's own namespace (`researcher:<task id>`): no subagent.
 */
function subagentOf(meta: StreamMetadata | undefined) {
  const segments = meta?.langgraph_checkpoint_ns?.split('|') ?? []
  return segments.length > 1 ? segments[0].split(':')[0] : undefined
}

function LegacyTeam() {
  const stream = useLegacyStream<{ messages: Message[] }>({ assistantId: query.get('assistant')!, apiUrl: query.get('api')!, apiKey: query.get('key') || undefined, messagesKey: 'messages' })
  useTeamButtons(stream, (s) => ({
    submit: (text) => s().submit({ messages: [{ type: 'human', content: text }] }, { streamSubgraphs: true }),
    // This hook resumes with one command: the map from interrupt id to answer answers them all.
    answer: (types) => s().submit(undefined, { command: { resume: resumeMap(s().interrupts as Interrupt[], types) }, streamSubgraphs: true }),
  }))
  const messages = stream.messages as Message[]
  const metadata = messages.map((m, i) => stream.getMessagesMetadata(m as never, i)?.streamMetadata as StreamMetadata | undefined)
  const agents = new Map<string, number[]>()
  metadata.forEach((meta, i) => {
    const agent = subagentOf(meta)
    if (agent) agents.set(agent, [...(agents.get(agent) ?? []), i])
  })
  return (
    <main>
      <Status stream={stream} />
      <div id="messages"><Texts messages={messages} /></div>
      <div id="agents">
        {[...agents].map(([agent, indexes]) => (
          <section key={agent} data-agent={agent}><Texts messages={indexes.map((i) => messages[i])} nodes={indexes.map((i) => metadata[i]?.langgraph_node)} /></section>
        ))}
      </div>
      <Approvals interrupts={stream.interrupts as Interrupt[]} />
    </main>
  )
}

createRoot(document.getElementById('root')!).render(legacy ? <LegacyTeam /> : <CurrentTeam />)
