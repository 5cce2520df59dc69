// A small client of server-sent event streams for the benchmarks: opens a POST stream, splits what
// arrives into frames (events and `:` comments) and records when each arrived.

import http from 'node:http'

/**
 * Opens `POST url` with a JSON body and reads the event stream. The returned object fills in as
 * bytes arrive; `done` resolves when the stream ends, fails or is closed with `close()`.
 * Times are performance.now() values.
 */
export function openStream(url, body, { headers = {}, agent, onFrame } = {}) {
  const payload = JSON.stringify(body)
  const stream = {
    sentAt: performance.now(),
    status: 0,
    headersAt: NaN,
    firstByteAt: NaN,
    endAt: NaN,
    bytes: 0,
    /** [{ event, bytes, at }]: every event frame, in order. */
    events: [],
    heartbeats: 0,
    error: undefined,
    ended: false,
    closedByUs: false,
    close: () => {},
    done: undefined,
  }
  stream.done = new Promise((resolve) => {
    const finish = () => {
      stream.endAt = performance.now()
      resolve(stream)
    }
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), accept: 'text/event-stream' },
    })
    stream.close = () => {
      stream.closedByUs = true
      req.destroy()
    }
    req.on('error', (error) => {
      if (!stream.closedByUs) stream.error = error
      finish()
    })
    req.on('response', (res) => {
      stream.status = res.statusCode
      stream.headersAt = performance.now()
      let pending = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        const at = performance.now()
        if (stream.bytes === 0) stream.firstByteAt = at
        stream.bytes += Buffer.byteLength(chunk)
        pending += chunk
        let cut
        while ((cut = pending.indexOf('\n\n')) !== -1) {
          const block = pending.slice(0, cut + 2)
          pending = pending.slice(cut + 2)
          if (block.startsWith(':')) {
            stream.heartbeats++
            onFrame?.(stream, { comment: true, at })
            continue
          }
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message'
          const frame = { event, bytes: Buffer.byteLength(block), at }
          stream.events.push(frame)
          onFrame?.(stream, frame)
        }
      })
      res.on('end', () => {
        stream.ended = true
        finish()
      })
      res.on('error', (error) => {
        if (!stream.closedByUs) stream.error = error
        finish()
      })
      res.on('close', () => {
        if (!stream.ended && !stream.closedByUs && !stream.error) stream.error = new Error('the stream closed before its end')
        finish()
      })
    })
    req.end(payload)
  })
  return stream
}
