// A recorded agent as hangar replays it: one JSON file per graph (`<recording>/replay/<graph_id>.json`,
// written by `hangar record` from what it saw, format in docs/recording.md). It says what the graph
// looked like (its drawing and schemas, as the upstream answered them) and, turn by turn, what each
// run was given and what came of it: the events of its streams, the session protocol's events, the
// checkpoints it wrote. Ids in it are the upstream's; a replay hands out fresh ones (replay-ids.ts).
// This module holds the format, the loader that stops start-up with one line naming the file and
// the field, and how a run's input is matched against a turn's.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import { FixtureError } from '../fixtures.js'
import { Dict, Nullable } from '../schemas/common.js'
import type { PydanticError } from '../validation/pydantic-error.js'
import { compile, INVALID, type Loc } from '../validation/pydantic.js'
import type { Command } from './types.js'

export const REPLAY_FORMAT = 'hangar-replay/1'
/** The recording's subdirectory that holds the replay files. */
export const REPLAY_DIR = 'replay'

const Ms = Type.Integer({ minimum: 0 })

/** An event of a run stream as it came: its name (`values`, `messages|send:<task id>`, …), its data, when (ms after the run started). */
const StreamEvent = Type.Object({ event: Type.String({ minLength: 1 }), data: Type.Unknown(), at_ms: Ms })

/** One stream of the run, as a client asked for it: its modes, whether with subgraphs, its events. */
const RecordedStream = Type.Object({
  stream_mode: Type.Array(Type.String({ minLength: 1 })),
  subgraphs: Type.Boolean(),
  events: Type.Array(StreamEvent),
})

/** An event of the session protocol (the run's own: the root lifecycle is hangar's to send). */
const ProtocolRecord = Type.Object({
  method: Type.String({ minLength: 1 }),
  namespace: Type.Array(Type.String()),
  node: Type.Optional(Type.String()),
  data: Type.Unknown(),
  at_ms: Ms,
})

/** A checkpoint the run wrote, as the upstream's history shows it (root graph only). */
const RecordedCheckpoint = Type.Object({
  checkpoint_id: Type.String({ minLength: 1 }),
  parent_checkpoint_id: Nullable(Type.String({ minLength: 1 })),
  values: Dict(Type.Unknown()),
  next: Type.Array(Type.String()),
  tasks: Type.Array(Dict(Type.Unknown())),
  metadata: Dict(Type.Unknown()),
  at_ms: Ms,
})

/**
 * What a run was given, as turns are matched: the last human message's text, a resume value, a
 * command, or (anything else) the input itself.
 */
const TurnInput = Type.Union([
  Type.Object({ human: Type.String() }),
  Type.Object({ resume: Type.Unknown() }),
  Type.Object({ command: Dict(Type.Unknown()) }),
  Type.Object({ input: Type.Unknown() }),
])
export type TurnInput = Static<typeof TurnInput>

const Turn = Type.Object({
  /** What the run was given. */
  input: TurnInput,
  /** What the client sent, as it sent it: ids it chose (a message's) stay its own in a replay. */
  sent: Type.Object({ input: Type.Unknown(), command: Type.Unknown() }),
  /** The checkpoint the run started from (null: a thread's first run, or a run without a thread). */
  from: Nullable(Type.String({ minLength: 1 })),
  /** Whether the run named the checkpoint it started from (a fork: the real server's metadata then names it too). */
  fork: Type.Boolean(),
  /** The upstream's thread (null: a run without a thread) and run. */
  thread_id: Nullable(Type.String({ minLength: 1 })),
  run_id: Nullable(Type.String({ minLength: 1 })),
  /** The upstream's assistant the run was made on (its id becomes the replaying run's assistant's). */
  assistant_id: Nullable(Type.String({ minLength: 1 })),
  /** How the run ended: `error` ends a replay with the recorded error. */
  status: Type.Union([Type.Literal('success'), Type.Literal('interrupted'), Type.Literal('error')]),
  streams: Type.Array(RecordedStream),
  protocol: Type.Array(ProtocolRecord),
  checkpoints: Type.Array(RecordedCheckpoint),
  /** The run's output (`/wait`'s answer), when no checkpoint holds it (a run without a thread). */
  output: Type.Optional(Type.Unknown()),
})
export type Turn = Static<typeof Turn>
export type RecordedCheckpoint = Static<typeof RecordedCheckpoint>

export const ReplayFile = Type.Object({
  format: Type.Literal(REPLAY_FORMAT),
  graph_id: Type.String({ minLength: 1 }),
  description: Nullable(Type.String()),
  /** Where and when it was recorded (shown in error messages: how to record what is missing). */
  recorded_from: Type.String(),
  recorded_at: Type.String(),
  /** `GET /assistants/{id}/graph` and `/schemas` as the upstream answered (null: not captured). */
  graph: Nullable(Type.Object({ nodes: Type.Array(Type.Unknown()), edges: Type.Array(Type.Unknown()) })),
  schemas: Nullable(Dict(Type.Unknown())),
  turns: Type.Array(Turn),
})
export type ReplayFile = Static<typeof ReplayFile> & { file: string }

const validate = compile(ReplayFile)
const where = (loc: Loc) => loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '')

/** One replay file's text → a ReplayFile, or a FixtureError naming the file and the first problem. */
export function parseReplay(path: string, text: string): ReplayFile {
  const fail = (loc: Loc, msg: string): never => {
    throw new FixtureError(`recording ${path}: ${where(loc) || '(top level)'}: ${msg}`, 'replay')
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    return fail([], (error as Error).message)
  }
  const errors: PydanticError[] = []
  const value = validate(data, [], errors)
  if (value === INVALID) return fail(errors[0].loc, errors[0].msg)
  return { ...(value as Static<typeof ReplayFile>), file: path }
}

/** The replay files of a recording directory (`hangar record --out`), sorted by name. */
export function loadReplays(dir: string): ReplayFile[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new FixtureError(`${dir} is not a directory`, 'replay')
  if (!existsSync(join(dir, 'recording.json'))) throw new FixtureError(`${dir} is not a recording: it has no recording.json (make one with hangar record --upstream <url> --out ${dir})`, 'replay')
  const files = existsSync(join(dir, REPLAY_DIR)) ? readdirSync(join(dir, REPLAY_DIR)).filter((f) => f.endsWith('.json')).sort() : []
  if (files.length === 0) throw new FixtureError(`${dir} holds no replay files (${REPLAY_DIR}/*.json): hangar record writes them when it stops`, 'replay')
  const replays: ReplayFile[] = []
  for (const file of files) {
    const path = join(dir, REPLAY_DIR, file)
    const replay = parseReplay(path, readFileSync(path, 'utf8'))
    const twin = replays.find((r) => r.graph_id === replay.graph_id)
    if (twin) throw new FixtureError(`recording ${path}: graph_id: '${replay.graph_id}' is already defined in ${twin.file}`, 'replay')
    replays.push(replay)
  }
  return replays
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/** An interrupt's id as LangGraph makes it (32 hex digits). */
const INTERRUPT_ID = /^[0-9a-f]{32}$/

/** The text of a message's content (a string, or content blocks whose text parts are joined). */
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (typeof b === 'string' ? b : isObject(b) && typeof b.text === 'string' ? b.text : '')).join('') : ''

const isHuman = (m: unknown) => isObject(m) && ['human', 'user'].includes(String(m.type ?? m.role))

/**
 * What a run was given, as turns are keyed: a resume value (an answer by interrupt id counts as the
 * answer itself when it answers one interrupt), another command, the last human message's text of
 * an input with messages, or the input itself.
 */
export function turnInput(input: unknown, command: Command | null): TurnInput {
  if (command && (command.resume !== undefined || command.update !== undefined || command.goto !== undefined)) {
    if (command.update === undefined && command.goto === undefined) {
      const { resume } = command
      const keys = isObject(resume) ? Object.keys(resume) : []
      return { resume: keys.length === 1 && INTERRUPT_ID.test(keys[0]) ? (resume as Record<string, unknown>)[keys[0]] : resume }
    }
    return { command: JSON.parse(JSON.stringify(command)) as Record<string, unknown> }
  }
  if (isObject(input) && 'messages' in input) {
    const messages = [input.messages].flat()
    const human = messages.filter(isHuman).at(-1)
    if (human !== undefined && Object.keys(input).length === 1) return { human: textOf((human as Record<string, unknown>).content) }
  }
  return { input: input ?? null }
}

/** Canonical JSON (keys sorted), to compare inputs. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

export const sameInput = (a: TurnInput, b: TurnInput) => canonical(a) === canonical(b)

/** An input as messages show it: `"Paris"` (a human message), `resume "yes"`, `command {…}`, `input {…}`. */
export function describeInput(input: TurnInput): string {
  if ('human' in input) return JSON.stringify(input.human)
  if ('resume' in input) return `resume ${JSON.stringify(input.resume)}`
  if ('command' in input) return `command ${canonical(input.command)}`
  return `input ${canonical(input.input)}`
}
