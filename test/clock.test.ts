import t from 'tap'
import { Clock } from '../src/clock.js'

t.test('a manual clock stands still until moved', async (t) => {
  const clock = Clock.manual(1000)
  t.equal(clock.now(), 1000)
  t.equal(clock.frozen, true)
  clock.advance(500)
  t.equal(clock.now(), 1500)
  clock.set(10)
  t.equal(clock.now(), 10)
})

t.test('a system clock can be shifted, frozen and let run again without jumping back', async (t) => {
  const clock = Clock.system()
  t.equal(clock.frozen, false)
  clock.advance(3_600_000)
  t.ok(clock.now() - Date.now() >= 3_599_000, 'shifted an hour ahead')
  clock.freeze()
  const frozenAt = clock.now()
  t.equal(clock.now(), frozenAt)
  clock.advance(1000)
  clock.unfreeze()
  t.ok(clock.now() >= frozenAt + 1000, 'runs on from where it stood')
})

t.test('until resolves when the clock is moved past the instant, not before', async (t) => {
  const clock = Clock.manual(0)
  let done = false
  const waiting = clock.until(5000).then(() => (done = true))
  clock.advance(4999)
  await Promise.resolve()
  t.equal(done, false)
  clock.advance(1)
  await waiting
  t.equal(done, true)
  t.equal(clock.listenerCount('change'), 0, 'no listener is left behind')
})

t.test('until resolves at once for an instant already passed, and rejects when aborted', async (t) => {
  const clock = Clock.manual(100)
  await clock.until(50)
  const controller = new AbortController()
  const waiting = clock.until(10_000, controller.signal)
  controller.abort(new Error('client went away'))
  await t.rejects(waiting, /client went away/)
  t.equal(clock.listenerCount('change'), 0)
  await t.rejects(clock.until(10_000, controller.signal), /client went away/, 'an already-aborted signal rejects')
})
