// The texts follow pydantic 2.13.4 / pydantic-core 2.46.4 with the speedate crate 0.17.0 (the same
// in pydantic-core 2.48.0): speedate's ParseError doc comments (src/lib.rs), pydantic-core's
// src/validators/datetime.rs (a string that fails as a datetime is tried as a date, and the date's
// error is reported) and its tests/validators/test_datetime.py, whose cases are marked below.
import t from 'tap'
import { readDatetime } from '../src/validation/datetime.js'
import { makeApp } from './helpers.js'

const AT = Date.parse('2025-03-04T05:06:07Z')

t.test('the forms pydantic accepts for a datetime all read as the same instant', async (t) => {
  const same = ['2025-03-04T05:06:07Z', '2025-03-04t05:06:07z', '2025-03-04 05:06:07', '2025-03-04_05:06:07+00:00',
    '2025-03-04T07:06:07+02:00', '2025-03-04T04:06:07-0100', '2025-03-04T04:06:07\u221201:00', '2025-03-04T05:06:07.000000Z',
    '2025-03-04T05:06:07,0Z', '1741064767', '1741064767000', '+1741064767']
  for (const text of same) t.same(readDatetime(text), { ok: true, ms: AT, iso: '2025-03-04T05:06:07.000Z' }, text)
  t.same(readDatetime(1741064767), { ok: true, ms: AT, iso: '2025-03-04T05:06:07.000Z' }, 'a number of seconds')
  t.same(readDatetime(1741064767000), { ok: true, ms: AT, iso: '2025-03-04T05:06:07.000Z' }, 'a number of milliseconds (over 2e10)')
  t.same(readDatetime('2024-02-29'), { ok: true, ms: Date.parse('2024-02-29T00:00:00Z'), iso: '2024-02-29T00:00:00.000Z' }, 'a date alone is midnight')
  t.equal(readDatetime('2025-03-04T05:06').ok, true, 'seconds are optional')
  t.same(readDatetime('2025-03-04T05:06:07.123456Z'), { ok: true, ms: AT + 123, iso: '2025-03-04T05:06:07.123Z' })
  t.same(readDatetime('2025-03-04T05:06:07.1239999Z'), { ok: true, ms: AT + 123, iso: '2025-03-04T05:06:07.123Z' },
    'digits past the sixth are dropped (pydantic truncates)')
  t.same(readDatetime('1741064767.5'), { ok: true, ms: AT + 500, iso: '2025-03-04T05:06:07.500Z' }, 'a fractional timestamp in text')
  t.same(readDatetime(1741064767.25), { ok: true, ms: AT + 250, iso: '2025-03-04T05:06:07.250Z' }, 'a fractional timestamp')
  t.same(readDatetime(0), { ok: true, ms: 0, iso: '1970-01-01T00:00:00.000Z' })
  t.same(readDatetime('0001-01-01T00:00:00.000000Z'), { ok: true, ms: Date.parse('0001-01-01T00:00:00Z'), iso: '0001-01-01T00:00:00.000Z' },
    'test_datetime.py: the first instant Python holds')
})

t.test('a string that is not a datetime is reported with the error of its reading as a date', async (t) => {
  const cases: [string, string][] = [
    ['-', 'input is too short'], // test_datetime.py
    ['yesterday', 'input is too short'],
    ['tomorrow!!', 'invalid character in year'],
    ['+275760-09-13T00:00:00.001Z', 'invalid character in year'],
    ['2025/03/04', 'invalid date separator, expected `-`'],
    ['2025-1x-04', 'invalid character in month'],
    ['2025-13-01T00:00:00Z', 'month value is outside expected range of 1-12'],
    ['2022-02-30', 'day value is outside expected range'], // test_datetime.py
    ['2025-02-30T00:00:00Z', 'day value is outside expected range'],
    // The date ends at the tenth character: whatever is wrong after it reads as extra characters.
    ['2022-06-08T12:13:14+24:00', 'unexpected extra characters at the end of the input'], // test_datetime.py
    ['2025-03-04X05:06', 'unexpected extra characters at the end of the input'],
    ['2025-03-04T24:00', 'unexpected extra characters at the end of the input'],
    ['2025-03-04T05:06:61', 'unexpected extra characters at the end of the input'],
    ['2025-03-04T05:06:07.', 'unexpected extra characters at the end of the input'],
    ['2025-03-04T05:06:07Z trailing', 'unexpected extra characters at the end of the input'],
    // A timestamp in text outside what speedate holds.
    ['99999999999999999', 'dates after 9999 are not supported as unix timestamps'],
    ['-99999999999999999', 'dates before 0000 are not supported as unix timestamps'],
    ['1741064767.5.5', 'invalid date separator, expected `-`'],
  ]
  for (const [text, error] of cases) t.same(readDatetime(text), { ok: false, type: 'datetime_from_date_parsing', error }, text)
})

t.test('a number outside the years speedate holds, and the year 0, are datetime_parsing', async (t) => {
  const cases: [string | number, string][] = [
    [253_402_300_800_000, 'dates after 9999 are not supported as unix timestamps'], // test_datetime.py
    [-80_000_000_000_000, 'dates before 0000 are not supported as unix timestamps'], // test_datetime.py
    [Number.POSITIVE_INFINITY, 'dates after 9999 are not supported as unix timestamps'], // test_datetime.py
    [Number.NEGATIVE_INFINITY, 'dates before 0000 are not supported as unix timestamps'], // test_datetime.py
    [Number.NaN, 'NaN values not permitted'], // test_datetime.py
    ['0000-12-31T23:59:59.999999Z', 'year 0 is out of range'], // test_datetime.py
    ['0000-06-01', 'year 0 is out of range'],
    [-62_167_219_200_000, 'year 0 is out of range'], // milliseconds: the first instant of the year 0
  ]
  for (const [input, error] of cases) t.same(readDatetime(input), { ok: false, type: 'datetime_parsing', error }, String(input))
})

t.test('a request with a bad datetime gets pydantic\'s 422, union members tagged', async (t) => {
  const { api } = await makeApp(t)
  const res = await api.post('/_hangar/clock', { action: 'set', to: '2025-03-04T24:00' })
  t.equal(res.status, 422)
  t.same(res.body, {
    detail: [
      {
        type: 'datetime_from_date_parsing', loc: ['body', 'to', 'datetime'],
        msg: 'Input should be a valid datetime or date, unexpected extra characters at the end of the input',
        input: '2025-03-04T24:00', ctx: { error: 'unexpected extra characters at the end of the input' },
      },
      { type: 'float_parsing', loc: ['body', 'to', 'float'], msg: 'Input should be a valid number, unable to parse string as a number', input: '2025-03-04T24:00' },
    ],
  })
  const year0 = await api.post('/_hangar/clock', { action: 'set', to: '0000-06-01T00:00:00Z' })
  t.equal(year0.status, 422)
  t.same(year0.body.detail[0], {
    type: 'datetime_parsing', loc: ['body', 'to', 'datetime'], msg: 'Input should be a valid datetime, year 0 is out of range',
    input: '0000-06-01T00:00:00Z', ctx: { error: 'year 0 is out of range' },
  })
})
