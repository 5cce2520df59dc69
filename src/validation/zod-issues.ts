// The session protocol's bodies are checked as the real JS server checks them (zod 3 schemas behind
// a validator that answers 400 `{"success":false,"error":{"issues":[…],"name":"ZodError"}}`): the
// same issue codes, messages and key order, for the few schema shapes those bodies use.

export type ZodIssue = Record<string, unknown>

/** A field's rule: its type, whether it may be absent, and its items' or entries' rule. */
export type ZodRule =
  | { type: 'string' | 'unknown'; optional?: boolean }
  | { type: 'int'; optional?: boolean; nonnegative?: boolean }
  | { type: 'array'; items: ZodRule; optional?: boolean }
  | { type: 'record'; optional?: boolean }

export interface ZodObject {
  fields: Readonly<Record<string, ZodRule>>
  /** Unknown keys are an issue (`.strict()`). */
  strict?: boolean
}

/** zod's name for a value's type, as `received` reports it. */
function typeOf(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function typeIssue(expected: string, value: unknown, path: (string | number)[]): ZodIssue {
  const received = typeOf(value)
  return { code: 'invalid_type', expected, received, path, message: received === 'undefined' ? 'Required' : `Expected ${expected}, received ${received}` }
}

function check(rule: ZodRule, value: unknown, path: (string | number)[], issues: ZodIssue[]): void {
  if (value === undefined && rule.optional) return
  switch (rule.type) {
    case 'unknown':
      return
    case 'string':
      if (typeof value !== 'string') issues.push(typeIssue('string', value, path))
      return
    case 'int':
      if (typeof value !== 'number') return void issues.push(typeIssue('number', value, path))
      // A check's issue carries its (absent) custom message before the path, as zod 3 builds it.
      if (!Number.isInteger(value)) issues.push({ code: 'invalid_type', expected: 'integer', received: 'float', message: 'Expected integer, received float', path })
      if (rule.nonnegative && value < 0) {
        issues.push({ code: 'too_small', minimum: 0, type: 'number', inclusive: true, exact: false, message: 'Number must be greater than or equal to 0', path })
      }
      return
    case 'array':
      if (!Array.isArray(value)) return void issues.push(typeIssue('array', value, path))
      value.forEach((item, i) => check(rule.items, item, [...path, i], issues))
      return
    case 'record':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) issues.push(typeIssue('object', value, path))
  }
}

/** The issues of `body` against an object schema (none: it is valid). */
export function zodIssues(schema: ZodObject, body: unknown): ZodIssue[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [typeIssue('object', body, [])]
  const issues: ZodIssue[] = []
  const record = body as Record<string, unknown>
  for (const [key, rule] of Object.entries(schema.fields)) check(rule, record[key], [key], issues)
  if (schema.strict) {
    const extra = Object.keys(record).filter((k) => !(k in schema.fields))
    if (extra.length > 0) {
      issues.push({ code: 'unrecognized_keys', keys: extra, path: [], message: `Unrecognized key(s) in object: ${extra.map((k) => `'${k}'`).join(', ')}` })
    }
  }
  return issues
}

/** The 400 body the validator answers with. */
export const zodErrorBody = (issues: ZodIssue[]) => ({ success: false, error: { issues, name: 'ZodError' } })

/** A protocol command: `{id: int ≥ 0, method: string, params?: object}`. */
export const COMMAND_SCHEMA: ZodObject = {
  fields: { id: { type: 'int', nonnegative: true }, method: { type: 'string' }, params: { type: 'record', optional: true } },
}

/** The body of `POST /threads/{id}/stream/events`. */
export const EVENT_FILTER_SCHEMA: ZodObject = {
  strict: true,
  fields: {
    channels: { type: 'array', items: { type: 'string' } },
    namespaces: { type: 'array', items: { type: 'array', items: { type: 'string' } }, optional: true },
    depth: { type: 'int', nonnegative: true, optional: true },
    since: { type: 'int', nonnegative: true, optional: true },
  },
}
