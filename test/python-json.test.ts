import t, { type Test } from 'tap'
import {
  JsonDecodeError,
  JsonIntegerTooLongError,
  JsonTooDeepError,
  MAX_DEPTH,
  parsePythonJson,
} from '../src/validation/python-json.js'

// Every expected message and position below is what CPython's `json.loads` reports.

type Outcome = { reason: string, pos: number } | { value: unknown } | { thrown: string }

/** What parsing `text` produces, in a form that compares with strictSame. */
function outcome (text: string): Outcome {
  try {
    return { value: parsePythonJson(text) }
  } catch (error) {
    if (error instanceof JsonDecodeError) return { reason: error.reason, pos: error.pos }
    if (error instanceof Error) return { thrown: error.name }
    throw error
  }
}

/** JSON.stringify, also escaping the line separators that would break a TAP line. */
function show (text: string): string {
  return JSON.stringify(text).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
}

type ErrorCase = [text: string, reason: string, pos: number]

function checkErrors (t: Test, cases: ErrorCase[]): void {
  for (const [text, reason, pos] of cases) {
    t.strictSame(outcome(text), { reason, pos }, `${show(text)} fails with "${reason}" at ${pos}`)
  }
}

type ValueCase = [text: string, value: unknown]

function checkValues (t: Test, cases: ValueCase[]): void {
  for (const [text, value] of cases) {
    t.strictSame(outcome(text), { value }, `${show(text)} parses`)
  }
}

/** `depth` arrays nested in one another, the innermost holding `inner`. */
function nestedArrays (depth: number, inner = ''): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth)
}

t.test('any value may be the whole document, surrounded by JSON whitespace', async (t) => {
  checkValues(t, [
    ['null', null],
    ['true', true],
    ['false', false],
    ['0', 0],
    ['"text"', 'text'],
    ['[]', []],
    ['{}', {}],
    [' \t\n\r 1 \t\n\r ', 1],
    ['\n[\n1\n,\n2\n]\n', [1, 2]],
    ['{ "a" : 1 , "b" : [ ] }', { a: 1, b: [] }],
  ])
})

t.test('an empty document, or one of whitespace only, is "Expecting value" at its end', async (t) => {
  checkErrors(t, [
    ['', 'Expecting value', 0],
    ['   ', 'Expecting value', 3],
    [' \t\n\r ', 'Expecting value', 5],
  ])
})

t.test('only space, tab, line feed and carriage return count as whitespace', async (t) => {
  checkErrors(t, [
    ['\u000c1', 'Expecting value', 0],
    ['\u000b1', 'Expecting value', 0],
    ['\u00a0{}', 'Expecting value', 0],
    ['\u2028[]', 'Expecting value', 0],
    ['{}\u00a0', 'Extra data', 2],
    ['[1,\u00a02]', 'Expecting value', 3],
  ])
})

t.test('a leading byte order mark is refused as json.loads refuses it for a str', async (t) => {
  checkErrors(t, [
    ['\ufeff{}', 'Unexpected UTF-8 BOM (decode using utf-8-sig)', 0],
    ['\ufeff', 'Unexpected UTF-8 BOM (decode using utf-8-sig)', 0],
  ])
})

t.test('anything but whitespace after the value is "Extra data" at its first character', async (t) => {
  checkErrors(t, [
    ['{} x', 'Extra data', 3],
    ['01', 'Extra data', 1],
    ['1e', 'Extra data', 1],
    ['1e+', 'Extra data', 1],
    ['1.', 'Extra data', 1],
    ['1.e5', 'Extra data', 1],
    ['-0x1', 'Extra data', 2],
    ['NaN1', 'Extra data', 3],
    ['nullx', 'Extra data', 4],
    ['[]]', 'Extra data', 2],
    ['{}}', 'Extra data', 2],
    ['[],[]', 'Extra data', 2],
    ['42,"spam"', 'Extra data', 2],
    ['"spam",42', 'Extra data', 6],
    ['1 \n 2', 'Extra data', 4],
  ])
})

t.test('a missing or unrecognised value is "Expecting value" where it should start', async (t) => {
  checkErrors(t, [
    ['hello', 'Expecting value', 0],
    ['-', 'Expecting value', 0],
    ['-x', 'Expecting value', 0],
    ['- 1', 'Expecting value', 0],
    ['+1', 'Expecting value', 0],
    ['.5', 'Expecting value', 0],
    ['nul', 'Expecting value', 0],
    ['tru', 'Expecting value', 0],
    ['True', 'Expecting value', 0],
    ['nan', 'Expecting value', 0],
    ['Nan', 'Expecting value', 0],
    ['Infinit', 'Expecting value', 0],
    ['-Infinit', 'Expecting value', 0],
    ['Inf', 'Expecting value', 0],
    ['-Inf', 'Expecting value', 0],
    ["'a'", 'Expecting value', 0],
    ['{"a": }', 'Expecting value', 6],
    ['{"a":', 'Expecting value', 5],
    ['{"spam":[}', 'Expecting value', 9],
    ['[1,]', 'Expecting value', 3],
    ['[42,', 'Expecting value', 4],
    ['[,', 'Expecting value', 1],
    ['[', 'Expecting value', 1],
    ['[ ', 'Expecting value', 2],
    ['["spam",]', 'Expecting value', 8],
  ])
})

t.test('the named constants and numbers read as Python reads them', async (t) => {
  checkValues(t, [
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['[NaN, Infinity, -Infinity]', [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]],
    ['0', 0],
    ['-0', 0],
    ['-0.0', -0],
    ['12', 12],
    ['-12', -12],
    ['1.5', 1.5],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e+3', 1000],
    ['1e-3', 0.001],
    ['-1.25e-2', -0.0125],
    ['0.000', 0],
    ['1e400', Number.POSITIVE_INFINITY],
    ['-1e400', Number.NEGATIVE_INFINITY],
    ['12345678901234567890', Number('12345678901234567890')], // beyond 2^53: the nearest double
    ['[1,2]', [1, 2]],
  ])
  t.ok(Object.is(parsePythonJson('-0'), 0), 'an integer -0 is 0, as Python ints have no negative zero')
  t.ok(Object.is(parsePythonJson('-0.0'), -0), 'a float -0.0 keeps its sign')
})

t.test('an integer with more digits than Python converts is refused, a float is not', async (t) => {
  t.equal(parsePythonJson('9'.repeat(4300)), Number('9'.repeat(4300)), '4300 digits are accepted')
  t.equal(parsePythonJson('-' + '9'.repeat(4300)), -Number('9'.repeat(4300)), 'the sign is not a digit')
  t.throws(() => parsePythonJson('1'.repeat(4301)), JsonIntegerTooLongError, '4301 digits are refused')
  t.throws(() => parsePythonJson(`[${'1'.repeat(5000)}]`), JsonIntegerTooLongError, 'also inside an array')
  t.equal(parsePythonJson('1'.repeat(5000) + '.0'), Number.POSITIVE_INFINITY, 'a long float is a float')
  t.equal(parsePythonJson('1'.repeat(5000) + 'e0'), Number.POSITIVE_INFINITY, 'an exponent makes it a float')
  t.strictSame(outcome('[1 x, ' + '1'.repeat(5000) + ']'), { reason: "Expecting ',' delimiter", pos: 3 },
    'an earlier syntax error wins')
})

t.test('objects report the first thing that is not where it should be', async (t) => {
  checkErrors(t, [
    ['{', 'Expecting property name enclosed in double quotes', 1],
    ['{ ', 'Expecting property name enclosed in double quotes', 2],
    ['{,', 'Expecting property name enclosed in double quotes', 1],
    ['{:', 'Expecting property name enclosed in double quotes', 1],
    ['{42', 'Expecting property name enclosed in double quotes', 1],
    ["{'a': 1}", 'Expecting property name enclosed in double quotes', 1],
    ['{a: 1}', 'Expecting property name enclosed in double quotes', 1],
    ['[{]', 'Expecting property name enclosed in double quotes', 2],
    ['{"a":1,}', 'Expecting property name enclosed in double quotes', 7],
    ['{"a":1, }', 'Expecting property name enclosed in double quotes', 8],
    ['{"a":1,', 'Expecting property name enclosed in double quotes', 7],
    ['{"a"', "Expecting ':' delimiter", 4],
    ['{"a" 1}', "Expecting ':' delimiter", 5],
    ['{"spam",', "Expecting ':' delimiter", 7],
    ['{"spam"}', "Expecting ':' delimiter", 7],
    ['[{"spam"]', "Expecting ':' delimiter", 8],
    ['{"a":1 "b":2}', "Expecting ',' delimiter", 7],
    ['{"a":1', "Expecting ',' delimiter", 6],
    ['{"a":1 ', "Expecting ',' delimiter", 7],
    ['{"a":1]', "Expecting ',' delimiter", 6],
    ['{"a":1;"b":2}', "Expecting ',' delimiter", 6],
    ['[{"spam":42]', "Expecting ',' delimiter", 11],
  ])
})

t.test('arrays report a missing comma where the next value starts', async (t) => {
  checkErrors(t, [
    ['[1 2]', "Expecting ',' delimiter", 3],
    ['[1', "Expecting ',' delimiter", 2],
    ['[1 ', "Expecting ',' delimiter", 3],
    ['[42:', "Expecting ',' delimiter", 3],
    ['[42 "spam"', "Expecting ',' delimiter", 4],
    ['["spam":', "Expecting ',' delimiter", 7],
    ['{"spam":[42}', "Expecting ',' delimiter", 11],
    ['[[1] [2]]', "Expecting ',' delimiter", 5],
    ['[1,\n 2\n x]', "Expecting ',' delimiter", 8],
  ])
})

t.test('strings report control characters, unterminated strings and bad escapes', async (t) => {
  checkErrors(t, [
    ['"a\u0001b"', 'Invalid control character at', 2],
    ['"a\nb"', 'Invalid control character at', 2],
    ['"a\tb"', 'Invalid control character at', 2],
    ['"\u0000"', 'Invalid control character at', 1],
    ['"a\u001fb"', 'Invalid control character at', 2],
    ['{"a\tb": 1}', 'Invalid control character at', 3],
    ['"abc\u0001', 'Invalid control character at', 4],
    ['"', 'Unterminated string starting at', 0],
    ['"abc', 'Unterminated string starting at', 0],
    ['["', 'Unterminated string starting at', 1],
    ['["]', 'Unterminated string starting at', 1],
    ['{"', 'Unterminated string starting at', 1],
    ['{"spam', 'Unterminated string starting at', 1],
    ['{"a": "b', 'Unterminated string starting at', 6],
    ['"a\\', 'Unterminated string starting at', 0],
    ['"a\\"', 'Unterminated string starting at', 0],
    ['"\\ud834\\"', 'Unterminated string starting at', 0],
    ['"\\x"', 'Invalid \\escape', 1],
    ['"ab\\q"', 'Invalid \\escape', 3],
    ['"\\U0041"', 'Invalid \\escape', 1],
    ['"\\\'"', 'Invalid \\escape', 1],
    ['"\\0"', 'Invalid \\escape', 1],
    ['"\\ "', 'Invalid \\escape', 1],
    ['{"k\\a": 1}', 'Invalid \\escape', 3],
  ])
  checkValues(t, [
    ['"a\u007fb"', 'a\u007fb'],
    ['"\u2028\u2029"', '\u2028\u2029'],
    ['"\\/\\b\\f\\n\\r\\t\\"\\\\"', '/\b\f\n\r\t"\\'],
  ])
})

t.test('a \\u escape needs four hex digits and one more character, else it is reported at its u', async (t) => {
  checkErrors(t, [
    ['"\\u"', 'Invalid \\uXXXX escape', 2],
    ['"\\u12"', 'Invalid \\uXXXX escape', 2],
    ['"\\u123"', 'Invalid \\uXXXX escape', 2],
    ['"\\u1234', 'Invalid \\uXXXX escape', 2],
    ['"ab\\u1234', 'Invalid \\uXXXX escape', 4],
    ['"\\uzzzz"', 'Invalid \\uXXXX escape', 2],
    ['"\\u12g4"', 'Invalid \\uXXXX escape', 2],
    ['"\\u-123"', 'Invalid \\uXXXX escape', 2],
    ['"\\u 123"', 'Invalid \\uXXXX escape', 2],
    ['"\\ud834\\u12"', 'Invalid \\uXXXX escape', 8],
    ['"\\ud834\\uzzzz"', 'Invalid \\uXXXX escape', 8],
    ['"\\ud834\\udd1e', 'Invalid \\uXXXX escape', 8],
    ['"😀\\u12"', 'Invalid \\uXXXX escape', 3],
  ])
  checkValues(t, [
    ['"\\u0041"', 'A'],
    ['"\\u00e9\\u00E9"', 'éé'],
    ['"\\u12345"', '\u12345'],
    ['"\\u0000"', '\u0000'],
  ])
})

t.test('surrogate escapes pair up when they can and stay lone when they cannot', async (t) => {
  checkValues(t, [
    ['"\\ud83d\\ude00"', '😀'],
    ['"\\uD83D\\uDE00"', '😀'],
    ['"\\ud834\\udd1e"', '\u{1d11e}'],
    ['"\\ud83d"', '\ud83d'],
    ['"\\ude00"', '\ude00'],
    ['"\\ude00\\ud83d"', '\ude00\ud83d'],
    ['"\\ud834\\u0041"', '\ud834A'],
    ['"\\ud834\\ud834\\udd1e"', '\ud834\u{1d11e}'],
    ['"\\ud834x"', '\ud834x'],
    ['"\\ud834\\n"', '\ud834\n'],
    ['["\\ud83d", "\\ude00"]', ['\ud83d', '\ude00']],
    ['{"\\ud83d\\ude00": "😀"}', { '😀': '😀' }],
  ])
})

t.test('positions count code points, as Python string indices do', async (t) => {
  checkErrors(t, [
    ['"😀" x', 'Extra data', 4],
    ['["😀", 1 x]', "Expecting ',' delimiter", 8],
    ['["😀😀😀", ]', 'Expecting value', 8],
    ['{"😀": 1,}', 'Expecting property name enclosed in double quotes', 8],
    ['"😀\u0000"', 'Invalid control character at', 2],
    ['"😀\\x"', 'Invalid \\escape', 2],
    ['["é", 1 x]', "Expecting ',' delimiter", 8],
    ['["😀", "', 'Unterminated string starting at', 6],
  ])
  // A lone surrogate in the text is a code point of its own.
  checkErrors(t, [['"\ud83d" x', 'Extra data', 4]])
})

t.test('an error carries Python\'s line, column and message', async (t) => {
  const cases: Array<[string, string, number, number, number]> = [
    ['', 'Expecting value', 0, 1, 1],
    ['\n\n  x', 'Expecting value', 4, 3, 3],
    ['[1,\n 2\n x]', "Expecting ',' delimiter", 8, 3, 2],
    ['{\n"😀": 1 x}', "Expecting ',' delimiter", 9, 2, 8],
    [' \t\n\r ', 'Expecting value', 5, 2, 3],
  ]
  for (const [text, reason, pos, lineno, colno] of cases) {
    const error = t.throws(() => parsePythonJson(text), JsonDecodeError) as JsonDecodeError
    t.match(error, { reason, pos, lineno, colno, name: 'JsonDecodeError' }, `${show(text)} is at line ${lineno} column ${colno}`)
    t.equal(error.message, `${reason}: line ${lineno} column ${colno} (char ${pos})`, 'the message reads like str(JSONDecodeError)')
  }
  t.equal(new JsonDecodeError('Extra data', 3).message, 'Extra data: line 1 column 4 (char 3)',
    'without the document the position is taken to be on the first line')
  t.ok(new JsonDecodeError('Extra data', 3) instanceof Error, 'it is an Error')
})

t.test('duplicate keys keep the last value at the first key\'s place', async (t) => {
  const parsed = parsePythonJson('{"a": 1, "b": 2, "a": 3}') as Record<string, unknown>
  t.strictSame(parsed, { a: 3, b: 2 })
  t.strictSame(Object.keys(parsed), ['a', 'b'])
  t.strictSame(parsePythonJson('{"a": {"x": 1}, "a": [1]}'), { a: [1] })
})

t.test('__proto__ and other special keys become ordinary own properties', async (t) => {
  const parsed = parsePythonJson('{"__proto__": 1, "constructor": 2, "hasOwnProperty": 3}') as Record<string, unknown>
  t.equal(Object.getPrototypeOf(parsed), Object.prototype, 'the result is a plain object')
  t.ok(Object.prototype.hasOwnProperty.call(parsed, '__proto__'), '__proto__ is an own property')
  t.ok(Object.prototype.propertyIsEnumerable.call(parsed, '__proto__'), '__proto__ is enumerable')
  t.strictSame(Object.keys(parsed), ['__proto__', 'constructor', 'hasOwnProperty'])
  t.equal(JSON.stringify(parsed), '{"__proto__":1,"constructor":2,"hasOwnProperty":3}')

  const polluting = parsePythonJson('{"__proto__": {"polluted": true}, "__proto__": {"polluted": "twice"}}') as Record<string, unknown>
  t.equal(Object.getPrototypeOf(polluting), Object.prototype, 'the prototype is not replaced')
  t.equal((polluting as { polluted?: unknown }).polluted, undefined, 'nothing is inherited from the value')
  t.equal(({} as { polluted?: unknown }).polluted, undefined, 'Object.prototype is untouched')
  t.strictSame(Object.entries(polluting), [['__proto__', { polluted: 'twice' }]], 'the last duplicate wins')
  t.equal(JSON.stringify(polluting), '{"__proto__":{"polluted":"twice"}}')
})

t.test('nesting is allowed to 1000 levels and refused beyond', async (t) => {
  t.equal(MAX_DEPTH, 1000)
  const deepArrays = parsePythonJson(nestedArrays(1000, '1'))
  let levels = 0
  let cursor: unknown = deepArrays
  while (Array.isArray(cursor)) {
    levels++
    cursor = cursor[0]
  }
  t.equal(levels, 1000, '1000 nested arrays parse')
  t.equal(cursor, 1, 'the innermost value is kept')
  t.ok(Array.isArray(parsePythonJson(nestedArrays(1000))), '1000 nested arrays with an empty innermost one parse')
  t.ok(parsePythonJson('{"a":'.repeat(1000) + '1' + '}'.repeat(1000)), '1000 nested objects parse')
  t.ok(parsePythonJson('{"a":['.repeat(500) + ']}'.repeat(500)), '1000 alternating levels parse')

  t.throws(() => parsePythonJson(nestedArrays(1001, '1')), JsonTooDeepError, '1001 nested arrays are refused')
  t.throws(() => parsePythonJson(nestedArrays(1001)), JsonTooDeepError, 'even when the innermost one is empty')
  t.throws(() => parsePythonJson('{"a":'.repeat(1001) + '{}' + '}'.repeat(1001)), JsonTooDeepError, '1001 nested objects are refused')
  t.throws(() => parsePythonJson('['.repeat(1001)), JsonTooDeepError, 'the depth is refused before the input ends')
  t.throws(() => parsePythonJson('['.repeat(100_000)), JsonTooDeepError, '100000 open brackets are refused without a crash')
  t.throws(() => parsePythonJson('{"a":'.repeat(100_000)), JsonTooDeepError, '100000 open objects are refused without a crash')
  t.throws(() => parsePythonJson('[{"a":'.repeat(50_000) + ']'), JsonTooDeepError, 'alternating containers are refused without a crash')

  const error = new JsonTooDeepError()
  t.ok(error instanceof Error, 'it is an Error')
  t.equal(error.name, 'JsonTooDeepError')

  t.strictSame(outcome('['.repeat(1000) + 'x'), { reason: 'Expecting value', pos: 1000 }, 'a syntax error at depth 1000 is still reported')
  t.strictSame(outcome('[' + nestedArrays(999) + ' 1]'), { reason: "Expecting ',' delimiter", pos: 2000 }, 'and after closing 999 levels')
  t.strictSame(outcome('[1 x' + '['.repeat(2000)), { reason: "Expecting ',' delimiter", pos: 3 }, 'an error before the depth is exceeded wins')
  t.throws(() => parsePythonJson(nestedArrays(1000, '[1 x')), JsonTooDeepError, 'exceeding the depth wins over a later error')

  const sequential = '[' + Array.from({ length: 500 }, () => nestedArrays(1000)).join(',') + ']'
  t.throws(() => parsePythonJson(sequential), JsonTooDeepError, 'depth is per path, and 1 + 1000 is too deep')
  const siblings = Array.from({ length: 500 }, () => nestedArrays(999)).join(',')
  t.equal((parsePythonJson(`[${siblings}]`) as unknown[]).length, 500, 'many siblings of depth 1000 parse')
})

t.test('a large input parses in one pass and gives the same value as JSON.parse', async (t) => {
  const records = Array.from({ length: 40_000 }, (_, i) => ({
    id: i,
    name: `item ${i} \u00e9\u4e2d😀`,
    escaped: 'line\nbreak \\ "quoted" \t tab \u0001 \ud83d',
    score: i / 7,
    tags: ['a', 'b', { deep: [i, -i, i * 1e-9] }],
    flag: i % 2 === 0,
    nothing: null,
  }))
  const text = JSON.stringify({ records }, null, 1)
  t.ok(text.length > 5_000_000, `the input is ${text.length} characters long`)
  t.strictSame(parsePythonJson(text), JSON.parse(text))

  const bigString = 'x'.repeat(5_000_000)
  t.equal(parsePythonJson(JSON.stringify(bigString)), bigString, 'a 5 MB string parses')
  const escapes = '\\n\\u00e9'.repeat(600_000)
  t.equal(parsePythonJson(`"${escapes}"`), '\n\u00e9'.repeat(600_000), 'a string of many escapes parses')
  const numbers = Array.from({ length: 500_000 }, (_, i) => i * 3 - 7)
  t.strictSame(parsePythonJson(JSON.stringify(numbers)), numbers, 'a long array of numbers parses')

  t.strictSame(outcome(text.slice(0, -1)), { reason: "Expecting ',' delimiter", pos: [...text].length - 1 },
    'an error at the end of a large input is reported in code points')
})

t.test('JSON.stringify output of many values parses back to the same value', async (t) => {
  const values: unknown[] = [
    null, true, false, 0, 1, -1, 42, -42, 0.1, -0.5, 1e21, 1e-7, 123.456e10, 5e-324,
    Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON,
    '', 'plain', 'quote " backslash \\ slash /', 'controls \u0000\u0001\b\f\n\r\t\u001f', 'delete \u007f',
    'latin é ñ ü', 'cjk 中文', 'emoji 😀👍🏽', 'astral \u{1d11e}', 'lone \ud83d and \ude00', 'separators \u2028\u2029',
    [], {}, [[]], [{}], { a: {} }, [1, 'two', null, true, [3.5, [false]]],
    { key: 'value', 'with space': 1, 'é': 2, '😀': 3, '': 4, nested: { list: [1, { x: null }] } },
    { toString: 1, valueOf: 'v', hasOwnProperty: [] },
    JSON.parse('{"__proto__": {"x": 1}, "y": 2}'),
    Array.from({ length: 100 }, (_, i) => ({ i, s: String(i).repeat(i % 5) })),
  ]
  for (const value of values) {
    const compact = JSON.stringify(value)
    const name = show(compact.slice(0, 60))
    t.strictSame(parsePythonJson(compact), value, `${name} round-trips`)
    const pretty = JSON.stringify(value, null, '\t')
    t.strictSame(parsePythonJson(pretty), value, `${name} round-trips when indented`)
  }
  const plain = { a: [1, 2, { b: 'c' }], d: 'e', f: -1.5, g: null, h: true }
  t.strictSame(parsePythonJson(JSON.stringify(plain)), plain, 'a plain object deep-equals its parse')
})
