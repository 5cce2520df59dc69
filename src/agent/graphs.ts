// Scripted graphs are data: one JSON file per graph in `fixtures/graphs/` (format in docs/graphs.md).
// This module holds the format (a TypeBox schema, validated in pydantic mode with extra fields
// forbidden), the checks a schema cannot express, and the loader that stops start-up with one line
// naming the file and the field when a graph is invalid.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { PydanticError } from '../validation/pydantic-error.js'
import { FixtureError } from '../fixtures.js'
import { Dict, Nullable, StringEnum } from '../schemas/common.js'
import { compile, INVALID, type Loc } from '../validation/pydantic.js'
import { REDUCERS, type Channels } from './state.js'
import { checkGraph } from './graph-checks.js'

const Ms = (options: object = {}) => Type.Integer({ minimum: 0, ...options })

const ToolCallSpec = Type.Object({
  name: Type.String({ minLength: 1 }),
  /** The call's arguments (templated; a lone template such as `{{state.draft}}` stands for an object). */
  args: Type.Optional(Type.Union([Dict(Type.Unknown()), Type.String()])),
  /** Instead of `args`: the arguments' JSON text as the model writes it (templated); text that does not parse makes an invalid tool call. */
  args_text: Type.Optional(Type.String()),
  /** The call's id (templated); default `call_` and 24 hex digits derived from the message and the call's place. */
  id: Type.Optional(Type.String({ minLength: 1 })),
})

const Reply = Type.Object({
  /** The reply, with templates; `{{last_human}}` makes an echo. May be empty when it calls tools. */
  text: Type.Optional(Type.String({ default: '' })),
  /** The model's reasoning (with templates), streamed before the text as a `reasoning` content block. */
  reasoning: Type.Optional(Type.String()),
  /** Tools the AI message calls (streamed after the text, as a provider streams them). */
  tool_calls: Type.Optional(Type.Array(ToolCallSpec, { default: [] })),
  /** The message's `usage_metadata` and `response_metadata`, as a provider reports them (sent on a last empty chunk). */
  usage_metadata: Type.Optional(Dict(Type.Unknown())),
  response_metadata: Type.Optional(Dict(Type.Unknown())),
  /** Clock time between two streamed chunks (a word, a tool call, a piece of its arguments). */
  token_delay_ms: Type.Optional(Ms({ default: 0 })),
})

/** What a tool answers: its content (templated; `{{args.<key>}}` reads the call's arguments), or an error. */
const ToolResult = Type.Object({
  content: Type.Optional(Type.Unknown()),
  /** The tool's artifact (templated), kept on the ToolMessage. */
  artifact: Type.Optional(Type.Unknown()),
  /** The tool raises an error of this name; `content` is its message. */
  error: Type.Optional(Type.String({ minLength: 1 })),
  /** Custom progress payloads the tool writes while it runs (templated). */
  progress: Type.Optional(Type.Array(Type.Unknown())),
  /** State the tool writes beside its ToolMessage, as a tool returning `Command(update=…)` does (templated; `{{args.<key>}}` reads the call's arguments). */
  update: Type.Optional(Dict(Type.Unknown())),
})

/** A generative-UI message, as LangGraph's `push_ui_message` / `typedUi().push` writes one. */
const Ui = Type.Object({
  /** The component's name. */
  name: Type.String({ minLength: 1 }),
  /** Its props (templated). */
  props: Type.Optional(Dict(Type.Unknown(), { default: {} })),
  /** Its id (templated); default one derived from the run, the task and the step. A known id replaces that UI message. */
  id: Type.Optional(Type.String({ minLength: 1 })),
  /** With a known id: merge the props into the earlier ones instead of replacing them. */
  merge: Type.Optional(Type.Boolean()),
  /** Attach it to the last AI message (its id in `metadata.id`). */
  attach: Type.Optional(Type.Boolean()),
})

const Interrupt = Type.Object({
  /** What `interrupt(value)` shows the client (templated). */
  value: Type.Unknown(),
  /** The state key the resume value is written to. */
  resume_key: Type.String({ minLength: 1 }),
})

/** Conditions of a `fail` step, a step or a route: it applies when one of them holds. */
const Leaf = {
  /** The run's `config.configurable.<key>` is truthy. */
  configurable: Type.Optional(Type.String({ minLength: 1 })),
  /** The last human message contains this text (case-insensitive). */
  human_contains: Type.Optional(Type.String({ minLength: 1 })),
  /** The last human message matches this regular expression (JavaScript syntax, case-insensitive). */
  human_matches: Type.Optional(Type.String({ minLength: 1 })),
  /** State values: each key equals its value (JSON equality). */
  state: Type.Optional(Dict(Type.Unknown())),
  /** The state key is truthy. */
  state_truthy: Type.Optional(Type.String({ minLength: 1 })),
  /** The last AI message has tool calls (true) or has none (false). */
  tool_calls: Type.Optional(Type.Boolean()),
  /** The last tool message's text contains this (case-insensitive). */
  tool_result_contains: Type.Optional(Type.String({ minLength: 1 })),
  /** The node has run at least this many times in this run (the node the route leaves). */
  visits_at_least: Type.Optional(Type.Integer({ minimum: 1 })),
  /** The last AI message calls a tool of this name. */
  calls_tool: Type.Optional(Type.String({ minLength: 1 })),
  /** The last message is of this type. */
  last_message: Type.Optional(StringEnum(['human', 'ai', 'tool', 'system'])),
}
const LeafWhen = Type.Object(Leaf)
/** This does not hold. */
const Not = Type.Optional(LeafWhen)
const When = Type.Object({
  ...Leaf,
  /** Every one of these holds (each a `when` without `all`; its `not` has neither). */
  all: Type.Optional(Type.Array(Type.Object({ ...Leaf, not: Not }), { minItems: 1 })),
  not: Not,
})

/** A LangGraph `Send`: one task of `node` per item of `inputs`, each getting that item (an object) instead of the state. */
const Send = Type.Object({
  node: Type.String({ minLength: 1 }),
  /** A list of objects (templated; a lone template such as `{{state.topics}}` may stand for the list). */
  inputs: Type.Unknown(),
})

/**
 * Where a node goes when `when` holds (always without `when`); the first that applies wins. `to`
 * names a node (or `__end__`), or several that run together in the next superstep (a fan-out);
 * `send` starts one task per input instead.
 */
const Route = Type.Object({
  when: Type.Optional(When),
  to: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })])),
  send: Type.Optional(Send),
})

const Fail = Type.Object({
  error: Type.Optional(Type.String({ minLength: 1, default: 'Error' })),
  message: Type.String(),
  /** Fail only when one of the given conditions holds; always when absent. */
  when: Type.Optional(When),
})

/** Writes an item to the run's store (long-term memory), templated: namespace labels, key and value. */
const StorePutSpec = Type.Object({
  namespace: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  key: Type.String({ minLength: 1 }),
  value: Dict(Type.Unknown()),
})

/** Searches the run's store (templated) and writes the items found into the state key `into`. */
const StoreSearchSpec = Type.Object({
  namespace_prefix: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  query: Type.Optional(Type.String()),
  filter: Type.Optional(Dict(Type.Unknown())),
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
  into: Type.String({ minLength: 1 }),
})

/** A step does exactly one of these things. */
const Step = Type.Object({
  reply: Type.Optional(Reply),
  update: Type.Optional(Dict(Type.Unknown())),
  custom: Type.Optional(Type.Unknown()),
  wait_ms: Type.Optional(Ms()),
  interrupt: Type.Optional(Interrupt),
  fail: Type.Optional(Fail),
  /** Answers each tool call of the last AI message with a ToolMessage, by tool name (`*`: any other tool). */
  tools: Type.Optional(Dict(ToolResult)),
  /** Pushes a UI message (the state key with the `ui` reducer, and a `custom` event). */
  ui: Type.Optional(Ui),
  /** Removes the UI message of this id (templated). */
  remove_ui: Type.Optional(Type.String({ minLength: 1 })),
  /** Writes an item to the store of the agent server the run is on. */
  store_put: Type.Optional(StorePutSpec),
  /** Searches that store; the items found go to a state key. */
  store_search: Type.Optional(StoreSearchSpec),
  /** The step runs only when this holds (read from the state as the node's earlier steps left it). */
  when: Type.Optional(When),
})

const Node = Type.Object({
  name: Type.String({ minLength: 1 }),
  /** Clock time waited before the node does anything. */
  delay_ms: Type.Optional(Ms({ default: 0 })),
  steps: Type.Optional(Type.Array(Step, { default: [] })),
  /**
   * The node that runs next: a node name or `__end__`, several names (they run together in the
   * next superstep), or routes tried in order. Without it, the next node in `nodes` (the last one
   * goes to `__end__`).
   */
  next: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), Type.Array(Route)])),
  /** The node runs this graph (its `graph_id`) as a subgraph, on the state keys both declare; it has no steps of its own. */
  subgraph: Type.Optional(Type.String({ minLength: 1 })),
})

export const GraphFixture = Type.Object({
  graph_id: Type.String({ minLength: 1 }),
  description: Type.Optional(Nullable(Type.String())),
  /** State keys and their reducers; a key not listed is not part of the state. */
  state: Type.Optional(Dict(StringEnum(REDUCERS), { default: {} })),
  /** The node(s) `__start__` leads to; several run together in the first superstep. Default: the first node. */
  entry: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })])),
  /** Run one after another: `__start__ → nodes[0] → … → __end__`, unless `entry` and `next` say otherwise. */
  nodes: Type.Array(Node),
})

export type Step = Static<typeof Step>
/** A `when` (an inner one of `all` / `not` has no `all` or `not` of its own). */
export type When = Static<typeof LeafWhen> & { all?: When[]; not?: When }
export type SendSpec = Static<typeof Send>
/** A route as loaded: `to` always a list (empty for a `send`). */
export interface Route {
  when?: When
  to: string[]
  send?: SendSpec
}
type NodeFixture = Static<typeof Node>
/** A node as loaded: its `next` as routes (a plain name is one route without a condition; none given, the next node in the list). */
export type GraphNode = Required<Omit<NodeFixture, 'steps' | 'next' | 'subgraph'>> & {
  steps: Step[]
  routes: Route[]
  next?: NodeFixture['next']
  subgraph?: string
}
export type Graph = Omit<Static<typeof GraphFixture>, 'nodes' | 'description' | 'state' | 'entry'> & {
  description: string | null
  state: Channels['reducers']
  nodes: GraphNode[]
  /** The nodes of the first superstep. */
  entry: string[]
  /** The file it was read from. */
  file: string
}

export const channelsOf = (graph: Graph): Channels => ({ reducers: graph.state, open: false })


const where = (loc: Loc) => loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '')

/** Every `*.json` of `dir`, sorted by file name, validated; a missing directory holds no graphs. */
export function loadGraphs(dir: string): Graph[] {
  if (!existsSync(dir)) return []
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  const graphs: Graph[] = []
  for (const file of files) {
    const path = join(dir, file)
    const graph = ParsedGraphs.parse(path, readFileSync(path, 'utf8'))
    const twin = graphs.find((g) => g.graph_id === graph.graph_id)
    if (twin) throw new FixtureError(`fixture ${path}: graph_id: '${graph.graph_id}' is already defined in ${twin.file}`)
    graphs.push(graph)
  }
  return graphs
}

const validate = compile(GraphFixture)

/**
 * Each graph file's last parse in this process, by path: a test suite builds an app per test, and
 * validating the bundled graphs again each time was a sixth of what building one cost. A file whose
 * text changed is parsed again; each app gets its own copy of the graph.
 */
class ParsedGraphs {
  static readonly #last = new Map<string, { text: string; graph: Graph }>()

  static parse(path: string, text: string): Graph {
    const last = ParsedGraphs.#last.get(path)
    if (last?.text === text) return structuredClone(last.graph)
    const graph = parseGraph(path, text)
    ParsedGraphs.#last.set(path, { text, graph: structuredClone(graph) })
    return graph
  }
}

/** One graph file's text → a Graph, or a FixtureError naming the file and the first problem. */
export function parseGraph(path: string, text: string): Graph {
  const fail = (loc: Loc, msg: string): never => {
    throw new FixtureError(`fixture ${path}: ${where(loc) || '(top level)'}: ${msg}`)
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    return fail([], (error as Error).message)
  }
  const mixed = mixedNext(data)
  if (mixed) return fail(mixed, 'give next as node names or as routes ({"when": …, "to": …}), not both')
  const errors: PydanticError[] = []
  const value = validate(data, [], errors)
  if (value === INVALID) {
    const error = unionError(data, errors)
    return fail(error.loc, error.msg)
  }
  const extra = extraField(data, GraphFixture, [])
  if (extra) return fail(extra, 'Extra inputs are not permitted')
  const loaded = value as Static<typeof GraphFixture>
  const nodes = loaded.nodes.map((node, i) => ({ ...node, steps: node.steps ?? [], routes: routesOf(node.next, loaded.nodes[i + 1]?.name) }) as GraphNode)
  const entry = loaded.entry === undefined ? loaded.nodes.slice(0, 1).map((n) => n.name) : [loaded.entry].flat()
  const graph = { ...loaded, entry, nodes, file: path } as Graph
  graph.description ??= null
  checkGraph(graph, fail, loaded.entry)
  return graph
}

/** Where a node's `next` lists names and routes together (no member of its union fits, so say what is wrong). */
function mixedNext(data: unknown): Loc | undefined {
  const nodes = (data as { nodes?: unknown } | null)?.nodes
  if (!Array.isArray(nodes)) return undefined
  const at = nodes.findIndex((node) => {
    const next = (node as { next?: unknown } | null)?.next
    return Array.isArray(next) && next.some((item) => typeof item === 'string') && next.some((item) => typeof item !== 'string')
  })
  return at === -1 ? undefined : ['nodes', at, 'next']
}

/**
 * The error to report, its location without the union members' tags (`str`, `list[str]`, …) that
 * pydantic puts in it: of the errors of the first error's union, the one that got deepest into the
 * value (the member that fit best; the last on a tie, the list before the lone string); when the
 * input is of a type no member takes, every type they take.
 */
function unionError(data: unknown, errors: PydanticError[]): { loc: Loc; msg: string } {
  // A location's parts that are not keys (or indexes) of the value there are union tags, but for
  // the last part of a missing field's.
  const untagged = ({ loc, type }: PydanticError) => {
    const parts: Loc = []
    let value = data
    for (const [i, part] of loc.entries()) {
      if (typeof value === 'object' && value !== null && Object.hasOwn(value, part)) {
        value = (value as Record<string | number, unknown>)[part]
        parts.push(part)
      } else if (i === loc.length - 1 && type === 'missing') parts.push(part)
    }
    return parts
  }
  const key = (loc: Loc) => loc.join('\u0000')
  const first = untagged(errors[0])
  const inUnion = errors.filter((e) => key(untagged(e).slice(0, first.length)) === key(first))
  const best = inUnion.reduce((a, b) => (untagged(b).length >= untagged(a).length ? b : a))
  // An input of a type no member takes: name every type the members take.
  if (inUnion.every((e) => untagged(e).length === first.length && e.type.endsWith('_type'))) {
    const kinds = [...new Set(inUnion.map((e) => e.msg.replace(/^Input should be /, '')))]
    return { loc: first, msg: `Input should be ${kinds.join(' or ')}` }
  }
  return { loc: untagged(best), msg: best.msg }
}

/** A node's `next` as routes: a name or names is one route without a condition; none given, the next node in the list. */
function routesOf(next: NodeFixture['next'], following: string | undefined): Route[] {
  if (next === undefined) return [{ to: [following ?? '__end__'] }]
  if (typeof next === 'string') return [{ to: [next] }]
  if (next.every((item) => typeof item === 'string')) return [{ to: next as string[] }]
  return (next as Static<typeof Route>[]).map((route) => ({ ...route, to: route.to === undefined ? [] : [route.to].flat() }))
}

/** The first field an object has that its schema does not declare (pydantic's `extra="forbid"`). */
function extraField(input: unknown, schema: TSchema, loc: Loc): Loc | undefined {
  const members = (schema.anyOf as TSchema[] | undefined) ?? [schema]
  // A list of objects is checked against the list member whose items are objects (`next`: names or routes).
  const lists = members.filter((m) => m.type === 'array')
  const list = lists.find((m) => (m.items as TSchema).type === 'object') ?? lists[0]
  if (Array.isArray(input) && list) {
    for (const [i, item] of input.entries()) {
      const found = extraField(item, list.items as TSchema, [...loc, i])
      if (found) return found
    }
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined
  const properties = members.find((m) => m.properties)?.properties as Record<string, TSchema> | undefined
  // A dict (`tools` by tool name): each value against its schema.
  const values = members.find((m) => typeof m.additionalProperties === 'object')?.additionalProperties as TSchema | undefined
  if (!properties && values) {
    for (const [key, value] of Object.entries(input)) {
      const found = extraField(value, values, [...loc, key])
      if (found) return found
    }
  }
  if (!properties) return undefined
  for (const [key, value] of Object.entries(input)) {
    if (!(key in properties)) return [...loc, key]
    const found = extraField(value, properties[key], [...loc, key])
    if (found) return found
  }
  return undefined
}
