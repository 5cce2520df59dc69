// Request parsing and validation, FastAPI's way. Fastify's own AJV validation is switched off:
// one hook per route validates path, query, header and body together and reports every error at
// once, in FastAPI's order and pydantic's wording. Bodies are parsed like `json.loads` would.

import type { FastifyInstance, FastifyRequest, FastifySchema, preValidationHookHandler } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { ApiError, type PydanticError } from '../errors.js'
import { checkKeywords, kindOf, UnsupportedSchemaError } from './keywords.js'
import { absentValue, acceptsNull, compile, INVALID, OMIT, type Check } from './pydantic.js'
import { JsonDecodeError, JsonIntegerTooLongError, JsonTooDeepError, parsePythonJson } from './python-json.js'

/** A body that could not be parsed; it becomes an error only on routes that declare a body. */
export class UnparsableBody {
  constructor(readonly error: ApiError) {}
}

const PARSE_FAILURE = 'There was an error parsing the body'
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** FastAPI reads JSON with `json.loads`: an empty body is "no body"; bad bytes are a 400. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    return new UnparsableBody(ApiError.badRequest(PARSE_FAILURE))
  }
  try {
    return parsePythonJson(text)
  } catch (error) {
    if (error instanceof JsonDecodeError) {
      return new UnparsableBody(
        ApiError.validation([
          { type: 'json_invalid', loc: ['body', error.pos], msg: 'JSON decode error', input: {}, ctx: { error: error.reason } },
        ]),
      )
    }
    // Python fails these with RecursionError / ValueError, which FastAPI answers with this 400.
    if (error instanceof JsonTooDeepError || error instanceof JsonIntegerTooLongError) {
      return new UnparsableBody(ApiError.badRequest(PARSE_FAILURE))
    }
    throw error
  }
}

type Part = 'path' | 'query' | 'header'
interface Field {
  name: string
  check: Check
  required: boolean
  fallback: unknown
  many: boolean
}

/** The fields of a path, query or header schema: an object schema whose properties are the parameters. */
function fieldsOf(schema: TSchema, where: string): Field[] {
  const kind = kindOf(schema, `${where}#`)
  if (kind !== 'model') throw new UnsupportedSchemaError(`${where}#: must be an object schema with properties (one per parameter), got a ${kind} schema`)
  checkKeywords(schema, kind, `${where}#`)
  const required = new Set<string>(schema.required ?? [])
  return Object.entries((schema.properties ?? {}) as Record<string, TSchema>).map(([name, field]) => ({
    name,
    check: compile(field, `${where}#/properties/${name}`),
    required: required.has(name),
    fallback: absentValue(field),
    many: field.type === 'array' || (field.anyOf as TSchema[] | undefined)?.some((m) => m.type === 'array') === true,
  }))
}

/** Validates one part (path, query or header): a repeated scalar takes its last value, as Starlette does. */
function validatePart(part: Part, fields: Field[], raw: Record<string, unknown>, errors: PydanticError[]) {
  const out: Record<string, unknown> = {}
  for (const field of fields) {
    let value = raw[field.name]
    if (field.many) value = value === undefined ? [] : Array.isArray(value) ? value : [value]
    else if (Array.isArray(value)) value = value.at(-1)
    const absent = value === undefined || (field.many && (value as unknown[]).length === 0)
    if (absent) {
      if (field.required) errors.push({ type: 'missing', loc: [part, field.name], msg: 'Field required', input: null })
      else if (field.fallback !== OMIT) out[field.name] = structuredClone(field.fallback)
      continue
    }
    const result = field.check(value, [part, field.name], errors)
    if (result !== INVALID) out[field.name] = result
  }
  return out
}

/**
 * What compiling a schema gave, by the schema object it was compiled from. A route's schemas are
 * module constants that nothing changes, and compiling one is a pure function of it, so every app
 * in a process (a test suite starts one per test) shares one compilation instead of repeating it
 * per app. A schema that cannot be compiled
 * throws each time (nothing is kept), naming the route it was met on.
 */
class CompiledSchemas {
  static readonly #fields = new WeakMap<TSchema, Field[]>()
  static readonly #bodies = new WeakMap<TSchema, Check>()

  static fields(schema: TSchema, where: string): Field[] {
    let fields = this.#fields.get(schema)
    if (fields === undefined) this.#fields.set(schema, (fields = fieldsOf(schema, where)))
    return fields
  }

  static body(schema: TSchema, where: string): Check {
    let check = this.#bodies.get(schema)
    if (check === undefined) this.#bodies.set(schema, (check = compile(schema, where)))
    return check
  }
}

/**
 * The validator of one route: throws a 422 ApiError listing every error, else replaces inputs with
 * the validated values. Compiling throws an UnsupportedSchemaError naming `route` (e.g.
 * `POST /runs/batch`), the part and the keyword when a schema says something the validator does not implement.
 */
export function compileRequest(schema: FastifySchema, route = 'route'): (request: FastifyRequest) => void {
  const path = schema.params ? CompiledSchemas.fields(schema.params as TSchema, `${route} params`) : undefined
  const query = schema.querystring ? CompiledSchemas.fields(schema.querystring as TSchema, `${route} querystring`) : undefined
  const headers = schema.headers ? CompiledSchemas.fields(schema.headers as TSchema, `${route} headers`) : undefined
  const bodySchema = schema.body as TSchema | undefined
  const body = bodySchema ? CompiledSchemas.body(bodySchema, `${route} body`) : undefined
  const bodyOptional = bodySchema !== undefined && acceptsNull(bodySchema)

  return (request) => {
    if (request.body instanceof UnparsableBody) {
      if (body) throw request.body.error
      request.body = undefined
    }
    const errors: PydanticError[] = []
    const params = path && validatePart('path', path, request.params as Record<string, unknown>, errors)
    const queryValues = query && validatePart('query', query, request.query as Record<string, unknown>, errors)
    if (headers) validatePart('header', headers, request.headers, errors)
    let bodyValue: unknown
    if (body) {
      if (request.body === undefined || request.body === null) {
        if (bodyOptional) bodyValue = null
        else errors.push({ type: 'missing', loc: ['body'], msg: 'Field required', input: null })
      } else {
        bodyValue = body(request.body, ['body'], errors)
      }
    }
    if (errors.length > 0) throw ApiError.validation(errors)
    if (params) request.params = params
    if (queryValues) request.query = queryValues
    if (body) request.body = bodyValue
  }
}

/**
 * The top-level fields a JSON object body named, whatever their value (pydantic's
 * `model_fields_set`): a PATCH whose null clears a field and whose absent field keeps it needs this,
 * because the validated body holds every declared field.
 */
export function namedFields(request: FastifyRequest): ReadonlySet<string> {
  const raw = request.rawBody ? parseJsonBody(request.rawBody) : undefined
  return new Set(raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? Object.keys(raw) : [])
}

const JSON_TYPES = ['application/json', /^application\/[\w.!#$&^-]+\+json(\s*;.*)?$/i]

declare module 'fastify' {
  interface FastifyRequest {
    /** The bytes of the body as they were read (for the request journal); null when there was none. */
    rawBody: Buffer | null
  }
}

/** Installs body parsing and validation. Call before any route is registered. */
export function installRequestValidation(app: FastifyInstance) {
  app.decorateRequest('rawBody', null)
  app.setValidatorCompiler(() => () => true)
  app.removeAllContentTypeParsers()
  for (const type of JSON_TYPES) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (request, body, done) => {
      request.rawBody = body as Buffer
      done(null, parseJsonBody(body as Buffer))
    })
  }
  // Anything else reaches validation as text (FastAPI validates the raw bytes, which fail as a model);
  // a body without Content-Type is read as JSON, as FastAPI does.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer
    request.rawBody = buffer
    if (request.headers['content-type'] === undefined) return done(null, parseJsonBody(buffer))
    done(null, buffer.length === 0 ? undefined : buffer.toString('utf8'))
  })
  app.addHook('onRoute', (route) => {
    if (!route.schema) return
    // Compiled at the route's first request, not at start-up (a tenth of it). A test compiles every
    // route's schemas (schema-keywords.test.ts), so a schema the validator cannot honour fails there.
    const { schema } = route
    const name = `${[route.method].flat().join(',')} ${route.url}`
    let validate: ReturnType<typeof compileRequest> | undefined
    const hook: preValidationHookHandler = (request, _reply, done) => {
      try {
        validate ??= compileRequest(schema, name)
        validate(request)
        done()
      } catch (error) {
        done(error as Error)
      }
    }
    const existing = route.preValidation ? [route.preValidation].flat() : []
    route.preValidation = [...existing, hook]
  })
}
