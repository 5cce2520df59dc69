import fp from 'fastify-plugin'

export interface TickerOptions {
  /** Interval in milliseconds. */
  every: number
  /** The work of one tick; returns how many things it moved (for the debug log). */
  tick: () => number
}

/**
 * Runs `tick` on an interval while the app is up, so stored state moves even when nobody reads.
 * Reads never depend on it (they settle what is due themselves). The timer is unref'd and is
 * stopped before the app closes.
 */
export const ticker = fp<TickerOptions>((app, { every, tick }, done) => {
  let timer: NodeJS.Timeout | undefined
  app.addHook('onReady', (ready) => {
    timer = setInterval(() => {
      try {
        const moved = tick()
        if (moved > 0) app.log.debug({ moved }, 'ticker persisted due transitions')
      } catch (error) {
        app.log.error({ err: error }, 'ticker failed')
      }
    }, every).unref()
    ready()
  })
  app.addHook('preClose', (closed) => {
    clearInterval(timer)
    closed()
  })
  done()
}, { name: 'hangar-ticker' })
