// The store's lexical ranking (src/agent/store-search.ts), as a property: the score of a query over
// a text is the share of the query's distinct terms that are among the text's terms, whatever the
// letters, digits, case and punctuation.

import fc from 'fast-check'
import t from 'tap'
import { lexicalScore, lexicalScorer, terms } from '../src/agent/store-search.js'

/** The definition, written as plainly as it reads. */
function byDefinition(query: string, text: string): number {
  const wanted = new Set(terms(query))
  if (wanted.size === 0) return 0
  const present = new Set(terms(text))
  return [...wanted].filter((term) => present.has(term)).length / wanted.size
}

// Words from a small alphabet (so that terms recur), with case, accents, digits and separators.
const piece = fc.constantFrom('a', 'b', 'ab', 'ba', 'A', 'B', 'é', 'É', 'ß', 'İ', '1', '12', '٣', '_', ' ', '-', '.', '\'', '"', '{', ':', '\n', '😀')
const text = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''))

t.test('the score is the share of the query\'s terms found among the text\'s terms', async (t) => {
  fc.assert(fc.property(text, fc.array(text, { maxLength: 5 }), (query, texts) => {
    const score = lexicalScorer(query)
    for (const each of texts) {
      const expected = byDefinition(query, each)
      if (score(each) !== expected || lexicalScore(query, each) !== expected) return false
    }
    return true
  }), { numRuns: 3000 })
  t.equal(lexicalScorer('Delta echo')('{"text":"delta-echoes, DELTA"}'), 0.5, 'a term inside a longer word is not found')
  t.equal(lexicalScorer('user 12')('{"user":"user-12"}'), 1)
  t.equal(lexicalScorer('...')('anything'), 0, 'a query without terms scores 0')
})
