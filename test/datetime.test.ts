import t from 'tap'
import { fromTimestamp, MAX_DATETIME_MS, parseDatetime } from '../src/validation/datetime.js'

t.test('the forms pydantic accepts for a datetime all read as the same instant', async (t) => {
  const same = ['2025-03-04T05:06:07Z', '2025-03-04t05:06:07z', '2025-03-04 05:06:07', '2025-03-04_05:06:07+00:00',
    '2025-03-04T07:06:07+02:00', '2025-03-04T04:06:07-0100', '2025-03-04T05:06:07.000000Z', '1741064767', '1741064767000']
  for (const text of same) t.same(parseDatetime(text), { ok: true, ms: Date.parse('2025-03-04T05:06:07Z'), iso: '2025-03-04T05:06:07.000Z' }, text)
  t.same(parseDatetime('2024-02-29'), { ok: true, ms: Date.parse('2024-02-29T00:00:00Z'), iso: '2024-02-29T00:00:00.000Z' }, 'a date alone is midnight')
  t.equal(parseDatetime('2025-03-04T05:06').ok, true, 'seconds are optional')
  t.same(parseDatetime('2025-03-04T05:06:07.123456Z'), { ok: true, ms: Date.parse('2025-03-04T05:06:07.123Z'), iso: '2025-03-04T05:06:07.123Z' })
  t.same(fromTimestamp(0), { ok: true, ms: 0, iso: '1970-01-01T00:00:00.000Z' })
})

t.test('what is not a datetime says why, in pydantic\'s words', async (t) => {
  const cases: [string, string][] = [
    ['yesterday', 'input is too short'],
    ['tomorrow!!', 'invalid character in year'],
    ['2025/03/04', 'invalid date separator'],
    ['2025-13-01T00:00:00Z', 'month value is outside expected range of 1-12'],
    ['2025-02-29', 'day value is outside expected range'],
    ['2025-02-30T00:00:00Z', 'day value is outside expected range'],
    ['2025-03-04X05:06', 'invalid datetime separator, expected `T`, `t`, `_` or space'],
    ['2025-03-04T24:00', 'hour value is outside expected range of 0-23'],
    ['2025-03-04T05-06', 'invalid time separator'],
    ['2025-03-04T05:60', 'minute value is outside expected range of 0-59'],
    ['2025-03-04T05:06:61', 'second value is outside expected range of 0-59'],
    ['2025-03-04T05:06:07.1234567Z', 'second fraction value is more than 6 digits long'],
    ['2025-03-04T05:06:07+25:00', 'timezone offset must be less than 24 hours'],
    ['2025-03-04T05:06:07Z trailing', 'unexpected extra characters at the end of the input'],
    ['+275760-09-13T00:00:00.001Z', 'invalid character in year'],
  ]
  for (const [text, error] of cases) t.same(parseDatetime(text), { ok: false, error }, text)
  t.same(fromTimestamp(MAX_DATETIME_MS + 1), { ok: false, error: 'timestamp value is outside expected range' }, 'beyond the year 9999')
  t.same(fromTimestamp(Number.POSITIVE_INFINITY), { ok: false, error: 'timestamp value is outside expected range' })
})
