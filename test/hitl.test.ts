// Human in the loop with the structured approval schema (`action_request` / `config` /
// `description`, answered `accept` / `edit` / `response` / `ignore`), as a frontend's approval card
// uses it: the shipped `email_agent` interrupts with the request and branches on the answer.

import t, { type Test } from 'tap'
import { Client } from '@langchain/langgraph-sdk'
import { API_KEY, serveApp } from './helpers.js'

type Chat = { messages: { type: string; content: string; tool_call_id?: string }[]; draft: Record<string, string> }
const draft = { to: 'team@example.com', subject: 'launch plan', body: 'Hello team, about launch plan.' }

async function interrupted(t: Test) {
  const { base } = await serveApp(t)
  const client = new Client({ apiUrl: base, apiKey: API_KEY })
  const thread = await client.threads.create()
  const first = await client.runs.wait(thread.thread_id, 'email_agent', { input: { messages: [{ type: 'human', content: 'launch plan' }] } }) as { __interrupt__: { value: unknown }[] }
  return { client, thread: thread.thread_id, first }
}

t.test('the interrupt carries the approval request: the action and its args, what the reviewer may do, a description', async (t) => {
  const { client, thread, first } = await interrupted(t)
  t.same(first.__interrupt__[0].value, [{
    action_request: { action: 'send_email', args: draft },
    config: { allow_ignore: true, allow_respond: true, allow_edit: true, allow_accept: true },
    description: 'Please review the email before it is sent.',
  }])
  const state = await client.threads.getState<Chat>(thread)
  t.same(state.next, ['review'])
  t.match(state.values.messages.at(-1), { type: 'ai', content: 'I drafted an email about launch plan.' })
  t.same((state.values.messages.at(-1) as unknown as { tool_calls: { name: string; args: unknown }[] }).tool_calls.map((c) => [c.name, c.args]), [['send_email', draft]])
})

const answers: [string, unknown, string, string][] = [
  ['accept', { type: 'accept', args: null }, 'Email sent to team@example.com: launch plan', 'Done: the email to team@example.com is sent.'],
  ['edit', { type: 'edit', args: { action: 'send_email', args: { ...draft, to: 'ceo@example.com' } } }, 'Email sent to ceo@example.com: launch plan', 'Done: I sent your edited email to ceo@example.com.'],
  ['response', { type: 'response', args: 'Make it shorter.' }, 'Not sent: the reviewer answered instead.', 'Understood: Make it shorter. I will revise the draft.'],
  ['ignore', { type: 'ignore', args: null }, 'Not sent: the reviewer ignored it.', "Okay, I won't send it."],
]
for (const [kind, answer, toolResult, reply] of answers) {
  t.test(`resumed with ${kind}: the script takes the ${kind} branch`, async (t) => {
    const { client, thread } = await interrupted(t)
    const values = await client.runs.wait(thread, 'email_agent', { command: { resume: [answer] } }) as Chat
    const [tool, last] = values.messages.slice(-2)
    t.same([tool.type, tool.content], ['tool', toolResult], 'the send_email call is answered')
    t.same([last.type, last.content], ['ai', reply])
    t.equal((await client.threads.get(thread)).status, 'idle')
  })
}
