// What the request journal stores instead of secrets: credentials in headers, secret fields and
// query parameters, the values of deployment secrets; and how long a stored body may be.

export type HeaderMap = Record<string, string | string[]>

export const REDACTED = '[redacted]'
export const BODY_LIMIT_BYTES = 4096

const SECRET_HEADERS: ReadonlySet<string> = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-hangar-admin-token', 'x-service-key'])
const SECRET_FIELDS: ReadonlySet<string> = new Set(['client_secret', 'token', 'access_token', 'refresh_token', 'password', 'api_key'])

/** Header names lowercased; credentials and cookies replaced by `[redacted]`. */
export function redactHeaders(headers: Record<string, unknown>): HeaderMap {
  // Without a prototype, a header named `__proto__` is one more header, not the object's prototype.
  const out = Object.create(null) as HeaderMap
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    const key = name.toLowerCase()
    out[key] = SECRET_HEADERS.has(key) ? REDACTED : Array.isArray(value) ? value.map(String) : String(value)
  }
  return out
}

/**
 * A JSON value with secret fields (and the `value` of each item of a `secrets` list) redacted;
 * the very same value when it holds no secret.
 */
export function redactJson(value: unknown, inSecrets = false): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => redactJson(item, inSecrets))
    return items.every((item, i) => item === value[i]) ? value : items
  }
  if (typeof value !== 'object' || value === null) return value
  let changed = false
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    let redacted: unknown
    if (SECRET_FIELDS.has(key) || (inSecrets && key === 'value')) redacted = REDACTED
    else if (key === 'secrets' && Array.isArray(item)) redacted = redactJson(item, true)
    else redacted = redactJson(item)
    changed ||= redacted !== item
    out[key] = redacted
  }
  return changed ? out : value
}

const SECRET_NAMES = [...SECRET_FIELDS].join('|')
const SECRET_JSON_FIELD = new RegExp(`("(?:${SECRET_NAMES})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'g')
const ANY_VALUE_FIELD = /("value"\s*:\s*)"(?:[^"\\]|\\.)*"/g
/** Query parameters that are credentials: the secret fields, and a signed upload URL's signature. */
const SECRET_PARAM = new RegExp(`(^|&)((?:${SECRET_NAMES}|X-Goog-Signature)=)[^&]*`, 'g')

/** Text that could not be read as JSON: secret-looking fields are redacted by pattern instead. */
function redactText(text: string): string {
  let out = text.replace(SECRET_JSON_FIELD, `$1"${REDACTED}"`).replace(SECRET_PARAM, `$1$2${REDACTED}`)
  if (out.includes('"secrets"')) out = out.replace(ANY_VALUE_FIELD, `$1"${REDACTED}"`)
  return out
}

/** A query string (without `?`) with secret parameters redacted. */
export const redactQuery = (query: string) => query.replace(SECRET_PARAM, `$1$2${REDACTED}`)

/**
 * A request body as shown: redacted, then cut to 4 KiB of UTF-8 text. `fullLength` is the length
 * the body had when only its start was kept.
 */
export function renderBody(body: Buffer, contentType: string | undefined, fullLength?: number): string | null {
  if (body.length === 0) return null
  const text = body.toString('utf8')
  if (contentType === undefined || /[/+]json\b/i.test(contentType)) {
    try {
      const parsed: unknown = JSON.parse(text)
      const redacted = redactJson(parsed)
      // Re-serialized only when something was hidden: otherwise the body is kept exactly as sent.
      return truncate(redacted === parsed ? text : JSON.stringify(redacted), fullLength)
    } catch {
      // Not JSON after all (a 422 in the making): redacted by pattern below.
    }
  }
  return truncate(redactText(text), fullLength)
}

/** At most BODY_LIMIT_BYTES of UTF-8 (never cutting a character), then a marker saying how much there was. */
export function truncate(text: string, fullLength?: number): string {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= BODY_LIMIT_BYTES) return text
  let cut = BODY_LIMIT_BYTES
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--
  return `${bytes.subarray(0, cut).toString('utf8')}…[truncated, ${fullLength ?? bytes.length} bytes]`
}
