// The texts are those of the Rust `uuid` crate 1.23.0 (src/error.rs `InvalidUuid::into_err` and
// its Display; src/parser.rs `try_parse`), which pydantic-core 2.46.4 / pydantic 2.13.4 uses.
// pydantic-core 2.48.0 (pydantic 2.14 beta) moves to uuid 1.23.4, whose texts differ: see
// docs/validation.md. Earlier versions of this file asserted "invalid length: found N" for an empty
// or over-long input, a text of 1.23.4 that 1.23.0 never produces.
import t, { type Test } from 'tap'
import { parseUuid } from '../src/validation/uuid.js'

const CANONICAL = 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6'

type Case = [input: string, error: string]

function checkErrors (t: Test, cases: Case[]): void {
  for (const [input, error] of cases) {
    t.strictSame(parseUuid(input), { ok: false, error }, `${JSON.stringify(input)} is refused with ${JSON.stringify(error)}`)
  }
}

t.test('every accepted form normalises to the lowercase hyphenated form', async (t) => {
  const accepted: Array<[string, string]> = [
    [CANONICAL, CANONICAL],
    ['F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6', CANONICAL],
    ['f81D4fAE-7dEc-11d0-A765-00a0C91e6bF6', CANONICAL],
    ['f81d4fae7dec11d0a76500a0c91e6bf6', CANONICAL],
    ['F81D4FAE7DEC11D0A76500A0C91E6BF6', CANONICAL],
    [`{${CANONICAL}}`, CANONICAL],
    ['{F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6}', CANONICAL],
    [`urn:uuid:${CANONICAL}`, CANONICAL],
    ['urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6', CANONICAL],
    ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'],
    ['ffffffffffffffffffffffffffffffff', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
    ['0123456789abcdefABCDEF0123456789', '01234567-89ab-cdef-abcd-ef0123456789'],
  ]
  for (const [input, value] of accepted) {
    t.strictSame(parseUuid(input), { ok: true, value }, `${input} is ${value}`)
  }
})

t.test('any length is diagnosed: the first bad character, else the length of a bare run of hex digits', async (t) => {
  checkErrors(t, [
    ['', 'invalid length: expected length 32 for simple format, found 0'],
    [`${CANONICAL}-extra-text`, 'invalid character: found `x` at 39'],
    ['not a uuid, but a sentence of more than 45 characters', 'invalid character: found `n` at 1'],
    [`urn:uuid:${CANONICAL}0`, 'invalid group length in group 4: expected 12, found 22'],
    ['😀'.repeat(12), 'invalid character: found `😀` at 1'],
    ['é'.repeat(23), 'invalid character: found `é` at 1'],
    ['a'.repeat(300), 'invalid length: expected length 32 for simple format, found 300'],
  ])
})

t.test('the first character that is neither hex nor a hyphen is reported at its 1-based place', async (t) => {
  checkErrors(t, [
    ['not-a-uuid', 'invalid character: found `n` at 1'],
    ['123g', 'invalid character: found `g` at 4'],
    ['Z9876', 'invalid character: found `Z` at 1'],
    ['admin', 'invalid character: found `m` at 3'],
    [' ' + CANONICAL, 'invalid character: found ` ` at 1'],
    [CANONICAL + ' ', 'invalid character: found ` ` at 37'],
    ['f81d4fae-7dec-11d0-a765-00a0c91e6bfZ', 'invalid character: found `Z` at 36'],
    ['f81d4fae_7dec_11d0_a765_00a0c91e6bf6', 'invalid character: found `_` at 9'],
    ['f81d4fae7dec11d0a76500a0c91e6bfg', 'invalid character: found `g` at 32'],
    ['0x1234', 'invalid character: found `x` at 2'],
    ['😀', 'invalid character: found `😀` at 1'],
    ['12😀34', 'invalid character: found `😀` at 3'],
    ['ab-é', 'invalid character: found `é` at 4'],
    ['abc\u0000', 'invalid character: found `\u0000` at 4'],
  ])
})

t.test('places count from the start of the input, braces and URN prefix included', async (t) => {
  checkErrors(t, [
    ['{123g}', 'invalid character: found `g` at 5'],
    ['{x}', 'invalid character: found `x` at 2'],
    ['urn:uuid:123g', 'invalid character: found `g` at 13'],
    ['urn:uuid:😀', 'invalid character: found `😀` at 10'],
  ])
})

t.test('a braced input of 38 bytes or a URN of 45 is diagnosed without its wrapper, as the hyphenated parser saw it', async (t) => {
  checkErrors(t, [
    ['{f81d4fae-7dec-11d0-a765-00a0c91e6bfZ}', 'invalid character: found `Z` at 36'],
    ['urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bfZ', 'invalid character: found `Z` at 36'],
    ['{f81d4fae7dec11d0a76500a0c91e6bf6abcd}', 'invalid length: expected length 32 for simple format, found 36'],
    ['urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e-bf6', 'invalid group count: expected 5, found 6'],
    // 38 characters but 39 bytes: not the braced form by length, so diagnosed whole.
    ['{f81d4fae-7dec-11d0-a765-00a0c91e6bfé}', 'invalid character: found `é` at 37'],
  ])
})

t.test('braces count as a wrapper only in pairs, and the URN prefix only in lowercase', async (t) => {
  checkErrors(t, [
    [`{${CANONICAL}`, 'invalid character: found `{` at 1'],
    [`${CANONICAL}}`, 'invalid character: found `}` at 37'],
    ['{', 'invalid character: found `{` at 1'],
    [`{{${CANONICAL}}}`, 'invalid character: found `{` at 2'],
    [`URN:UUID:${CANONICAL}`, 'invalid character: found `U` at 1'],
    [`urn:${CANONICAL}`, 'invalid character: found `u` at 1'],
    ['{urn:uuid:f81d4fae}', 'invalid character: found `u` at 2'],
  ])
})

t.test('hex digits alone in the bare form are an invalid length of the whole input', async (t) => {
  checkErrors(t, [
    ['123', 'invalid length: expected length 32 for simple format, found 3'],
    ['a', 'invalid length: expected length 32 for simple format, found 1'],
    ['f81d4fae7dec11d0a76500a0c91e6bf', 'invalid length: expected length 32 for simple format, found 31'],
    ['f81d4fae7dec11d0a76500a0c91e6bf6a', 'invalid length: expected length 32 for simple format, found 33'],
    ['f81d4fae7dec11d0a76500a0c91e6bf6f81d4fae7dec1', 'invalid length: expected length 32 for simple format, found 45'],
  ])
})

t.test('a hyphen count other than four is an invalid group count', async (t) => {
  checkErrors(t, [
    ['550e8400-e29b-41d4-a716', 'invalid group count: expected 5, found 4'],
    ['f81d4fae-7dec-11d0-a765-00a0c91e6bf6-1', 'invalid group count: expected 5, found 6'],
    ['f81d4fae-7dec11d0a76500a0c91e6bf6', 'invalid group count: expected 5, found 2'],
    ['-', 'invalid group count: expected 5, found 2'],
    ['---', 'invalid group count: expected 5, found 4'],
    ['------', 'invalid group count: expected 5, found 7'],
    ['{f81d4fae-7dec-11d0-a765}', 'invalid group count: expected 5, found 4'],
    ['urn:uuid:f81d4fae-7dec', 'invalid group count: expected 5, found 2'],
  ])
})

t.test('a braced or URN input without hyphens is a group count of one, not a length', async (t) => {
  checkErrors(t, [
    ['{f81d4fae7dec11d0a76500a0c91e6bf6}', 'invalid group count: expected 5, found 1'],
    ['urn:uuid:f81d4fae7dec11d0a76500a0c91e6bf6', 'invalid group count: expected 5, found 1'],
    ['{}', 'invalid group count: expected 5, found 1'],
    ['urn:uuid:', 'invalid group count: expected 5, found 1'],
  ])
})

t.test('with four hyphens the first group of the wrong length is reported', async (t) => {
  checkErrors(t, [
    ['f81d4fa-7dec-11d0-a765-00a0c91e6bf6', 'invalid group length in group 0: expected 8, found 7'],
    ['-7dec-11d0-a765-00a0c91e6bf6', 'invalid group length in group 0: expected 8, found 0'],
    ['f81d4fae-7de-11d0-a765-00a0c91e6bf6', 'invalid group length in group 1: expected 4, found 3'],
    ['f81d4fae-7decc-11d0-a765-00a0c91e6bf6', 'invalid group length in group 1: expected 4, found 5'],
    ['f81d4fae-7dec-11d-a765-00a0c91e6bf6', 'invalid group length in group 2: expected 4, found 3'],
    ['f81d4fae-7dec-11d0-a7655-00a0c91e6bf6', 'invalid group length in group 3: expected 4, found 5'],
    ['10c25fc2-835b-4ef3-bb3d-bf44fe496e', 'invalid group length in group 4: expected 12, found 10'],
    ['F9168C5E-CEB2-4faa-B6BF-329BF39FA1E45', 'invalid group length in group 4: expected 12, found 13'],
    ['f81d4fae-7dec-11d0-a765-', 'invalid group length in group 4: expected 12, found 0'],
    ['f81d4fae-7dec-11d0-a7650-0a0c91e6bf6', 'invalid group length in group 3: expected 4, found 5'],
    ['f81d-4fae7dec-11d0-a765-00a0c91e6bf', 'invalid group length in group 0: expected 8, found 4'],
    ['{f81d4fa-7dec-11d0-a765-00a0c91e6bf6}', 'invalid group length in group 0: expected 8, found 7'],
    ['urn:uuid:f81d4fae-7dec-11d0-a76-00a0c91e6bf6', 'invalid group length in group 3: expected 4, found 3'],
  ])
})

t.test('the last group is measured against the whole input, as the crate does', async (t) => {
  checkErrors(t, [
    // 10 digits in the last group, but the crate counts from the opening brace to the end.
    ['{f81d4fae-7dec-11d0-a765-00a0c91e6b}', 'invalid group length in group 4: expected 12, found 12'],
    ['{f81d4fae-7dec-11d0-a765-00a0c91e6bf6a}', 'invalid group length in group 4: expected 12, found 15'],
    ['{f81d4fae-7dec-11d0-a765-00a0c91e6bf}', 'invalid group length in group 4: expected 12, found 13'],
    ['urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6b', 'invalid group length in group 4: expected 12, found 19'],
  ])
})

t.test('a string that only looks hyphenated is diagnosed by the same rules', async (t) => {
  checkErrors(t, [
    ['f81d4fae-7dec-11d0-a765-00a0c91e6bf-', 'invalid group count: expected 5, found 6'],
    ['f81d4fae7-dec-11d0-a765-00a0c91e6bf6', 'invalid group length in group 0: expected 8, found 9'],
    ['f81d4fae-7dec-11d0-a765-00a0c91e-6bf', 'invalid group count: expected 5, found 6'],
  ])
})
