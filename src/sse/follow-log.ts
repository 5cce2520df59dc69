// A thread's session-protocol log onto an SSE stream (`POST /threads/{id}/stream/events`), written
// the way a broadcast would be: when an append wakes many streams, each writes one event and lets
// the others write theirs before it writes the next, and they read the log together (LogCursor).
// While the socket takes what is written, nothing here makes a promise per event. An event leaves
// once its own row is committed (ThreadLog.committed).

import { LogCursor, matches, type EventFilter, type ThreadLog } from '../agent/thread-log.js'
import type { SseWriter } from './writer.js'

export interface LogFollow {
  scope: string
  threadId: string
  filter: EventFilter
  /** The seq after which events are written (0: the whole log). */
  since: number
  /** Stops the stream (the client left, or shutdown). */
  until: AbortSignal
}

/**
 * Writes the thread's events after `since` that pass the filter, then live ones as they are
 * appended, until `until` aborts or the client leaves; resolves then. A socket that is full, or an
 * event whose write is not committed yet, pauses this stream alone. Rejects if reading the log fails.
 */
export function streamLog(writer: SseWriter, log: ThreadLog, o: LogFollow): Promise<void> {
  return new Promise((resolve, reject) => {
    const cursor = new LogCursor(log, o.scope, o.threadId, o.since)
    let queued = false
    let paused = false
    let ended = false
    const stop = () => {
      if (ended) return false
      ended = true
      unwatch()
      o.until.removeEventListener('abort', end)
      return true
    }
    const end = () => {
      if (stop()) resolve()
    }
    const wake = () => {
      if (queued || paused || ended) return
      queued = true
      queueMicrotask(step)
    }
    const step = () => {
      queued = false
      if (ended || paused) return
      if (o.until.aborted) return end()
      const waiting = cursor.waitForCommit(() => {
        paused = false
        wake()
      })
      if (waiting) {
        paused = true
        return
      }
      try {
        const row = cursor.next()
        if (!row) return
        if (!matches(o.filter, row.method, log.namespaceOf(row))) return wake()
        // An event leaves once its own row is committed (not whatever the run writes after it).
        const committed = log.committed(o.scope, o.threadId, row)
        if (committed === null) return write(log.sseFrame(row))
        paused = true
        committed.then(() => {
          paused = false
          write(log.sseFrame(row))
        }, () => {
          // The row was lost with its group (the disk failed): the stream cannot go on truthfully.
          writer.destroy()
          end()
        })
      } catch (error) {
        if (stop()) reject(error)
      }
    }
    const write = (frame: string) => {
      if (ended) return
      const sent = writer.sendFrameNow(frame)
      if (sent === true) return wake()
      if (sent === false) return end()
      paused = true
      sent.then((open) => {
        paused = false
        if (open) wake()
        else end()
      }, end)
    }
    const unwatch = log.watch(o.scope, o.threadId, wake)
    o.until.addEventListener('abort', end)
    if (o.until.aborted) return end()
    wake()
  })
}
