// Datetimes as pydantic reads them in lax mode (pydantic-core 2.46 with the `speedate` crate 0.17;
// docs/validation.md): RFC 3339 text (a `T`, `t`, `_` or space between date and time; seconds,
// a fraction of any length and an offset optional), a date alone (midnight), or a Unix timestamp
// (seconds, or milliseconds when larger than 2e10) as a number or as the text of one.
//
// How pydantic reports a failure, which decides the texts:
// - a number: speedate's timestamp error, as `datetime_parsing`;
// - a string: whatever went wrong as a datetime, pydantic then tries the string as a DATE and
//   reports the date's error as `datetime_from_date_parsing` — so "2025-03-04T25:00" fails with
//   "unexpected extra characters at the end of the input" (the date ends at the tenth character);
// - a value that parses but falls in the year 0: "year 0 is out of range", as `datetime_parsing`.

/** The range of Python's datetime, in epoch milliseconds. */
export const MIN_DATETIME_MS = Date.parse('0001-01-01T00:00:00.000Z')
export const MAX_DATETIME_MS = Date.parse('9999-12-31T23:59:59.999Z')

export type DatetimeErrorType = 'datetime_parsing' | 'datetime_from_date_parsing'
export type ParsedDatetime = { ok: true; ms: number; iso: string } | { ok: false; type: DatetimeErrorType; error: string }

/** speedate's `ParseError` texts (its doc comments, which pydantic-core reports) for what can reach a user. */
const E = {
  tooShort: 'input is too short',
  extra: 'unexpected extra characters at the end of the input',
  dateSep: 'invalid date separator, expected `-`',
  notExact: 'Timestamp is not an exact date',
  year: 'invalid character in year',
  month: 'invalid character in month',
  day: 'invalid character in day',
  monthRange: 'month value is outside expected range of 1-12',
  dayRange: 'day value is outside expected range',
  tooSmall: 'dates before 0000 are not supported as unix timestamps',
  tooLarge: 'dates after 9999 are not supported as unix timestamps',
  timeTooLarge: 'numeric times may not exceed 86,399 seconds',
}
/** pydantic-core's own texts. */
const YEAR_0 = 'year 0 is out of range'
const NAN = 'NaN values not permitted'

/** Where speedate reads a timestamp as milliseconds rather than seconds. */
const MS_WATERSHED = 20_000_000_000n
const UNIX_0000 = -62_167_219_200n
const UNIX_9999 = 253_402_300_799n
const I64_MAX = 2n ** 63n - 1n
const I64_MIN = -(2n ** 63n)

interface Instant { ms: number; year: number }
type Outcome = Instant | { error: string }
const failed = (o: Outcome | undefined): o is { error: string } => o !== undefined && 'error' in o

/** A JSON string or number given for a `datetime` field. */
export function readDatetime(input: string | number): ParsedDatetime {
  if (typeof input === 'number') {
    const read = Number.isNaN(input) ? { error: NAN } : fromNumber(input)
    return failed(read) ? { ok: false, type: 'datetime_parsing', error: read.error } : finish(read)
  }
  const bytes = new TextEncoder().encode(input)
  const read = datetimeFromText(bytes)
  if (read && !failed(read)) return finish(read)
  const date = dateFromText(bytes)
  return failed(date) ? { ok: false, type: 'datetime_from_date_parsing', error: date.error } : finish(date)
}

function finish(instant: Instant): ParsedDatetime {
  if (instant.year === 0) return { ok: false, type: 'datetime_parsing', error: YEAR_0 }
  return { ok: true, ms: instant.ms, iso: new Date(instant.ms).toISOString() }
}

const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39
const digit = (b: number) => b - 0x30
const two = (bytes: Uint8Array, at: number) => digit(bytes[at]) * 10 + digit(bytes[at + 1])

/** Milliseconds of a calendar time (any year from 0), minus an offset in seconds. */
function utcMs(year: number, month: number, day: number, seconds: number, millis: number, offset = 0): number {
  const at = new Date(Date.UTC(2000, 0, 1, 0, 0, seconds, millis))
  at.setUTCFullYear(year, month - 1, day)
  return at.getTime() - offset * 1000
}

interface CalendarDate { year: number; month: number; day: number }

/** speedate's `Date::parse_bytes_partial`: `YYYY-MM-DD` at the start; what follows is not looked at. */
function datePrefix(bytes: Uint8Array): CalendarDate | { error: string } {
  if (bytes.length < 10) return { error: E.tooShort }
  for (let i = 0; i < 4; i++) if (!isDigit(bytes[i])) return { error: E.year }
  if (bytes[4] !== 0x2d) return { error: E.dateSep }
  if (!isDigit(bytes[5]) || !isDigit(bytes[6])) return { error: E.month }
  if (bytes[7] !== 0x2d) return { error: E.dateSep }
  if (!isDigit(bytes[8]) || !isDigit(bytes[9])) return { error: E.day }
  const year = two(bytes, 0) * 100 + two(bytes, 2)
  const month = two(bytes, 5)
  const day = two(bytes, 8)
  if (month < 1 || month > 12) return { error: E.monthRange }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
  if (day < 1 || day > days) return { error: E.dayRange }
  return { year, month, day }
}

/** A string as a datetime: RFC 3339, else a number; undefined or an error when neither (the error is not what pydantic reports). */
function datetimeFromText(bytes: Uint8Array): Outcome | undefined {
  const rfc = rfc3339(bytes)
  if (rfc) return rfc
  const number = parseNumber(bytes)
  if (number === undefined) return undefined
  if (typeof number === 'bigint') return fromTimestamp(number, 0)
  // speedate reads a fractional timestamp in text as milliseconds beyond the watershed, then as seconds and microseconds.
  const normalized = Math.abs(number) > Number(MS_WATERSHED) ? number / 1000 : number
  const seconds = toI64(Math.floor(normalized))
  return fromTimestamp(seconds, toU32(Math.round((normalized - Number(seconds)) * 1e6)))
}

/** speedate's `DateTime::parse_bytes_rfc3339`: a date, a separator, `HH:MM[:SS[.f…]]`, then `Z`, `z` or `±HH[:]MM`. */
function rfc3339(bytes: Uint8Array): Instant | undefined {
  const date = datePrefix(bytes)
  if ('error' in date) return undefined
  if (![0x54, 0x74, 0x20, 0x5f].includes(bytes[10])) return undefined
  const at = 11
  if (bytes.length - at < 5) return undefined
  if (!isDigit(bytes[at]) || !isDigit(bytes[at + 1]) || bytes[at + 2] !== 0x3a || !isDigit(bytes[at + 3]) || !isDigit(bytes[at + 4])) return undefined
  const hour = two(bytes, at)
  const minute = two(bytes, at + 3)
  if (hour > 23 || minute > 59) return undefined
  let second = 0
  let micro = 0
  let pos = at + 5
  if (bytes[pos] === 0x3a) {
    if (!isDigit(bytes[pos + 1]) || !isDigit(bytes[pos + 2])) return undefined
    second = two(bytes, pos + 1)
    if (second > 59) return undefined
    pos += 3
    if (bytes[pos] === 0x2e || bytes[pos] === 0x2c) {
      // Any number of digits; pydantic keeps six (microseconds) and drops the rest.
      let digits = 0
      while (isDigit(bytes[pos + 1 + digits])) {
        if (digits < 6) micro = micro * 10 + digit(bytes[pos + 1 + digits])
        digits++
      }
      if (digits === 0) return undefined
      micro *= 10 ** Math.max(0, 6 - digits)
      pos += 1 + digits
    }
  }
  let offset = 0
  if (pos < bytes.length) {
    const sign = bytes[pos]
    pos++
    if (sign !== 0x5a && sign !== 0x7a) {
      let negative = sign === 0x2d
      if (sign === 0xe2) {
        // U+2212 MINUS SIGN, which ISO 8601 allows for negative offsets.
        if (bytes[pos] !== 0x88 || bytes[pos + 1] !== 0x92) return undefined
        pos += 2
        negative = true
      } else if (sign !== 0x2b && sign !== 0x2d) return undefined
      if (!isDigit(bytes[pos]) || !isDigit(bytes[pos + 1])) return undefined
      const hours = two(bytes, pos)
      if (bytes[pos + 2] === 0x3a) pos += 3
      else if (isDigit(bytes[pos + 2])) pos += 2
      else return undefined
      if (!isDigit(bytes[pos]) || !isDigit(bytes[pos + 1])) return undefined
      const minutes = two(bytes, pos)
      if (minutes > 59) return undefined
      offset = (negative ? -1 : 1) * (hours * 3600 + minutes * 60)
      if (Math.abs(offset) >= 24 * 3600) return undefined
      pos += 2
    }
  }
  if (bytes.length > pos) return undefined
  const ms = utcMs(date.year, date.month, date.day, hour * 3600 + minute * 60 + second, Math.floor(micro / 1000), offset)
  return { ms, year: date.year }
}

/** A string as a date, pydantic's second try: `YYYY-MM-DD` exactly, else an integer timestamp at midnight UTC. */
function dateFromText(bytes: Uint8Array): Outcome {
  const date = datePrefix(bytes)
  const rfcError = 'error' in date ? date.error : bytes.length > 10 ? E.extra : undefined
  if (rfcError === undefined) {
    const { year, month, day } = date as CalendarDate
    return { ms: utcMs(year, month, day, 0, 0), year }
  }
  const int = parseInteger(bytes)
  if (typeof int !== 'bigint') return { error: rfcError }
  const split = watershed(int)
  if ('error' in split) return split
  const day = calendar(split.seconds)
  if ('error' in day) return day
  if (((split.seconds % 86_400n) + 86_400n) % 86_400n !== 0n || split.micro !== 0) return { error: E.notExact }
  return day
}

/** A JSON number: an integer is read exactly, a fraction as seconds (or milliseconds) and microseconds. */
function fromNumber(value: number): Outcome {
  if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) return fromTimestamp(BigInt(value), 0)
  const fraction = Math.abs(value - Math.trunc(value))
  const micro = Math.abs(value) <= Number(MS_WATERSHED) ? fraction * 1e6 : fraction * 1e3
  return fromTimestamp(toI64(Math.floor(value)), toU32(Math.round(micro)))
}

/** speedate's `DateTime::from_timestamp_with_config` with the watershed between seconds and milliseconds. */
function fromTimestamp(timestamp: bigint, micro: number): Outcome {
  const split = watershed(timestamp)
  if ('error' in split) return split
  let total = micro + split.micro
  if (total > 0xffff_ffff) return { error: E.timeTooLarge }
  let seconds = split.seconds
  if (total >= 1_000_000) {
    seconds += BigInt(Math.floor(total / 1_000_000))
    total %= 1_000_000
  }
  const day = calendar(seconds)
  if ('error' in day) return day
  return { ms: Number(seconds) * 1000 + Math.floor(total / 1000), year: day.year }
}

/** A timestamp as (seconds, microseconds): milliseconds when its magnitude is over 2e10. */
function watershed(timestamp: bigint): { seconds: bigint; micro: number } | { error: string } {
  if (timestamp === I64_MIN) return { error: E.tooSmall }
  if ((timestamp < 0n ? -timestamp : timestamp) <= MS_WATERSHED) return { seconds: timestamp, micro: 0 }
  let seconds = timestamp / 1000n
  let micro = Number(timestamp % 1000n) * 1000
  if (micro < 0) {
    seconds -= 1n
    micro += 1_000_000
  }
  return { seconds, micro }
}

/** The UTC day of a Unix second, within speedate's years 0000 to 9999. */
function calendar(seconds: bigint): Instant | { error: string } {
  if (seconds < UNIX_0000) return { error: E.tooSmall }
  if (seconds > UNIX_9999) return { error: E.tooLarge }
  const ms = Number(seconds) * 1000
  return { ms: ms - (((ms % 86_400_000) + 86_400_000) % 86_400_000), year: new Date(ms).getUTCFullYear() }
}

/** Rust's saturating `f64 as i64`. */
const toI64 = (v: number): bigint => (Number.isNaN(v) ? 0n : v >= 2 ** 63 ? I64_MAX : v <= -(2 ** 63) ? I64_MIN : BigInt(v))
/** Rust's saturating `f64 as u32`. */
const toU32 = (v: number): number => (Number.isNaN(v) || v <= 0 ? 0 : Math.min(v, 0xffff_ffff))

/**
 * speedate's integer reader: an optional sign then digits, wrapping in 64 bits and failing when
 * the value turns negative; the byte it stopped at tells a float (`.`) from anything else.
 */
function parseInteger(bytes: Uint8Array): bigint | { stoppedAt: number | undefined } {
  if (bytes.length === 0) return { stoppedAt: undefined }
  const negative = bytes[0] === 0x2d && bytes.length >= 2
  const start = (negative || bytes[0] === 0x2b) && bytes.length >= 2 ? 1 : 0
  if (!isDigit(bytes[start])) return { stoppedAt: bytes[start] }
  let value = BigInt(digit(bytes[start]))
  for (let i = start + 1; i < bytes.length; i++) {
    value = BigInt.asIntN(64, value * 10n)
    if (!isDigit(bytes[i])) return { stoppedAt: bytes[i] }
    value = BigInt.asIntN(64, value + BigInt(digit(bytes[i])))
    if (value < 0n) return { stoppedAt: bytes[i] }
  }
  return negative ? -value : value
}

const FLOAT_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
/** speedate's number reader: an integer, else (when the integer stopped at a `.`) a float. */
function parseNumber(bytes: Uint8Array): bigint | number | undefined {
  const int = parseInteger(bytes)
  if (typeof int === 'bigint') return int
  if (int.stoppedAt !== 0x2e) return undefined
  const text = new TextDecoder().decode(bytes)
  return FLOAT_TEXT.test(text) ? Number(text) : undefined
}
