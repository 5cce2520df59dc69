import t from 'tap'
import { validate as isUuid, version as uuidVersion } from 'uuid'
import { GraphError } from '../src/agent/graph-error.js'
import { addMessages, aiChunk, aiMessage, coerceMessage, coerceMessages, lastHumanText, textOf } from '../src/agent/messages.js'

const human = (content: unknown, id: string, extra: object = {}) => ({
  content, additional_kwargs: {}, response_metadata: {}, type: 'human', name: null, id, example: false, ...extra,
})
const ai = (content: unknown, id: string, extra: object = {}) => ({
  content, additional_kwargs: {}, response_metadata: {}, type: 'ai', name: null, id, example: false,
  tool_calls: [], invalid_tool_calls: [], usage_metadata: null, ...extra,
})

t.test('a role:user message is stored as a human message with every hosted field', async (t) => {
  const stored = coerceMessage({ role: 'user', content: 'hello', id: 'm1' })
  t.same(stored, human('hello', 'm1'))
  t.same(Object.keys(stored), ['content', 'additional_kwargs', 'response_metadata', 'type', 'name', 'id', 'example'], 'fields in the hosted order')
})

t.test('role human, type human and a bare string are human messages too', async (t) => {
  t.same(coerceMessage({ role: 'human', content: 'a', id: 'x' }), human('a', 'x'))
  t.same(coerceMessage({ type: 'human', content: 'b', id: 'y' }), human('b', 'y'))
  t.equal(coerceMessage('c').type, 'human')
  t.equal(coerceMessage('c').content, 'c')
})

t.test('a [role, content] pair is a message of that role', async (t) => {
  const [message] = coerceMessages([['assistant', 'hi']])
  t.equal(message.type, 'ai')
  t.equal(message.content, 'hi')
})

t.test('role assistant and type ai become an AI message with tool calls, invalid calls and usage', async (t) => {
  t.same(coerceMessage({ role: 'assistant', content: 'yo', id: 'a1' }), ai('yo', 'a1'))
  const withCall = coerceMessage({ type: 'ai', content: '', id: 'a2', tool_calls: [{ id: 'call1', name: 'search', args: { q: 'x' } }] })
  t.same(withCall.tool_calls, [{ name: 'search', args: { q: 'x' }, id: 'call1', type: 'tool_call' }])
})

t.test('a system message keeps its content; developer is a system message marked as such', async (t) => {
  t.same(coerceMessage({ role: 'system', content: 's', id: 's1' }), {
    content: 's', additional_kwargs: {}, response_metadata: {}, type: 'system', name: null, id: 's1',
  })
  t.same(coerceMessage({ role: 'developer', content: 'd', id: 'd1' }).additional_kwargs, { __openai_role__: 'developer' })
})

t.test('a tool message keeps its tool_call_id and gets artifact and status', async (t) => {
  t.same(coerceMessage({ role: 'tool', content: 'result', tool_call_id: 'call1', id: 't1' }), {
    content: 'result', additional_kwargs: {}, response_metadata: {}, type: 'tool', name: null, id: 't1',
    tool_call_id: 'call1', artifact: null, status: 'success',
  })
  t.throws(() => coerceMessage({ role: 'tool', content: 'x' }), /tool_call_id/)
})

t.test('content given as a list of parts is kept as given', async (t) => {
  const parts = [{ type: 'text', text: 'again' }]
  t.same(coerceMessage({ role: 'user', content: parts, id: 'p' }).content, parts)
  t.equal(textOf(coerceMessage({ role: 'user', content: [{ type: 'text', text: 'a' }, 'b', { type: 'image_url', image_url: 'u' }] })), 'ab')
})

t.test('name and id are kept; a message without id gets a uuid4', async (t) => {
  const named = coerceMessage({ role: 'user', content: 't', name: 'bob', id: 'keep-me' })
  t.equal(named.name, 'bob')
  t.equal(named.id, 'keep-me')
  const fresh = coerceMessage({ role: 'user', content: 't' })
  t.ok(isUuid(fresh.id as string))
  t.equal(uuidVersion(fresh.id as string), 4)
})

t.test('an unknown role is a ValueError naming the accepted ones', async (t) => {
  const error = t.throws(() => coerceMessage({ role: 'robot', content: 'x' })) as GraphError
  t.equal(error.name, 'ValueError')
  t.match(error.message, /^Unexpected message type: 'robot'\. Use one of 'human', 'user', 'ai'/)
  t.throws(() => coerceMessage({ content: 'no role' }), /Message dict must contain 'role' and 'content' keys/)
  t.throws(() => coerceMessage({ role: 'user', content: 5 }), /content should be a string or a list/)
})

t.test('coercing a stored message gives it back unchanged', async (t) => {
  const stored = ai('x', 'run-1', { usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } })
  t.same(coerceMessage(stored), stored)
})

t.test('add_messages appends new messages in order', async (t) => {
  const merged = addMessages([human('u1', '1')], [{ role: 'assistant', content: 'a1', id: '2' }, { role: 'user', content: 'u2', id: '3' }])
  t.same(merged.map((m) => m.id), ['1', '2', '3'])
  t.same(addMessages(undefined, { role: 'user', content: 'single', id: 's' }).map((m) => m.content), ['single'])
})

t.test('add_messages replaces a message with the same id in place', async (t) => {
  const merged = addMessages([human('u1', 'u-1'), ai('a1', 'a-1')], [{ type: 'human', content: 'u1-edited', id: 'u-1' }])
  t.same(merged.map((m) => [m.id, m.content]), [['u-1', 'u1-edited'], ['a-1', 'a1']])
})

t.test('add_messages removes a message by id', async (t) => {
  const merged = addMessages([human('u1', '1'), ai('a1', '2')], [{ type: 'remove', id: '1' }])
  t.same(merged.map((m) => m.id), ['2'])
})

t.test('removing an unknown id is an error', async (t) => {
  const error = t.throws(() => addMessages([human('u1', '1')], [{ type: 'remove', id: 'nope' }])) as GraphError
  t.equal(error.name, 'ValueError')
  t.equal(error.message, "Attempting to delete a message with an ID that doesn't exist ('nope')")
})

t.test('__remove_all__ clears the list and keeps the messages after it in the same update', async (t) => {
  const merged = addMessages([human('u1', '1'), ai('a1', '2')], [
    { role: 'user', content: 'dropped', id: '3' },
    { type: 'remove', id: '__remove_all__' },
    { role: 'user', content: 'kept', id: '4' },
  ])
  t.same(merged.map((m) => m.content), ['kept'])
})

t.test('a message removed and then added again in one update stays', async (t) => {
  const merged = addMessages([human('u1', '1')], [{ type: 'remove', id: '1' }, { role: 'user', content: 'back', id: '1' }])
  t.same(merged.map((m) => m.content), ['back'])
})

t.test('an AI chunk has the hosted chunk type, the message id and empty tool call chunks', async (t) => {
  t.same(aiChunk('run-x', 'He'), { ...ai('He', 'run-x'), type: 'AIMessageChunk', tool_call_chunks: [] })
  t.same(aiMessage('run-x', 'Hello'), ai('Hello', 'run-x'))
})

t.test('the last human text skips later AI messages and is empty without one', async (t) => {
  t.equal(lastHumanText([human('first', '1'), human('second', '2'), ai('reply', '3')]), 'second')
  t.equal(lastHumanText([]), '')
  t.equal(lastHumanText(undefined), '')
})
