// Datetimes as pydantic reads them in lax mode: RFC 3339 / ISO 8601 text (a `T`, `t`, `_` or space
// between date and time; seconds, fraction and offset optional), a date alone (midnight), or a Unix
// timestamp (seconds, or milliseconds when larger than 2e10), as a number or as digits in a string.
// The reasons in errors follow the wording of pydantic's parser; years are 0001 to 9999.

/** The range of Python's datetime, in epoch milliseconds. */
export const MIN_DATETIME_MS = Date.parse('0001-01-01T00:00:00.000Z')
export const MAX_DATETIME_MS = Date.parse('9999-12-31T23:59:59.999Z')

export type ParsedDatetime = { ok: true; ms: number; iso: string } | { ok: false; error: string }

const fail = (error: string): ParsedDatetime => ({ ok: false, error })
const digits = (text: string) => /^\d+$/.test(text)
const pad = (n: number, width = 2) => String(n).padStart(width, '0')

function fromMs(ms: number): ParsedDatetime {
  if (!(ms >= MIN_DATETIME_MS && ms <= MAX_DATETIME_MS)) return fail('timestamp value is outside expected range')
  return { ok: true, ms, iso: new Date(ms).toISOString() }
}

/** A Unix timestamp: seconds, or milliseconds when its magnitude is over 2e10. */
export function fromTimestamp(value: number): ParsedDatetime {
  if (!Number.isFinite(value)) return fail('timestamp value is outside expected range')
  return fromMs(Math.abs(value) > 2e10 ? value : value * 1000)
}

export function parseDatetime(text: string): ParsedDatetime {
  if (/^[+-]?\d+(\.\d+)?$/.test(text)) return fromTimestamp(Number(text))
  if (text.length < 10) return fail('input is too short')
  if (!digits(text.slice(0, 4))) return fail('invalid character in year')
  if (text[4] !== '-') return fail('invalid date separator')
  if (!digits(text.slice(5, 7))) return fail('invalid character in month')
  const [year, month] = [Number(text.slice(0, 4)), Number(text.slice(5, 7))]
  if (month < 1 || month > 12) return fail('month value is outside expected range of 1-12')
  if (text[7] !== '-') return fail('invalid date separator')
  if (!digits(text.slice(8, 10))) return fail('invalid character in day')
  const day = Number(text.slice(8, 10))
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0)
  if (day < 1 || day > daysInMonth) return fail('day value is outside expected range')
  if (year === 0) return fail('year value is outside expected range')
  const date = `${pad(year, 4)}-${pad(month)}-${pad(day)}`
  if (text.length === 10) return fromMs(Date.parse(`${date}T00:00:00.000Z`))
  if (!'Tt_ '.includes(text[10])) return fail('invalid datetime separator, expected `T`, `t`, `_` or space')
  const time = parseTime(text.slice(11))
  if ('error' in time) return fail(time.error)
  return fromMs(Date.parse(`${date}T${time.text}`))
}

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

/** `HH:MM[:SS[.ffffff]][Z|±HH[:]MM]` → text `Date.parse` reads (no offset means UTC). */
function parseTime(rest: string): { text: string } | { error: string } {
  if (rest.length < 5) return { error: 'input is too short' }
  if (!digits(rest.slice(0, 2))) return { error: 'invalid character in hour' }
  const hour = Number(rest.slice(0, 2))
  if (hour > 23) return { error: 'hour value is outside expected range of 0-23' }
  if (rest[2] !== ':') return { error: 'invalid time separator' }
  if (!digits(rest.slice(3, 5))) return { error: 'invalid character in minute' }
  const minute = Number(rest.slice(3, 5))
  if (minute > 59) return { error: 'minute value is outside expected range of 0-59' }
  let pos = 5
  let second = 0
  let millis = 0
  if (rest[pos] === ':') {
    if (!digits(rest.slice(6, 8))) return { error: 'invalid character in second' }
    second = Number(rest.slice(6, 8))
    if (second > 59) return { error: 'second value is outside expected range of 0-59' }
    pos = 8
    if (rest[pos] === '.' || rest[pos] === ',') {
      const fraction = /^\d+/.exec(rest.slice(pos + 1))?.[0] ?? ''
      if (fraction === '') return { error: 'invalid character in second fraction' }
      if (fraction.length > 6) return { error: 'second fraction value is more than 6 digits long' }
      millis = Math.floor(Number(fraction.padEnd(6, '0')) / 1000)
      pos += 1 + fraction.length
    }
  }
  let offset = 'Z'
  const zone = rest.slice(pos)
  if (zone === 'Z' || zone === 'z') pos += 1
  else if (zone[0] === '+' || zone[0] === '-') {
    const match = /^[+-](\d{2}):?(\d{2})$/.exec(zone)
    if (!match) return { error: 'invalid timezone sign' }
    if (Number(match[1]) > 23 || Number(match[2]) > 59) return { error: 'timezone offset must be less than 24 hours' }
    offset = `${zone[0]}${match[1]}:${match[2]}`
    pos = rest.length
  }
  if (pos !== rest.length) return { error: 'unexpected extra characters at the end of the input' }
  return { text: `${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(millis, 3)}${offset}` }
}
