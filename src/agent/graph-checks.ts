// What a graph file's schema cannot say, checked when graphs load (graphs.ts): names, one action
// per step, declared state keys, known templates, routes that lead to nodes, Sends and subgraphs —
// and across files, that each subgraph is a loaded graph and none runs itself. Each problem is one
// FixtureError line naming the file and the field.

import { FixtureError } from '../fixtures.js'
import type { Loc } from '../validation/pydantic.js'
import type { Graph, When } from './graphs.js'
import { uiKeyOf } from './state.js'
import { unknownTemplates } from './templates.js'

/** The conditions a `when` may name, and the actions a step may take (one each). */
export const CONDITIONS = ['configurable', 'human_contains', 'human_matches', 'state', 'state_truthy', 'tool_calls', 'tool_result_contains', 'visits_at_least', 'last_message', 'calls_tool', 'all', 'not'] as const
export const STEP_KINDS = ['reply', 'update', 'custom', 'wait_ms', 'interrupt', 'fail', 'tools', 'ui', 'remove_ui', 'store_put', 'store_search'] as const


const RESERVED: ReadonlySet<string> = new Set(['__start__', '__end__', '__interrupt__', '__error__'])

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

/** What the schema cannot say: names, one action per step, declared keys, known templates. */
export function checkGraph(graph: Graph, fail: (loc: Loc, msg: string) => never, entry: unknown): void {
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
    if ((when.tool_calls !== undefined || when.tool_result_contains !== undefined || when.last_message !== undefined || when.calls_tool !== undefined) && graph.state.messages !== 'messages') {
      fail(loc, `tool_calls, calls_tool, tool_result_contains and last_message need the state key 'messages' with the reducer 'messages'`)
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
      } else if (kind === 'store_put') {
        templates(step.store_put, [...loc, 'store_put'])
      } else if (kind === 'store_search') {
        declared(step.store_search!.into, [...loc, 'store_search', 'into'])
        templates(step.store_search, [...loc, 'store_search'])
      } else if (kind === 'tools') {
        if (graph.state.messages !== 'messages') fail([...loc, 'tools'], `a tools step needs the state key 'messages' with the reducer 'messages'`)
        for (const [name, result] of Object.entries(step.tools!)) {
          templates(result, [...loc, 'tools', name], ['args'])
          for (const key of Object.keys(result.update ?? {})) declared(key, [...loc, 'tools', name, 'update', key])
        }
      }
    })
  })
}
