// Reading a server-sent event stream from a fetch() response. EventSource cannot send headers (the
// admin token, an API key, Last-Event-ID), so the page reads the bytes itself.

export interface SseMessage {
  event: string
  data: string
  id: string | undefined
}

/** Calls `onMessage` for each event of the stream; resolves when the stream ends. */
export async function readEvents(response: Response, onMessage: (message: SseMessage) => void): Promise<void> {
  if (!response.body) return
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let message: SseMessage = { event: 'message', data: '', id: undefined }
  let hasData = false
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value
    let newline: number
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A CR at the end may be the first half of a CRLF still on its way.
      if (newline === buffer.length - 1 && buffer.endsWith('\r')) break
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
      if (line === '') {
        if (hasData) onMessage(message)
        message = { event: 'message', data: '', id: undefined }
        hasData = false
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') message.event = text
      else if (field === 'id') message.id = text
      else if (field === 'data') {
        message.data = hasData ? `${message.data}\n${text}` : text
        hasData = true
      }
    }
  }
}
