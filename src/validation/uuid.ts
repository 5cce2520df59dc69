/**
 * UUID parsing as pydantic v2 does it for a `UUID` field given a string: the Rust `uuid` crate's
 * `Uuid::parse_str`, with the texts of its error messages (pydantic reports them as
 * `Input should be a valid UUID, <error>`). The texts are those of uuid 1.23.0, the crate of
 * pydantic-core 2.46 / pydantic 2.13 (docs/validation.md says what the next versions change).
 */

export type UuidResult = { ok: true, value: string } | { ok: false, error: string }

const URN_PREFIX = 'urn:uuid:'
/** Lowercase hyphenated: the form `value` is given in. */
const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** Index of the first character of each group in a hyphenated UUID. */
const GROUP_STARTS = [0, 9, 14, 19, 24] as const
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const

/** Whether `input` is already lowercase hyphenated: the form clients send, and the one `value` is given in. */
export const isCanonicalUuid = (input: string): boolean => CANONICAL.test(input)

/**
 * Accepts the hyphenated (`8-4-4-4-12`), simple (32 hex digits), braced (`{hyphenated}`) and URN
 * (`urn:uuid:hyphenated`) forms, hex digits in either case; `value` is the lowercase hyphenated form.
 */
export function parseUuid (input: string): UuidResult {
  const hex = acceptedHexDigits(input)
  if (hex !== undefined) {
    const h = hex.toLowerCase()
    return {
      ok: true,
      value: `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    }
  }
  return { ok: false, error: describeFailure(attemptedPart(input)) }
}

/** The 32 hex digits of an accepted form, else undefined. */
function acceptedHexDigits (input: string): string | undefined {
  switch (input.length) {
    case 32:
      return isHex(input) ? input : undefined
    case 36:
      return hyphenatedDigits(input)
    case 38:
      return input.startsWith('{') && input.endsWith('}') ? hyphenatedDigits(input.slice(1, -1)) : undefined
    case 45:
      return input.startsWith(URN_PREFIX) ? hyphenatedDigits(input.slice(URN_PREFIX.length)) : undefined
    default:
      return undefined
  }
}

function hyphenatedDigits (s: string): string | undefined {
  if (s[8] !== '-' || s[13] !== '-' || s[18] !== '-' || s[23] !== '-') return undefined
  const digits = s.slice(0, 8) + s.slice(9, 13) + s.slice(14, 18) + s.slice(19, 23) + s.slice(24)
  return digits.length === 32 && isHex(digits) ? digits : undefined
}

function isHex (s: string): boolean {
  return /^[0-9a-fA-F]*$/.test(s)
}

/**
 * The part of the input the crate diagnoses. It picks a form by the length in bytes: a braced
 * input of 38 bytes or a URN of 45 is handed to the hyphenated parser without its wrapper, and a
 * failure there is described from that inner part alone (so positions count from inside the braces).
 */
function attemptedPart (input: string): string {
  const bytes = Buffer.byteLength(input, 'utf8')
  if (bytes === 38 && input.startsWith('{') && input.endsWith('}')) return input.slice(1, -1)
  if (bytes === 45 && input.startsWith(URN_PREFIX)) return input.slice(URN_PREFIX.length)
  return input
}

/** The crate's diagnosis of a string that does not parse (`InvalidUuid::into_err`). */
function describeFailure (input: string): string {
  const byteLength = Buffer.byteLength(input, 'utf8')
  let body = input
  let offset = 0
  if (input.length >= 2 && input.startsWith('{') && input.endsWith('}')) {
    body = input.slice(1, -1)
    offset = 1
  } else if (input.startsWith(URN_PREFIX)) {
    body = input.slice(URN_PREFIX.length)
    offset = URN_PREFIX.length
  }

  let hyphens = 0
  const hyphenAt: number[] = []
  let index = 0 // in code points; every character before a reported one is ASCII
  for (const character of body) {
    if (character === '-') {
      if (hyphens < 4) hyphenAt.push(index)
      hyphens++
    } else if (!/^[0-9a-fA-F]$/.test(character)) {
      return `invalid character: found \`${character}\` at ${offset + index + 1}`
    }
    index++
  }

  // Only the bare form counts as an attempt at the simple format: a braced or URN string
  // without hyphens falls through to the group count, as in the crate.
  if (hyphens === 0 && offset === 0) return `invalid length: expected length 32 for simple format, found ${byteLength}`
  if (hyphens !== 4) return `invalid group count: expected 5, found ${hyphens + 1}`
  for (let group = 0; group < 4; group++) {
    const end = hyphenAt[group]
    if (end !== GROUP_STARTS[group + 1] - 1) {
      return `invalid group length in group ${group}: expected ${GROUP_LENGTHS[group]}, found ${end - GROUP_STARTS[group]}`
    }
  }
  // The crate measures the last group against the whole input, braces or URN prefix included.
  return `invalid group length in group 4: expected 12, found ${byteLength - GROUP_STARTS[4]}`
}
