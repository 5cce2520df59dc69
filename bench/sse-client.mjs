// A small client of server-sent event streams for the benchmarks: opens a POST stream, splits what
// arrives into frames (events and `:` comments) and records when each arrived.

import http from 'node:http'

/**
 * An event frame as it arrived: its event name, size in bytes and performance.now() on arrival.
 * @typedef {{ event: string, bytes: number, at: number }} Frame
 */
/**
 * An open stream; its fields fill in as bytes arrive.
 * @typedef {object} Stream
 * @property {number} sentAt
 * @property {number} status the response's status; 0 until the headers arrive
 * @property {number} headersAt
 * @property {number} firstByteAt
 * @property {number} endAt NaN until the stream ended, failed or was closed
 * @property {number} bytes
 * @property {Frame[]} events every event frame, in order
 * @property {number} heartbeats the `:` comments received
 * @property {Error | undefined} error
 * @property {boolean} ended the server ended the response
 * @property {boolean} closedByUs
 * @property {() => void} close
 * @property {Promise<Stream>} done resolves (never rejects) when the stream ends, fails or is closed
 */

/**
 * Opens `POST url` with a JSON body (or `GET url`, with `method: 'GET'`) and reads the event stream. The returned object fills in as
 * bytes arrive; `done` resolves when the stream ends, fails or is closed with `close()`.
 * Times are performance.now() values. `onFrame` is called after every frame, comments included.
 * @param {string} url
 * @param {unknown} body
 * @param {{ headers?: Record<string, string>, agent?: http.Agent, onFrame?: (stream: Stream, frame: Frame | { comment: true, at: number }) => void, method?: 'POST' | 'GET' }} [options]
 * @returns {Stream}
 */
export function openStream(url, body, { headers = {}, agent, onFrame, method = 'POST' } = {}) {
  const payload = method === 'GET' ? '' : JSON.stringify(body)
  /** @type {Omit<Stream, 'done'> & { done?: Promise<Stream> }} */
  const stream = {
    sentAt: performance.now(),
    status: 0,
    headersAt: NaN,
    firstByteAt: NaN,
    endAt: NaN,
    bytes: 0,
    events: [],
    heartbeats: 0,
    error: undefined,
    ended: false,
    closedByUs: false,
    close: () => {},
  }
  // The same object, whole once `done` is set here, before anyone can read it.
  const opened = /** @type {Stream} */ (stream)
  opened.done = new Promise((resolve) => {
    const finish = () => {
      stream.endAt = performance.now()
      resolve(opened)
    }
    const req = http.request(url, {
      method,
      agent,
      headers: method === 'GET'
        ? { ...headers, accept: 'text/event-stream' }
        : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), accept: 'text/event-stream' },
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
      stream.status = res.statusCode ?? 0
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
            onFrame?.(opened, { comment: true, at })
            continue
          }
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message'
          const frame = { event, bytes: Buffer.byteLength(block), at }
          stream.events.push(frame)
          onFrame?.(opened, frame)
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
  return opened
}
