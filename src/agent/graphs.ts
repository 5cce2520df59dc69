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
import { unknownTemplates } from './templates.js'

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
export const CONDITIONS = ['configurable', 'human_contains', 'human_matches', 'state', 'state_truthy', 'tool_calls', 'tool_result_contains', 'visits_at_least', 'last_message', 'all', 'not'] as const

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
  /** The step runs only when this holds (read from the state as the node's earlier steps left it). */
  when: Type.Optional(When),
})
export const STEP_KINDS = ['reply', 'update', 'custom', 'wait_ms', 'interrupt', 'fail', 'tools', 'ui', 'remove_ui'] as const

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

/** The state key UI messages go to: the first with the `ui` reducer (`ui` by convention). */
export const uiKeyOf = (graph: Pick<Graph, 'state'>): string | undefined => Object.entries(graph.state).find(([, reducer]) => reducer === 'ui')?.[0]

const RESERVED: ReadonlySet<string> = new Set(['__start__', '__end__', '__interrupt__', '__error__'])

const where = (loc: Loc) => loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '')

/** Every `*.json` of `dir`, sorted by file name, validated; a missing directory holds no graphs. */
export function loadGraphs(dir: string): Graph[] {
  if (!existsSync(dir)) return []
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  const graphs: Graph[] = []
  for (const file of files) {
    const path = join(dir, file)
    const graph = parseGraph(path, readFileSync(path, 'utf8'))
    const twin = graphs.find((g) => g.graph_id === graph.graph_id)
    if (twin) throw new FixtureError(`fixture ${path}: graph_id: '${graph.graph_id}' is already defined in ${twin.file}`)
    graphs.push(graph)
  }
  return graphs
}

const validate = compile(GraphFixture)

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

/**
 * What one file cannot check: each subgraph names a graph that is loaded, and no graph runs itself
 * through its subgraphs. Throws a FixtureError naming the file and the field.
 */
export function checkSubgraphs(graphs: Graph[]): void {
  const byId = new Map(graphs.map((g) => [g.graph_id, g]))
  const inner = (graph: Graph) => graph.nodes.filter((n) => n.subgraph !== undefined)
  for (const graph of graphs) {
    for (const node of inner(graph)) {
      if (!byId.has(node.subgraph!)) {
        const at = graph.nodes.indexOf(node)
        throw new FixtureError(`fixture ${graph.file}: nodes[${at}].subgraph: '${node.subgraph}' is not a graph (graphs: ${[...byId.keys()].join(', ')})`)
      }
    }
  }
  // A cycle through subgraphs would never end: found by walking from each graph.
  const walk = (graph: Graph, path: string[]): void => {
    for (const node of inner(graph)) {
      if (path.includes(node.subgraph!)) {
        const at = graph.nodes.indexOf(node)
        throw new FixtureError(`fixture ${graph.file}: nodes[${at}].subgraph: '${node.subgraph}' runs itself through its subgraphs (${[...path, node.subgraph].join(' → ')})`)
      }
      walk(byId.get(node.subgraph!)!, [...path, node.subgraph!])
    }
  }
  for (const graph of graphs) walk(graph, [graph.graph_id])
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

/** What the schema cannot say: names, one action per step, declared keys, known templates. */
function checkGraph(graph: Graph, fail: (loc: Loc, msg: string) => never, entry: unknown): void {
  const keys = Object.keys(graph.state)
  const declared = (key: string, loc: Loc) => {
    if (!keys.includes(key)) fail(loc, `'${key}' is not a state key (declared: ${keys.join(', ') || 'none'})`)
  }
  const templates = (value: unknown, loc: Loc, extra: string[] = []) => {
    // `{{input.<key>}}`: a key of what a Send gave the node.
    const roots = ['input', ...extra]
    const [unknown] = unknownTemplates(value, keys, roots)
    const known = ['{{last_human}}', '{{last_tool}}', '{{tool_results}}', '{{state.<key>}}', '{{context.<key>}}', ...roots.map((root) => `{{${root}.<key>}}`)]
    if (unknown !== undefined) fail(loc, `unknown template '{{${unknown}}}' (use ${known.slice(0, -1).join(', ')} or ${known.at(-1)})`)
  }
  /** Each name once: a node runs once in a superstep however often it is named. */
  const once = (names: string[], loc: (i: number) => Loc) => {
    names.forEach((name, i) => {
      if (names.indexOf(name) !== i) fail(loc(i), `'${name}' is named twice`)
    })
  }
  const checkWhen = (when: When, loc: Loc) => {
    const named = CONDITIONS.filter((c) => when[c] !== undefined)
    if (named.length === 0) fail(loc, `name a condition: ${CONDITIONS.join(', ')}`)
    when.all?.forEach((inner, i) => checkWhen(inner, [...loc, 'all', i]))
    if (when.not) checkWhen(when.not, [...loc, 'not'])
    if (when.human_matches !== undefined) {
      try {
        new RegExp(when.human_matches)
      } catch (error) {
        fail([...loc, 'human_matches'], `not a regular expression: ${(error as Error).message}`)
      }
    }
    // A key may be a path into a value (`review.0.type`): its first part is the state key.
    for (const key of Object.keys(when.state ?? {})) declared(key.split('.')[0], [...loc, 'state', key])
    if (when.state_truthy !== undefined) declared(when.state_truthy.split('.')[0], [...loc, 'state_truthy'])
    if ((when.tool_calls !== undefined || when.tool_result_contains !== undefined || when.last_message !== undefined) && graph.state.messages !== 'messages') {
      fail(loc, `tool_calls, tool_result_contains and last_message need the state key 'messages' with the reducer 'messages'`)
    }
  }
  if (graph.nodes.length === 0) fail(['nodes'], 'a graph needs at least one node')
  const names = graph.nodes.map((n) => n.name)
  graph.entry.forEach((name, i) => {
    if (!names.includes(name)) fail(Array.isArray(entry) ? ['entry', i] : ['entry'], `'${name}' is not a node (nodes: ${names.join(', ')})`)
  })
  once(graph.entry, (i) => ['entry', i])
  graph.nodes.forEach((node, n) => {
    const at: Loc = ['nodes', n]
    if (RESERVED.has(node.name)) fail([...at, 'name'], `'${node.name}' is a reserved name`)
    // As in LangGraph: they separate the parts of a namespace (`<node>:<task id>`, `parent|child`).
    for (const char of [':', '|']) if (node.name.includes(char)) fail([...at, 'name'], `'${node.name}' contains '${char}', which is reserved (node names may not contain ':' or '|')`)
    if (graph.nodes.findIndex((other) => other.name === node.name) !== n) fail([...at, 'name'], `'${node.name}' names two nodes`)
    if (Array.isArray(node.next) && node.next.length === 0) fail([...at, 'next'], 'give at least one route (or leave next out: the next node in the list)')
    const isNode = (name: string, loc: Loc, end = true) => {
      if ((!end || name !== '__end__') && !names.includes(name)) fail(loc, `'${name}' is not a node (nodes: ${names.join(', ')}${end ? '; or __end__' : ''})`)
    }
    const plain = !Array.isArray(node.next) || node.next.every((item) => typeof item === 'string')
    node.routes.forEach((route, r) => {
      // A plain `next` (a name, or names) is one route; its location is `next` itself.
      const loc: Loc = plain ? [...at, 'next'] : [...at, 'next', r]
      const target = plain ? loc : [...loc, 'to']
      // (A `next` mixing names and routes was refused before: parseGraph.)
      const listed = Array.isArray(node.next) ? node.next[r] : undefined
      if (!plain && (listed as { to?: unknown }).to === undefined === (route.send === undefined)) fail(loc, 'a route gives exactly one of to, send')
      route.to.forEach((to, i) => isNode(to, Array.isArray((listed as { to?: unknown } | undefined)?.to) || (plain && Array.isArray(node.next)) ? [...target, i] : target))
      if (route.to.length > 1 && route.to.includes('__end__')) fail(target, `__end__ cannot run beside other nodes`)
      once(route.to, (i) => [...target, i])
      if (route.send) {
        isNode(route.send.node, [...loc, 'send', 'node'], false)
        const inputs = route.send.inputs
        const lone = (value: unknown) => typeof value === 'string' && /^\{\{[^{}]*\}\}$/.test(value.trim())
        const object = (value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value)) || lone(value)
        if (!(lone(inputs) || (Array.isArray(inputs) && inputs.every(object)))) {
          fail([...loc, 'send', 'inputs'], 'give a list of objects (one task each, with that input), or one template that stands for such a list (e.g. "{{state.topics}}")')
        }
        templates(inputs, [...loc, 'send', 'inputs'])
      }
      if (route.when) checkWhen(route.when, [...loc, 'when'])
    })
    if (node.subgraph !== undefined) {
      if (node.steps.length > 0) fail([...at, 'subgraph'], 'a node that runs a subgraph has no steps of its own (give the steps to the subgraph)')
      if (node.subgraph === graph.graph_id) fail([...at, 'subgraph'], `a graph cannot run itself as a subgraph`)
    }
    let interrupts = 0
    node.steps.forEach((step, s) => {
      const loc: Loc = [...at, 'steps', s]
      if (step.when) checkWhen(step.when, [...loc, 'when'])
      const kinds = STEP_KINDS.filter((kind) => Object.hasOwn(step, kind))
      if (kinds.length !== 1) fail(loc, `a step does exactly one of ${STEP_KINDS.join(', ')} (found ${kinds.join(', ') || 'none'})`)
      const kind = kinds[0]
      if (kind === 'reply') {
        if (graph.state.messages !== 'messages') {
          fail([...loc, 'reply'], `a reply needs the state key 'messages' with the reducer 'messages'`)
        }
        templates(step.reply!.text, [...loc, 'reply', 'text'])
        templates(step.reply!.reasoning, [...loc, 'reply', 'reasoning'])
        templates(step.reply!.tool_calls, [...loc, 'reply', 'tool_calls'])
        step.reply!.tool_calls?.forEach((call, c) => {
          if (call.args !== undefined && call.args_text !== undefined) fail([...loc, 'reply', 'tool_calls', c], 'give args or args_text, not both')
        })
      } else if (kind === 'update') {
        for (const key of Object.keys(step.update!)) declared(key, [...loc, 'update', key])
        templates(step.update, [...loc, 'update'])
      } else if (kind === 'interrupt') {
        if (++interrupts > 1) fail([...loc, 'interrupt'], 'a node holds at most one interrupt (put the next one in its own node)')
        declared(step.interrupt!.resume_key, [...loc, 'interrupt', 'resume_key'])
        templates(step.interrupt!.value, [...loc, 'interrupt', 'value'])
      } else if (kind === 'fail') {
        if (step.fail!.when) checkWhen(step.fail!.when, [...loc, 'fail', 'when'])
        templates(step.fail!.message, [...loc, 'fail', 'message'])
      } else if (kind === 'custom') {
        templates(step.custom, [...loc, 'custom'])
      } else if (kind === 'ui' || kind === 'remove_ui') {
        if (uiKeyOf(graph) === undefined) fail([...loc, kind], `a ${kind} step needs a state key with the reducer 'ui' (e.g. "ui": "ui")`)
        templates(step[kind], [...loc, kind])
      } else if (kind === 'tools') {
        if (graph.state.messages !== 'messages') fail([...loc, 'tools'], `a tools step needs the state key 'messages' with the reducer 'messages'`)
        for (const [name, result] of Object.entries(step.tools!)) templates(result, [...loc, 'tools', name], ['args'])
      }
    })
  })
}
