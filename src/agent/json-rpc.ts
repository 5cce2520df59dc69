// JSON-RPC 2.0 as the agent server's A2A and MCP endpoints speak it: the envelope a request must
// have, the error codes (the JSON-RPC spec's and A2A's), and the bodies of answers and errors.
// These endpoints answer a broken request with a JSON-RPC error body, not FastAPI's `{"detail"}`.

export type RpcId = string | number | null

export const RPC_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** A2A: no task with that id. */
  taskNotFound: -32001,
  /** A2A: the task has ended and cannot be canceled. */
  taskNotCancelable: -32002,
  /** A2A: the agent does not take push notification configs (its card says `pushNotifications: false`). */
  pushNotificationNotSupported: -32003,
  /** A2A: the operation does not apply (a message to, or a resubscription to, a task that has ended). */
  unsupportedOperation: -32004,
} as const

/** A request refused with a JSON-RPC error; `status` is the HTTP status it goes out with. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly status = 400) {
    super(message)
  }
}

export interface RpcRequest {
  /** Absent for a notification. */
  id: RpcId | undefined
  method: string
  params: unknown
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The request in a parsed body; `unparsable` says the bytes were not JSON. Throws RpcError. */
export function parseRequest(body: unknown, unparsable: boolean): RpcRequest {
  if (unparsable || body === undefined) throw new RpcError(RPC_CODES.parseError, 'Parse error')
  if (!isObject(body)) throw new RpcError(RPC_CODES.invalidRequest, 'Invalid Request: expected a JSON-RPC 2.0 request object')
  if (body.jsonrpc !== '2.0') throw new RpcError(RPC_CODES.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"')
  if (typeof body.method !== 'string') throw new RpcError(RPC_CODES.invalidRequest, 'Invalid Request: method must be a string')
  const id = body.id
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new RpcError(RPC_CODES.invalidRequest, 'Invalid Request: id must be a string, a number or null')
  }
  if (body.params !== undefined && typeof body.params !== 'object') {
    throw new RpcError(RPC_CODES.invalidParams, 'Invalid params: params must be an object')
  }
  return { id: id as RpcId | undefined, method: body.method, params: body.params ?? {} }
}

/** The id a request carried, as far as it can be read (for the error answering it). */
export function idOf(body: unknown): RpcId {
  const id = isObject(body) ? body.id : null
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

export const rpcResult = (id: RpcId | undefined, result: unknown) => ({ jsonrpc: '2.0' as const, id: id ?? null, result })

export const rpcError = (id: RpcId | undefined, error: RpcError) => ({
  jsonrpc: '2.0' as const,
  id: id ?? null,
  error: { code: error.code, message: error.message },
})

/** The params object of a request, or an invalid-params error. */
export function paramsObject(params: unknown): Record<string, unknown> {
  if (!isObject(params)) throw new RpcError(RPC_CODES.invalidParams, 'Invalid params: params must be an object')
  return params
}
