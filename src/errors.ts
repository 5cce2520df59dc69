import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Conflict, DomainError, Expired, Forbidden, NotFound, NotImplemented, NotServing, RuleViolation, ThreadBusy, Unprocessable } from './domain/errors.js'

import type { PydanticError } from './validation/pydantic-error.js'

export type { PydanticError }

/**
 * Every failure a handler or hook reports. The error handler turns it into the real service's body:
 * `{"detail": "<text>"}`, or `{"detail": [<pydantic errors>]}` for 422.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string | PydanticError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : `${detail.length} validation error(s)`)
  }

  static badRequest = (detail: string) => new ApiError(400, detail)
  static unauthorized = (detail: string) => new ApiError(401, detail)
  static forbidden = (detail: string) => new ApiError(403, detail)
  static notFound = (detail: string) => new ApiError(404, detail)
  static conflict = (detail: string) => new ApiError(409, detail)
  static notAcceptable = (detail: string) => new ApiError(406, detail)
  static validation = (errors: PydanticError[]) => new ApiError(422, errors)
}

/** Python's reason phrases where they differ from Node's. */
const PHRASES: Record<number, string> = {
  413: 'Request Entity Too Large',
  414: 'Request-URI Too Long',
  416: 'Requested Range Not Satisfiable',
}
/** The reason phrase of a status as the real (Python) services write it. */
export const phrase = (status: number) => PHRASES[status] ?? STATUS_CODES[status] ?? 'Error'

/**
 * Error bodies are written with plain JSON.stringify, never through a route's response schema: a
 * schema that rejected one (a string `detail` on a 422, say) would turn a clear 4xx into a 500.
 */
export function sendError(reply: FastifyReply, error: ApiError) {
  return reply
    .code(error.statusCode)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send({ detail: error.detail })
}

/** A kind of domain error: one of the classes of domain/errors.ts. */
type DomainErrorKind = new (...args: never[]) => DomainError

/** The status the real service answers each kind of domain error with. */
const DOMAIN_STATUS: ReadonlyMap<DomainErrorKind, number> = new Map<DomainErrorKind, number>([
  [RuleViolation, 400],
  [Forbidden, 403],
  [NotFound, 404],
  [Conflict, 409],
  [Expired, 410],
  [ThreadBusy, 422],
  [Unprocessable, 422],
  [NotImplemented, 501],
  [NotServing, 503],
])

/** The HTTP form of a domain error: its status, its message as the `detail`. */
export function fromDomain(error: DomainError): ApiError {
  const status = DOMAIN_STATUS.get(error.constructor as DomainErrorKind) // a domain error's class is a DomainErrorKind
  if (status === undefined) throw new Error(`no status is mapped for ${error.name}`)
  return new ApiError(status, error.message)
}

/** The one error exit: ApiError and domain errors as they are, Fastify's 4xx by their phrase, anything else a 500. */
export function errorHandler(this: FastifyInstance, error: FastifyError | ApiError | DomainError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) return sendError(reply, error)
  if (error instanceof DomainError) return sendError(reply, fromDomain(error))
  const status = (error as FastifyError).statusCode ?? 500
  if (status >= 400 && status < 500) {
    // Fastify's own 4xx (body too large, bad content-length, ...): its wording never reaches clients.
    request.log.info({ code: (error as FastifyError).code }, error.message)
    return sendError(reply, new ApiError(status, phrase(status)))
  }
  request.log.error({ err: error }, 'unexpected error')
  return sendError(reply, new ApiError(500, phrase(500)))
}

/** Installs the one error exit. */
export function installErrorHandler(app: FastifyInstance) {
  app.setErrorHandler(errorHandler)
}
