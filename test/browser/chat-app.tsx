/// <reference lib="dom" />
// A chat page built on useStream, as a frontend developer writes one, for the browser tests: the
// current hook (`@langchain/react`, the session protocol) or, with `hook=legacy`, the older one
// (`@langchain/langgraph-sdk/react`, run streams). The query string says where hangar is and which
// graph and transport to use; the thread id is kept in sessionStorage, so a reload re-attaches to
// it. The page exposes its buttons as `window.chat` and renders what the hook says into elements
// the test reads.

import { useEffect, useRef } from 'react'
import { createRoot } from 'react-dom/client'
import { useStream as useCurrentStream } from '@langchain/react'
import { useStream as useLegacyStream } from '@langchain/langgraph-sdk/react'

const query = new URLSearchParams(location.search)
const legacy = query.get('hook') === 'legacy'

declare global {
  interface Window {
    chat: {
      submit(text: string): Promise<void>
      stop(): Promise<void>
      respond(value: unknown): Promise<void>
      /** The older hook's branching, as a chat UI's edit and regenerate buttons and its branch switcher use it. */
      edit(index: number, text: string): Promise<void>
      regenerate(index: number): Promise<void>
      setBranch(index: number, option: number): void
    }
    loadingHistory: boolean[]
  }
}
window.loadingHistory = []

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (typeof b === 'string' ? b : (b as { text?: string }).text ?? '')).join('') : ''

/** What the page needs of either hook. */
interface ChatStream {
  isLoading: boolean
  threadId?: string | null
  messages: { id?: string; content: unknown; getType?: () => string; type?: string }[]
  interrupt?: { value?: unknown }
  error: unknown
  submit(input: unknown, options?: unknown): Promise<void> | void
  stop(): Promise<void> | void
  respond?(value: unknown): Promise<void>
  getMessagesMetadata?(message: unknown, index: number): MessageMetadata | undefined
  /** The tool calls of the thread: the older hook's with their `call` and `state`, the current one's with `name` and `status`. */
  toolCalls?: { call?: { name: string }; state?: string; name?: string; status?: string }[]
  setBranch?(branch: string): void
}

interface MessageMetadata {
  firstSeenState?: { parent_checkpoint?: unknown }
  branch?: string
  branchOptions?: string[]
}

const metadataOf = (stream: ChatStream, index: number) => stream.getMessagesMetadata?.(stream.messages[index], index)

// One hook per page load: which is fixed by the query string, so the rules of hooks hold.
const useChatStream = (legacy ? useLegacyStream : useCurrentStream) as unknown as (options: Record<string, unknown>) => ChatStream

function Chat() {
  const stream = useChatStream({
    assistantId: query.get('assistant') ?? 'agent',
    apiUrl: query.get('api') ?? undefined,
    apiKey: query.get('key') || undefined,
    // Only when asked for: the older hook takes any `transport` key as a custom transport.
    ...(query.get('transport') ? { transport: query.get('transport') } : {}),
    threadId: sessionStorage.getItem('thread') ?? undefined,
    onThreadId: (id: string) => sessionStorage.setItem('thread', id),
    ...(legacy ? { messagesKey: 'messages', reconnectOnMount: true, fetchStateHistory: true } : {}),
  })
  const current = useRef(stream)
  current.current = stream
  useEffect(() => {
    window.chat = {
      submit: async (text) => current.current.submit({ messages: [{ type: 'human', content: text }] }),
      stop: async () => current.current.stop(),
      // The older hook resumes an interrupt with a command.
      respond: async (value) => (legacy ? current.current.submit(undefined, { command: { resume: value } }) : current.current.respond!(value)),
      // Edit: the message again, with new text, from the checkpoint before it first appeared.
      edit: async (index, text) => {
        const meta = metadataOf(current.current, index)
        await current.current.submit({ messages: [{ type: 'human', content: text }] }, { checkpoint: meta?.firstSeenState?.parent_checkpoint })
      },
      // Regenerate: no input, from the checkpoint before the answer first appeared.
      regenerate: async (index) => {
        const meta = metadataOf(current.current, index)
        await current.current.submit(undefined, { checkpoint: meta?.firstSeenState?.parent_checkpoint })
      },
      setBranch: (index, option) => current.current.setBranch!(metadataOf(current.current, index)!.branchOptions![option]),
    }
  }, [])
  useEffect(() => {
    window.loadingHistory.push(stream.isLoading)
  }, [stream.isLoading])
  const error = stream.error as { message?: string } | undefined
  return (
    <main>
      <p id="loading">{String(stream.isLoading)}</p>
      <p id="thread">{stream.threadId ?? sessionStorage.getItem('thread') ?? ''}</p>
      <ul id="messages">
        {stream.messages.map((m, i) => {
          const meta = metadataOf(stream, i)
          return (
            <li key={m.id ?? i} data-type={m.getType?.() ?? m.type} data-branches={meta?.branchOptions?.length ?? 0}
              data-branch={meta?.branch && meta.branchOptions ? meta.branchOptions.indexOf(meta.branch) : -1}>{textOf(m.content)}</li>
          )
        })}
      </ul>
      <ul id="tools">
        {(stream.toolCalls ?? []).map((tc, i) => <li key={i}>{`${tc.call?.name ?? tc.name}:${tc.state ?? tc.status}`}</li>)}
      </ul>
      <pre id="interrupt">{stream.interrupt ? JSON.stringify(stream.interrupt.value) : ''}</pre>
      <pre id="error">{error ? String(error.message ?? error) : ''}</pre>
    </main>
  )
}

createRoot(document.getElementById('root')!).render(<Chat />)
