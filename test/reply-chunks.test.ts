// How a tool call's arguments read while they stream (LangChain's partial JSON), and how a reply
// splits into the chunks a provider streams.

import t from 'tap'
import { partialJson, pieces } from '../src/agent/reply-chunks.js'

t.test('partial JSON: open strings, lists and objects are closed; what cannot be read is null', async (t) => {
  t.same(partialJson(''), {}, 'nothing yet: no arguments')
  t.same(partialJson('{"query":"'), { query: '' })
  t.same(partialJson('{"city":"P'), { city: 'P' })
  t.same(partialJson('{"a":[1,2'), { a: [1, 2] })
  t.same(partialJson('{"say":"a \\"quoted'), { say: 'a "quoted' }, 'an escaped quote does not end the string')
  t.equal(partialJson('{"city": i'), null, 'a bare word')
  t.equal(partialJson('{"city"'), null, 'a key without its value')
})

t.test('a reply\'s pieces: words, then each call (index after the text) and its JSON in 10-character pieces, then usage', async (t) => {
  const calls = [{ name: 'search', id: 'c1', argsText: '{"query":"Paris"}' }]
  t.same(pieces({ text: 'Hi there', toolCalls: calls, usage: { total_tokens: 3 } }), [
    { kind: 'text', text: 'Hi' },
    { kind: 'text', text: ' there' },
    { kind: 'call', index: 1, name: 'search', id: 'c1' },
    { kind: 'args', index: 1, args: '{"query":"' },
    { kind: 'args', index: 1, args: 'Paris"}' },
    { kind: 'end', usage: { total_tokens: 3 }, responseMetadata: undefined },
  ])
  t.same(pieces({ text: '', toolCalls: calls }).slice(0, 1), [{ kind: 'call', index: 0, name: 'search', id: 'c1' }], 'no text: the first call is block 0')
  t.same(pieces({ text: '', toolCalls: [] }), [{ kind: 'text', text: '' }], 'an empty reply is one empty chunk')
})
