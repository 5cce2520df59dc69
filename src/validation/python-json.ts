/**
 * A JSON parser that behaves like CPython 3.12's `json.loads(text)` for a `str` argument
 * (the C accelerated scanner, `strict=True`): same accepted language (NaN, Infinity, -Infinity,
 * lone surrogate escapes), same error messages (`JSONDecodeError.msg`) and the same error
 * positions (`JSONDecodeError.pos`, a Python string index, i.e. counted in code points).
 *
 * The parser is iterative (an explicit stack of open containers), so no input can overflow the
 * JS stack, and it runs in time linear in the input length.
 */

/** Python's `json.JSONDecodeError`: `reason` is `e.msg`, `pos` is `e.pos` (code points). */
export class JsonDecodeError extends Error {
  /** 1-based line of `pos`, as Python's `e.lineno` (1 when the document is not known). */
  readonly lineno: number
  /** 1-based column of `pos`, as Python's `e.colno` (`pos + 1` when the document is not known). */
  readonly colno: number

  constructor (readonly reason: string, readonly pos: number, doc?: string) {
    let lineno = 1
    let colno = pos + 1
    if (doc !== undefined) {
      ;({ lineno, colno } = lineAndColumn(doc, pos))
    }
    super(`${reason}: line ${lineno} column ${colno} (char ${pos})`)
    this.name = 'JsonDecodeError'
    this.lineno = lineno
    this.colno = colno
  }
}

/**
 * Arrays/objects nested deeper than {@link MAX_DEPTH}: Python raises `RecursionError` there
 * (FastAPI answers 400 "There was an error parsing the body").
 */
export class JsonTooDeepError extends Error {
  constructor (message = `JSON nesting deeper than ${MAX_DEPTH} levels`) {
    super(message)
    this.name = 'JsonTooDeepError'
  }
}

/**
 * An integer literal with more than {@link MAX_INT_DIGITS} digits: Python 3.12 raises a plain
 * `ValueError` (not a `JSONDecodeError`) from `int()` there, which FastAPI also answers with 400
 * "There was an error parsing the body".
 */
export class JsonIntegerTooLongError extends Error {
  constructor (readonly digits: number) {
    super(`Exceeds the limit (${MAX_INT_DIGITS} digits) for integer string conversion: value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`)
    this.name = 'JsonIntegerTooLongError'
  }
}

/** Deepest accepted nesting of arrays/objects (`[]` is depth 1). */
export const MAX_DEPTH = 1000

/** Python's default `sys.get_int_max_str_digits()`. */
export const MAX_INT_DIGITS = 4300

const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const SPACE = 0x20
const QUOTE = 0x22
const PLUS = 0x2b
const COMMA = 0x2c
const MINUS = 0x2d
const DOT = 0x2e
const SLASH = 0x2f
const ZERO = 0x30
const ONE = 0x31
const NINE = 0x39
const COLON = 0x3a
const UPPER_E = 0x45
const UPPER_I = 0x49
const UPPER_N = 0x4e
const LBRACKET = 0x5b
const BACKSLASH = 0x5c
const RBRACKET = 0x5d
const LOWER_B = 0x62
const LOWER_E = 0x65
const LOWER_F = 0x66
const LOWER_N = 0x6e
const LOWER_R = 0x72
const LOWER_T = 0x74
const LOWER_U = 0x75
const LBRACE = 0x7b
const RBRACE = 0x7d

/** An open container on the explicit parse stack. */
type Frame =
  | { readonly isArray: true, readonly items: unknown[] }
  | { readonly isArray: false, readonly object: Record<string, unknown>, key: string }

/** Parses `text` exactly as CPython 3.12's `json.loads(text)` would. */
export function parsePythonJson (text: string): unknown {
  return new Parser(text).parseDocument()
}

class Parser {
  private readonly text: string
  private readonly length: number
  /** Index just past the last string scanned by {@link scanString}. */
  private stringEnd = 0

  constructor (text: string) {
    this.text = text
    this.length = text.length
  }

  parseDocument (): unknown {
    // json.loads(str) refuses a leading BOM before anything else.
    if (this.text.charCodeAt(0) === 0xfeff) {
      throw this.error('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0)
    }
    const [value, end] = this.parseValue(this.skipWhitespace(0))
    const rest = this.skipWhitespace(end)
    if (rest !== this.length) throw this.error('Extra data', rest)
    return value
  }

  /** Parses one value starting exactly at `start`; returns it with the index just past it. */
  private parseValue (start: number): [unknown, number] {
    const text = this.text
    const stack: Frame[] = []
    let i = start

    for (;;) {
      // A value is expected at i (whitespace before it has already been skipped).
      let value: unknown
      const c = text.charCodeAt(i) // NaN at the end of the input: no case matches

      if (c === QUOTE) {
        value = this.scanString(i + 1)
        i = this.stringEnd
      } else if (c === LBRACKET || c === LBRACE) {
        // Python's recursion check happens on entering the container, before looking inside.
        if (stack.length >= MAX_DEPTH) throw new JsonTooDeepError()
        const inner = this.skipWhitespace(i + 1)
        if (c === LBRACKET) {
          if (text.charCodeAt(inner) === RBRACKET) {
            value = []
            i = inner + 1
          } else {
            stack.push({ isArray: true, items: [] })
            i = inner
            continue
          }
        } else {
          if (text.charCodeAt(inner) === RBRACE) {
            value = {}
            i = inner + 1
          } else {
            const key = this.scanKey(inner)
            stack.push({ isArray: false, object: {}, key })
            i = this.afterColon()
            continue
          }
        }
      } else {
        const literal = this.matchLiteral(c, i)
        if (literal !== undefined) {
          value = literal[0]
          i = literal[1]
        } else {
          value = this.matchNumber(i)
          i = this.stringEnd
        }
      }

      // `value` is complete and ends just before i: hand it to the open containers, closing
      // as many of them as the input closes.
      for (;;) {
        const frame = stack.at(-1)
        if (frame === undefined) return [value, i]
        i = this.skipWhitespace(i)
        const d = text.charCodeAt(i)
        if (frame.isArray) {
          frame.items.push(value)
          if (d === RBRACKET) {
            stack.pop()
            value = frame.items
            i++
            continue
          }
          if (d !== COMMA) throw this.error("Expecting ',' delimiter", i)
          i = this.skipWhitespace(i + 1)
          break
        }
        setOwn(frame.object, frame.key, value)
        if (d === RBRACE) {
          stack.pop()
          value = frame.object
          i++
          continue
        }
        if (d !== COMMA) throw this.error("Expecting ',' delimiter", i)
        frame.key = this.scanKey(this.skipWhitespace(i + 1))
        i = this.afterColon()
        break
      }
    }
  }

  /** Reads an object key at `i`; leaves {@link stringEnd} just past its closing quote. */
  private scanKey (i: number): string {
    if (this.text.charCodeAt(i) !== QUOTE) {
      throw this.error('Expecting property name enclosed in double quotes', i)
    }
    return this.scanString(i + 1)
  }

  /** After a key: skips whitespace, the `:` and whitespace; returns where the value starts. */
  private afterColon (): number {
    const i = this.skipWhitespace(this.stringEnd)
    if (this.text.charCodeAt(i) !== COLON) throw this.error("Expecting ':' delimiter", i)
    return this.skipWhitespace(i + 1)
  }

  /** null, true, false, NaN, Infinity, -Infinity at i, else undefined. */
  private matchLiteral (c: number, i: number): [unknown, number] | undefined {
    const text = this.text
    switch (c) {
      case LOWER_N: return text.startsWith('null', i) ? [null, i + 4] : undefined
      case LOWER_T: return text.startsWith('true', i) ? [true, i + 4] : undefined
      case LOWER_F: return text.startsWith('false', i) ? [false, i + 5] : undefined
      case UPPER_N: return text.startsWith('NaN', i) ? [Number.NaN, i + 3] : undefined
      case UPPER_I: return text.startsWith('Infinity', i) ? [Number.POSITIVE_INFINITY, i + 8] : undefined
      case MINUS: return text.startsWith('-Infinity', i) ? [Number.NEGATIVE_INFINITY, i + 9] : undefined
      default: return undefined
    }
  }

  /**
   * `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?` at `start`, as `_match_number_unicode` does it: a `.`
   * or an exponent without digits after it is left unconsumed. Sets {@link stringEnd}.
   */
  private matchNumber (start: number): number {
    const text = this.text
    const length = this.length
    let i = start
    if (text.charCodeAt(i) === MINUS) i++
    const first = text.charCodeAt(i)
    if (first >= ONE && first <= NINE) {
      i++
      while (isDigit(text.charCodeAt(i))) i++
    } else if (first === ZERO) {
      i++
    } else {
      throw this.error('Expecting value', start)
    }
    const integerEnd = i
    let isFloat = false
    if (text.charCodeAt(i) === DOT && isDigit(text.charCodeAt(i + 1))) {
      isFloat = true
      i += 2
      while (isDigit(text.charCodeAt(i))) i++
    }
    const e = text.charCodeAt(i)
    if ((e === LOWER_E || e === UPPER_E) && i + 1 < length) {
      let j = i + 1
      const sign = text.charCodeAt(j)
      if (sign === PLUS || sign === MINUS) j++
      if (isDigit(text.charCodeAt(j))) {
        isFloat = true
        j++
        while (isDigit(text.charCodeAt(j))) j++
        i = j
      }
    }
    this.stringEnd = i
    const literal = text.slice(start, i)
    if (isFloat) return Number(literal)
    const digits = integerEnd - start - (text.charCodeAt(start) === MINUS ? 1 : 0)
    if (digits > MAX_INT_DIGITS) throw new JsonIntegerTooLongError(digits)
    const value = Number(literal)
    return value === 0 ? 0 : value // a Python int has no negative zero
  }

  /**
   * Reads a string whose opening quote is at `start - 1`, as `scanstring_unicode` does it.
   * Returns the decoded string and sets {@link stringEnd} just past the closing quote.
   */
  private scanString (start: number): string {
    const text = this.text
    const length = this.length
    const begin = start - 1
    let out = ''
    let chunk = start
    let i = start
    for (;;) {
      let c = 0
      while (i < length) {
        c = text.charCodeAt(i)
        if (c === QUOTE || c === BACKSLASH) break
        if (c <= 0x1f) throw this.error('Invalid control character at', i)
        i++
      }
      if (i >= length) throw this.error('Unterminated string starting at', begin)
      if (c === QUOTE) {
        this.stringEnd = i + 1
        return chunk === start ? text.slice(start, i) : out + text.slice(chunk, i)
      }
      // A backslash at i.
      out += text.slice(chunk, i)
      i++
      if (i === length) throw this.error('Unterminated string starting at', begin)
      const escape = text.charCodeAt(i)
      if (escape !== LOWER_U) {
        const decoded = simpleEscape(escape)
        if (decoded === undefined) throw this.error('Invalid \\escape', i - 1)
        out += decoded
        i++
      } else {
        // i is at the `u`; CPython wants 4 digits and at least one more character after them.
        if (i + 5 >= length) throw this.error('Invalid \\uXXXX escape', i)
        const unit = hex4(text, i + 1)
        if (unit < 0) throw this.error('Invalid \\uXXXX escape', i)
        i += 5
        if (unit >= 0xd800 && unit <= 0xdbff && i + 6 < length &&
            text.charCodeAt(i) === BACKSLASH && text.charCodeAt(i + 1) === LOWER_U) {
          const low = hex4(text, i + 2)
          if (low < 0) throw this.error('Invalid \\uXXXX escape', i + 1)
          if (low >= 0xdc00 && low <= 0xdfff) {
            out += String.fromCharCode(unit, low)
            i += 6
          } else {
            // Not a pair: the second escape is decoded on its own by the next round.
            out += String.fromCharCode(unit)
          }
        } else {
          out += String.fromCharCode(unit)
        }
      }
      chunk = i
    }
  }

  private skipWhitespace (i: number): number {
    const text = this.text
    for (;;) {
      const c = text.charCodeAt(i)
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i
      i++
    }
  }

  /** A JsonDecodeError at JS index `index`, reported as a Python (code point) index. */
  private error (reason: string, index: number): JsonDecodeError {
    return new JsonDecodeError(reason, codePointIndex(this.text, index), this.text)
  }
}

function isDigit (c: number): boolean {
  return c >= ZERO && c <= NINE
}

function simpleEscape (c: number): string | undefined {
  switch (c) {
    case QUOTE: return '"'
    case BACKSLASH: return '\\'
    case SLASH: return '/'
    case LOWER_B: return '\b'
    case LOWER_F: return '\f'
    case LOWER_N: return '\n'
    case LOWER_R: return '\r'
    case LOWER_T: return '\t'
    default: return undefined
  }
}

/** The value of the 4 hex digits at text[i..i+4), or -1 if one of them is not a hex digit. */
function hex4 (text: string, i: number): number {
  let value = 0
  for (let k = i; k < i + 4; k++) {
    const c = text.charCodeAt(k)
    let digit: number
    if (c >= ZERO && c <= NINE) digit = c - ZERO
    else if (c >= 0x41 && c <= 0x46) digit = c - 0x41 + 10 // A-F
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x61 + 10 // a-f
    else return -1
    value = value * 16 + digit
  }
  return value
}

/** Sets an own, enumerable data property, also for keys such as `__proto__`. */
function setOwn (object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    object[key] = value
  }
}

/** The Python string index (code points) of JS index `index` in `text`. */
function codePointIndex (text: string, index: number): number {
  let result = index
  for (let i = 0; i + 1 < index; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        result--
        i++
      }
    }
  }
  return result
}

/** Python's `JSONDecodeError` lineno/colno for code point index `pos` of `doc`. */
function lineAndColumn (doc: string, pos: number): { lineno: number, colno: number } {
  let lineno = 1
  let lineStart = 0 // code point index just past the last newline before pos
  let cp = 0
  for (let i = 0; i < doc.length && cp < pos; i++, cp++) {
    const c = doc.charCodeAt(i)
    if (c === LF) {
      lineno++
      lineStart = cp + 1
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const d = doc.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
  }
  return { lineno, colno: pos - lineStart + 1 }
}
