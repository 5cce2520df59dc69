// Time travel, breakpoints and commands as LangGraph does them: every script of
// test/time-travel/scenarios.ts run against hangar with the official SDK, and its transcript
// (states, history entries with their step, source, next and parent, tasks, interrupts, statuses,
// stream events) compared with what the real JS agent server answered to the same script
// (test/fixtures/time-travel/real-server.json; versions and how to record again in its README).
// Where hangar follows the hosted service's documented behaviour instead of the JS dev server's,
// the expected transcript says so below, with the source.

import t from 'tap'
import { readFileSync } from 'node:fs'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, runClockUntil, serveApp } from './helpers.js'
import { runScenario, scenarioNames } from './time-travel/scenarios.js'
import type { Step, Transcript } from './time-travel/script.js'

const recorded = JSON.parse(readFileSync(new URL('./fixtures/time-travel/real-server.json', import.meta.url), 'utf8')) as {
  scenarios: Record<string, Transcript>
}

const isRecord = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The JS server double-encodes a failed run's `/wait` answer
 * (`{"__error__":{"error":"Error","message":"{\"error\":\"FlakyError\",…}"}}`); hangar sends the
 * plain form the SDK reads, `{"__error__":{"error":"FlakyError","message":"…"}}`
 * (docs/agent-server-wire.md, "/wait").
 */
function plainWaitError(result: unknown): unknown {
  if (!isRecord(result) || !isRecord(result.__error__) || result.__error__.error !== 'Error') return result
  try {
    const inner = JSON.parse(result.__error__.message)
    return isRecord(inner) && 'error' in inner && 'message' in inner ? { __error__: { error: inner.error, message: inner.message } } : result
  } catch {
    return result
  }
}

/**
 * The JS dev server answers an application error as text/plain, the bare message; the hosted
 * server, and hangar, as JSON `{"detail": "<message>"}` (docs/agent-server-wire.md, "Errors").
 */
function detailBody(result: unknown): unknown {
  if (!isRecord(result) || !isRecord(result.error) || typeof result.error.body !== 'string') return result
  return { error: { ...result.error, body: { detail: result.error.body } } }
}

/**
 * The two servers' approval graphs differ in one thing that is not the server's: when `respond`
 * runs without an answer (a `goto` without `resume`), the JS graph writes the missing answer as
 * JSON (`You answered: ""`), hangar's template as nothing (`You answered: `).
 */
function missingAnswerAsHangarWritesIt(value: unknown): unknown {
  if (typeof value === 'string') return value === 'You answered: ""' ? 'You answered: ' : value
  if (Array.isArray(value)) return value.map(missingAnswerAsHangarWritesIt)
  if (!isRecord(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, missingAnswerAsHangarWritesIt(item)]))
}

/**
 * Checkpoint metadata `writes`: LangGraph JS 1.7 writes none, hangar does (as LangGraph Python
 * did); docs/agent-server-wire.md lists it as either. Not compared.
 */
function withoutWrites(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutWrites)
  if (!isRecord(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) =>
    [key, key === 'metadata' && isRecord(item) ? withoutWrites(Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'writes'))) : withoutWrites(item)]))
}

/**
 * A history `before` given as a checkpoint config (`{checkpoint_id}` or `{configurable:
 * {checkpoint_id}}`): the JS dev server accepts only a string (400 ZodError), the hosted API
 * documents `before` as a CheckpointConfig and the SDK types it as a Config, and issue 14 asks for
 * every form. Hangar answers them as the string form.
 */
function historyBeforeAnyForm(transcript: Transcript): Transcript {
  const asString = transcript.find((s) => s.step.startsWith('threads.getHistory {before: end of turn two as a string}'))
  return transcript.map((s) => (s.step.startsWith('threads.getHistory {before: {') && asString ? { ...s, result: asString.result } : s))
}

/**
 * A rollback deletes the run and the checkpoints it wrote, so the thread reads as before the run
 * (the hosted service's documentation, "Cancel with rollback"; the JS dev server instead keeps
 * both and marks the run `error`). The thread had nothing before, so: the run answers as an
 * unknown run, the thread and its state as before any run, no runs, no history. What the joined
 * stream and a later run do then is not documented: those steps are not compared.
 */
function rollbackAsDocumented(transcript: Transcript): Transcript {
  const cancel = transcript.findIndex((s) => s.step.startsWith('runs.cancel'))
  const before = (name: string) => transcript.find((s) => s.step === name)?.result
  const expected: Step[] = transcript.slice(0, cancel + 1)
  expected.push(
    { step: 'runs.get', result: before('runs.get of a run that does not exist') },
    { step: 'runs.list', result: [] },
    { step: 'threads.get', result: before('threads.get before any run') },
    { step: 'threads.getState', result: before('threads.getState before any run') },
    { step: 'threads.getHistory {limit: 100}', result: { count: 0, states: [] } },
  )
  return expected
}

/**
 * A Send as RemoteGraph serialises it (`{lg_name: "Send", node, args}`): the JS server 1.5.1 does
 * not recognise it and runs only the interrupted node again; hangar honours it like the
 * `{node, input}` form the server does read (what RemoteGraph's user asked for; docs/graphs.md,
 * "Commands"). So its four steps are expected to answer as that form's did.
 */
function remoteGraphSendHonoured(transcript: Transcript): Transcript {
  const asInput = transcript.findIndex((s) => s.step.startsWith('runs.wait command {goto: {node: "respond", input:'))
  const asRemote = transcript.findIndex((s) => s.step.startsWith('runs.wait command with a Send as RemoteGraph sends it'))
  if (asInput < 0 || asRemote < 0) return transcript
  return transcript.map((s, i) => (i >= asRemote && i < asRemote + 4 ? { ...s, result: transcript[asInput + i - asRemote].result } : s))
}

const COMPARED_AFTER_ROLLBACK = new Set(['runs.get', 'runs.list', 'threads.get', 'threads.getState', 'threads.getHistory {limit: 100}'])

/** What hangar is expected to answer: the recording, with the deviations above. */
function expectedOf(name: string): Transcript {
  let transcript = recorded.scenarios[name].map((s) => ({
    ...s,
    result: missingAnswerAsHangarWritesIt(withoutWrites(detailBody(plainWaitError(s.result)))),
  }))
  if (name === 'state-on-checkpoint') transcript = historyBeforeAnyForm(transcript)
  if (name === 'cancel-rollback') transcript = rollbackAsDocumented(transcript)
  if (name === 'commands') transcript = remoteGraphSendHonoured(transcript)
  return transcript
}

/** hangar's side of a rollback transcript: up to the cancel, then the first answer of each compared step. */
function comparedOfRollback(transcript: Transcript): Transcript {
  const cancel = transcript.findIndex((s) => s.step.startsWith('runs.cancel'))
  const after = transcript.slice(cancel + 1)
  const firstOf = (step: string) => after.find((s) => s.step === step) ?? { step, result: 'not asked (the script stopped)' }
  return [...transcript.slice(0, cancel + 1), ...[...COMPARED_AFTER_ROLLBACK].map(firstOf)]
}

t.test('the recording holds every scenario', async (t) => {
  t.same(Object.keys(recorded.scenarios).sort(), [...scenarioNames].sort())
})

for (const name of scenarioNames) {
  t.test(`${name}: hangar answers the script as the real server did`, async (t) => {
    const { clock, base } = await serveApp(t)
    const client = new Client({ apiUrl: base, apiKey: API_KEY, callerOptions: { maxRetries: 0 } })
    // The pipeline's nodes wait 1 s each on hangar's clock: move it in small steps while a call is
    // pending, so that a stream read between two nodes sees the first before the second is done.
    const settle = async <T>(pending: Promise<T>): Promise<T> => {
      let settled = false
      pending.then(() => (settled = true), () => (settled = true))
      await runClockUntil(clock, () => settled, `${name}: a call`, { stepMs: 10, maxTurns: 100_000 })
      return pending
    }
    const transcript = (await runScenario(name, client, settle)).map((s) => ({ ...s, result: withoutWrites(s.result) }))
    const compared = name === 'cancel-rollback' ? comparedOfRollback(transcript) : transcript
    const expected = expectedOf(name)
    for (let i = 0; i < Math.max(compared.length, expected.length); i++) {
      t.same(compared[i], expected[i], `step ${i + 1}: ${expected[i]?.step ?? compared[i]?.step}`)
    }
  })
}
