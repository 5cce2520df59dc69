import {
  FormatRegistry,
  Type,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox'

// The schemas below are written in the same JSON Schema shapes as pydantic emits (and as the real
// service's OpenAPI document uses), so hangar's own OpenAPI document reads like the real one.

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
FormatRegistry.Set('uuid', (value) => UUID_RE.test(value))
FormatRegistry.Set('date-time', (value) => !Number.isNaN(Date.parse(value)))

/** `{"type":"string","enum":[...]}` — what pydantic emits for a Literal; validated as `literal_error`. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/** `anyOf: [T, null]` — pydantic's `Optional[T]`. */
export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) =>
  Type.Union([schema, Type.Null()], options)

export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: 'uuid', ...options })

export const DateTime = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options })

/** `dict[str, V]`: `{"type":"object","additionalProperties": V}`. */
export const Dict = <V extends TSchema>(value: V, options: SchemaOptions = {}): TUnsafe<Record<string, Static<V>>> =>
  Type.Unsafe<Record<string, Static<V>>>({ type: 'object', additionalProperties: value, ...options })

/** `dict[str, Any]`. */
export const AnyDict = (options: SchemaOptions = {}) => Dict(Type.Unknown(), options)

/** `{"detail": "<text>"}` — every non-validation error body of the real service. */
export const ErrorDetail = Type.Object({ detail: Type.String() }, { title: 'ErrorDetail' })

/**
 * One pydantic v2 error as FastAPI returns it (the spec lists loc/msg/type; input and ctx are sent
 * too), in FastAPI's key order. (The serializer writes required keys first, then optional ones.)
 */
export const ValidationError = Type.Object(
  {
    type: Type.String({ title: 'Error Type' }),
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), { title: 'Location' }),
    msg: Type.String({ title: 'Message' }),
    input: Type.Optional(Type.Unknown()),
    ctx: Type.Optional(AnyDict()),
  },
  { title: 'ValidationError' },
)

export const HTTPValidationError = Type.Object(
  { detail: Type.Array(ValidationError, { title: 'Detail' }) },
  { title: 'HTTPValidationError' },
)

/** Response schemas for the error statuses a route can return, keyed by status code. */
export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, code === 422 ? HTTPValidationError : ErrorDetail]))
