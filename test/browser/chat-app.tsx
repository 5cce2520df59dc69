/// <reference lib="dom" />
// A chat page built on `@langchain/react`'s useStream, as a frontend developer writes one, for the
// browser tests: the query string says where hangar is and which graph and transport to use; the
// thread id is kept in sessionStorage, so a reload re-attaches to it. The page exposes its buttons
// as `window.chat` and renders what the hook says into elements the test reads.

import { useEffect, useRef } from 'react'
import { createRoot } from 'react-dom/client'
import { useStream } from '@langchain/react'

const query = new URLSearchParams(location.search)

declare global {
  interface Window {
    chat: { submit(text: string): Promise<void>; stop(): Promise<void>; respond(value: unknown): Promise<void> }
    loadingHistory: boolean[]
  }
}
window.loadingHistory = []

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (typeof b === 'string' ? b : (b as { text?: string }).text ?? '')).join('') : ''

function Chat() {
  const stream = useStream({
    assistantId: query.get('assistant') ?? 'agent',
    apiUrl: query.get('api') ?? undefined,
    apiKey: query.get('key') || undefined,
    transport: (query.get('transport') as 'sse' | 'websocket' | null) ?? undefined,
    threadId: sessionStorage.getItem('thread') ?? undefined,
    onThreadId: (id: string) => sessionStorage.setItem('thread', id),
  })
  const current = useRef(stream)
  current.current = stream
  useEffect(() => {
    window.chat = {
      submit: (text) => current.current.submit({ messages: [{ type: 'human', content: text }] } as never),
      stop: () => current.current.stop(),
      respond: (value) => current.current.respond(value),
    }
  }, [])
  useEffect(() => {
    window.loadingHistory.push(stream.isLoading)
  }, [stream.isLoading])
  const error = stream.error as { message?: string } | undefined
  return (
    <main>
      <p id="loading">{String(stream.isLoading)}</p>
      <p id="thread">{stream.threadId ?? ''}</p>
      <ul id="messages">
        {stream.messages.map((m, i) => (
          <li key={m.id ?? i} data-type={m.getType()}>{textOf(m.content)}</li>
        ))}
      </ul>
      <pre id="interrupt">{stream.interrupt ? JSON.stringify(stream.interrupt.value) : ''}</pre>
      <pre id="error">{error ? String(error.message ?? error) : ''}</pre>
    </main>
  )
}

createRoot(document.getElementById('root')!).render(<Chat />)
