// The MCP endpoint through the official client (@modelcontextprotocol/sdk, Streamable HTTP), over
// a real listening hangar; the transport's edges (Accept, GET, DELETE, broken JSON) by hand.

import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { API_KEY, SHIPPED_GRAPHS, serveApp } from './helpers.js'

async function mcpClient(t: { teardown: (fn: () => unknown) => void }, base: string) {
  const client = new Client({ name: 'hangar-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/`), { requestInit: { headers: { 'x-api-key': API_KEY } } }))
  t.teardown(() => client.close())
  return client
}

t.test('initialize and tools/list: every assistant is a tool named after it, with its graph\'s input schema', async (t) => {
  const { base } = await serveApp(t)
  const client = await mcpClient(t, base)
  t.equal(client.getServerVersion()?.name, 'LangGraph')
  t.ok(client.getServerCapabilities()?.tools, 'the server offers tools')
  const { tools } = await client.listTools()
  t.same(tools.map((tool) => tool.name).sort(), [...SHIPPED_GRAPHS].sort())
  const agent = tools.find((tool) => tool.name === 'agent')!
  t.match(agent.description, /Echo chat/)
  t.equal(agent.inputSchema.type, 'object')
  t.ok(agent.inputSchema.properties?.messages, 'the input schema has the graph\'s messages key')
})

t.test('tools/call runs the assistant and answers the final AI text', async (t) => {
  const { base } = await serveApp(t)
  const client = await mcpClient(t, base)
  const result = await client.callTool({ name: 'agent', arguments: { messages: [{ role: 'user', content: 'ping from mcp' }] } })
  t.equal(result.isError, false)
  t.same(result.content, [{ type: 'text', text: 'ping from mcp' }])
  await t.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/)
})

t.test('the transport\'s edges: Accept, GET, DELETE, notifications and broken JSON', async (t) => {
  const { base } = await serveApp(t)
  const both = { 'x-api-key': API_KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const post = (body: string, headers: Record<string, string> = both) => fetch(`${base}/mcp/`, { method: 'POST', headers, body })
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })
  const ok = await post(ping)
  t.equal(ok.status, 200)
  t.same(await ok.json(), { jsonrpc: '2.0', id: 7, result: {} })
  const jsonOnly = await post(ping, { ...both, accept: 'application/json' })
  t.equal(jsonOnly.status, 400)
  t.equal(((await jsonOnly.json()) as any).error.code, -32600)
  const note = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  t.equal(note.status, 202)
  t.equal(await note.text(), '')
  const broken = await post('{oops')
  t.equal(broken.status, 400)
  t.equal(((await broken.json()) as any).error.code, -32700)
  const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }))
  t.equal(((await unknown.json()) as any).error.code, -32601)
  t.equal((await fetch(`${base}/mcp/`, { headers: { 'x-api-key': API_KEY } })).status, 405)
  t.equal((await fetch(`${base}/mcp/`, { method: 'DELETE', headers: { 'x-api-key': API_KEY } })).status, 404)
  t.equal((await post(ping, { ...both, 'x-api-key': '' })).status, 403)
})
