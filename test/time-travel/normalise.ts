// What two agent servers answered, made comparable: every id becomes a label of its kind in order of
// first appearance (`checkpoint#1`, `run#2`, `message#3` …), so that links between answers (a
// state's parent, a run's checkpoints, an interrupt's id in a resume map) survive while the ids
// themselves (random or time-based on both servers) do not; timestamps go; metadata keeps only
// what LangGraph itself writes (`source`, `step`, `writes`), not the server's run bookkeeping.

export type IdKind = 'checkpoint' | 'run' | 'thread' | 'task' | 'interrupt' | 'message' | 'assistant' | 'id'

/** Keys whose string value is an id of a known kind. */
const ID_KEYS: Record<string, IdKind> = {
  checkpoint_id: 'checkpoint',
  parent_checkpoint_id: 'checkpoint',
  run_id: 'run',
  thread_id: 'thread',
  task_id: 'task',
  interrupt_id: 'interrupt',
  assistant_id: 'assistant',
}

/** Keys dropped everywhere: times, and `checkpoint_map` (null for a root graph). */
const DROPPED = new Set(['created_at', 'updated_at', 'state_updated_at', 'timestamp', 'checkpoint_map'])

/** The checkpoint metadata LangGraph writes; the rest is the server's copy of run metadata. */
const METADATA_KEPT = ['source', 'step', 'writes']

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
/** UUIDs and LangGraph's interrupt ids (32 hex digits). */
const IDS = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/gi

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What an object with an `id` is: a message, a task, an interrupt, or something else. */
function kindOf(object: Record<string, unknown>): IdKind {
  if (('type' in object || 'role' in object) && 'content' in object) return 'message'
  if ('name' in object && ('interrupts' in object || 'path' in object || 'triggers' in object)) return 'task'
  if ('value' in object) return 'interrupt'
  return 'id'
}

/** Labels for the ids of one transcript. */
export class Labels {
  readonly #byId = new Map<string, string>()
  readonly #counts = new Map<IdKind, number>()

  /** The label of `id`, given on its first appearance as the next one of `kind`. */
  label(kind: IdKind, id: string): string {
    const known = this.#byId.get(id)
    if (known !== undefined) return known
    const count = (this.#counts.get(kind) ?? 0) + 1
    this.#counts.set(kind, count)
    const label = `${kind}#${count}`
    this.#byId.set(id, label)
    return label
  }

  /**
   * Forgets every label but those of `kept` kinds, and restarts the others' counts: a new thread's
   * checkpoints, messages and runs are numbered from 1, so that a difference on one thread does not
   * renumber the next one's.
   */
  restart(kept: IdKind[]) {
    for (const [id, label] of this.#byId) if (!kept.some((kind) => label.startsWith(`${kind}#`))) this.#byId.delete(id)
    for (const kind of this.#counts.keys()) if (!kept.includes(kind)) this.#counts.delete(kind)
  }

  /** The label `id` already has, if any. */
  known(id: string): string | undefined {
    return this.#byId.get(id)
  }

  /** A string that may be or hold ids: a known id becomes its label, an unknown UUID inside it `id#n`. */
  text(value: string): string {
    const known = this.#byId.get(value)
    if (known !== undefined) return known
    return value.replace(UUID, (id) => this.label('id', id))
  }
}

/**
 * A message's fields that one server serialises with their defaults and another leaves out: the
 * Python message classes write `name: null`, `example: false`, `usage_metadata: null`; LangChain
 * JS writes an AI message chunk (a pending task's result) with `tool_call_chunks: []`. The same
 * message either way.
 */
const MESSAGE_DEFAULTS: Record<string, (value: unknown) => boolean> = {
  name: (value) => value === null,
  example: (value) => value === false,
  usage_metadata: (value) => value === null,
  tool_call_chunks: (value) => Array.isArray(value) && value.length === 0,
}

/** `value` with ids labelled, timestamps dropped and metadata reduced; keys are visited in sorted order. */
export function normalise(value: unknown, labels: Labels): unknown {
  if (Array.isArray(value)) return value.map((item) => normalise(item, labels))
  if (typeof value === 'string') return labels.text(value)
  if (!isRecord(value)) return value
  const message = kindOf(value) === 'message'
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    const item = value[key]
    if (DROPPED.has(key)) continue
    if (message && key in MESSAGE_DEFAULTS && MESSAGE_DEFAULTS[key](item)) continue
    if (key === 'metadata' && isRecord(item)) {
      out.metadata = normalise(Object.fromEntries(METADATA_KEPT.filter((k) => k in item).map((k) => [k, item[k]])), labels)
    } else if (key in ID_KEYS && typeof item === 'string') {
      out[key] = labels.label(ID_KEYS[key], item)
    } else if (key === 'interrupts' && isRecord(item)) {
      // A thread's pending interrupts, by task id; task ids not seen yet are labelled in the order of
      // what they hold (ids aside), not of the ids themselves, which are hashes.
      const order = (task: string) => labels.known(task) ?? `~${JSON.stringify(item[task]).replace(IDS, '')}`
      const tasks = Object.keys(item).sort((a, b) => order(a).localeCompare(order(b)))
      out.interrupts = Object.fromEntries(tasks.map((task) => [labels.label('task', task), normalise(item[task], labels)]))
    } else if (key === 'id' && typeof item === 'string') {
      out.id = labels.label(kindOf(value), item)
    } else if ((key === 'checkpoint' || key === 'parent_checkpoint') && isRecord(item) && typeof item.checkpoint_id === 'string') {
      out[key] = labels.label('checkpoint', item.checkpoint_id)
    } else {
      out[labels.text(key)] = normalise(item, labels)
    }
  }
  return out
}
