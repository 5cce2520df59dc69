// The agent server's MCP endpoint (Streamable HTTP, stateless): every assistant is a tool, named
// by the assistant's name and described by its description, taking its graph's input schema; a
// call runs the assistant statelessly and answers the final AI message's text (or, for a graph
// without messages, its output as JSON).

import type { RunCreate } from '../schemas/agent.js'
import type { AssistantRepository } from '../store/assistants.js'
import { VERSION } from '../version.js'
import { paramsObject, RPC_CODES, RpcError, type RpcRequest } from './json-rpc.js'
import { lastOf, textOf } from './messages.js'
import type { RunExecutor } from './run-executor.js'
import type { RequestContext, RunRequests } from './run-requests.js'
import type { GraphEngine } from './types.js'

/** The MCP revisions hangar answers in; a client asking for another gets the newest. */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']

export interface McpOptions {
  assistants: AssistantRepository
  executor: RunExecutor
  runRequests: RunRequests
  engine: GraphEngine
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

export class McpEndpoint {
  readonly #o: McpOptions

  constructor(options: McpOptions) {
    this.#o = options
  }

  /** The result of one request (a notification has none: undefined). */
  async handle(context: RequestContext, request: RpcRequest): Promise<unknown> {
    if (request.id === undefined) return undefined
    switch (request.method) {
      case 'initialize':
        return this.#initialize(paramsObject(request.params))
      case 'ping':
        return {}
      case 'tools/list':
        return { tools: this.#tools(context.scope) }
      case 'tools/call':
        return this.#call(context, paramsObject(request.params))
      default:
        throw new RpcError(RPC_CODES.methodNotFound, `Method not found: ${request.method}`)
    }
  }

  #initialize(params: Json) {
    const asked = params.protocolVersion
    return {
      protocolVersion: typeof asked === 'string' && MCP_PROTOCOL_VERSIONS.includes(asked) ? asked : MCP_PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'LangGraph', version: VERSION },
    }
  }

  #tools(scope: string) {
    return this.#o.assistants.list(scope, {}).map((assistant) => {
      const info = this.#o.engine.info(assistant.graph_id)
      const { $schema: _draft, ...inputSchema } = (info?.schemas.input_schema ?? { type: 'object' }) as Json
      return {
        name: assistant.name,
        description: assistant.description ?? info?.description ?? '',
        inputSchema: { ...inputSchema, type: 'object' },
      }
    })
  }

  async #call(context: RequestContext, params: Json) {
    if (typeof params.name !== 'string') throw new RpcError(RPC_CODES.invalidParams, 'Invalid params: name is required')
    if (params.arguments !== undefined && !isObject(params.arguments)) throw new RpcError(RPC_CODES.invalidParams, 'Invalid params: arguments must be an object')
    const assistant = this.#o.assistants.list(context.scope, { name: params.name })[0]
    if (!assistant) throw new RpcError(RPC_CODES.invalidParams, `Unknown tool: ${params.name}`)
    const run = this.#o.runRequests.create(context, null, { assistant_id: assistant.assistant_id, input: params.arguments ?? {} } as RunCreate)
    const result = await this.#o.executor.join(run)
    if ('__error__' in result) {
      const error = isObject(result.__error__) ? result.__error__ : {}
      return { content: [{ type: 'text', text: typeof error.message === 'string' ? error.message : 'The run failed.' }], isError: true }
    }
    const answer = lastOf(result.messages, 'ai')
    return { content: [{ type: 'text', text: answer ? textOf(answer) : JSON.stringify(result) }], isError: false }
  }
}
