/** One pydantic v2 validation error, in the form FastAPI returns it. */
export interface PydanticError {
  type: string
  loc: (string | number)[]
  msg: string
  input: unknown
  ctx?: Record<string, unknown>
}
