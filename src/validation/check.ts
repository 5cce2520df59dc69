// The shape every compiled validator shares: a function of (input, location, errors) that returns
// the validated value, or INVALID after pushing pydantic's errors for the input.

import type { PydanticError } from './pydantic-error.js'

export type Loc = (string | number)[]
/** Validates `input` at `loc`; pushes errors and returns INVALID on failure, else the validated value. */
export type Check = (input: unknown, loc: Loc, errors: PydanticError[]) => unknown
export const INVALID: unique symbol = Symbol('invalid')

/** One pydantic error; `ctx` only when the error type has one. */
export const err = (type: string, loc: Loc, msg: string, input: unknown, ctx?: Record<string, unknown>): PydanticError =>
  ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx }

export function fail(errors: PydanticError[], error: PydanticError): typeof INVALID {
  errors.push(error)
  return INVALID
}

/** pydantic's `{n} item{expected_plural}`. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
