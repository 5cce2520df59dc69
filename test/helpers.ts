// Builds hangar in-process for tests: :memory: SQLite (unless told otherwise), a frozen manual
// clock, silent logs. Requests go through `app.inject`; `listen` gives a real server when a real
// client matters.

import type { Test } from 'tap'
import { buildApp, type App } from '../src/app.js'
import { Clock } from '../src/clock.js'
import type { Config } from '../src/config.js'

export const START = Date.UTC(2025, 0, 1)
export const API_KEY = 'test-key'
export const TENANT_A = '11111111-1111-4111-8111-111111111111'
export const TENANT_B = '22222222-2222-4222-8222-222222222222'

export interface Reply {
  status: number
  headers: Record<string, string | string[] | number | undefined>
  /** Parsed JSON, or undefined when there is no body. */
  body: any
  text: string
}

export interface Client {
  request(method: string, url: string, options?: { body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<Reply>
  get(url: string, headers?: Record<string, string>): Promise<Reply>
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>
  patch(url: string, body: unknown, headers?: Record<string, string>): Promise<Reply>
  put(url: string, body: unknown, headers?: Record<string, string>): Promise<Reply>
  delete(url: string, headers?: Record<string, string>): Promise<Reply>
}

/** A client that sends the API key (and a tenant, when given) on every request. */
export function clientFor(app: App, defaults: Record<string, string> = { 'x-api-key': API_KEY }): Client {
  const request: Client['request'] = async (method, url, options = {}) => {
    const headers: Record<string, string> = { ...defaults, ...options.headers }
    let payload: string | undefined = options.raw
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await app.inject({ method: method as 'GET', url, headers, payload })
    return { status: res.statusCode, headers: res.headers, text: res.body, body: res.body ? JSON.parse(res.body) : undefined }
  }
  return {
    request,
    get: (url, headers) => request('GET', url, { headers }),
    post: (url, body, headers) => request('POST', url, { body, headers }),
    patch: (url, body, headers) => request('PATCH', url, { body, headers }),
    put: (url, body, headers) => request('PUT', url, { body, headers }),
    delete: (url, headers) => request('DELETE', url, { headers }),
  }
}

/** hangar on a real port (127.0.0.1, a free one), with a manual clock: for real HTTP clients. */
export async function serveApp(t: Test, config: Partial<Config> = {}) {
  const clock = Clock.manual(START)
  const app = buildApp({ clock, config: { db: ':memory:', logLevel: 'silent', heartbeatMs: 0, ...config } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  return { app, clock, port, base: `http://127.0.0.1:${port}` }
}

export async function makeApp(t: Test, options: { config?: Partial<Config>; clock?: Clock } = {}) {
  const clock = options.clock ?? Clock.manual(START)
  const app = buildApp({ clock, config: { db: ':memory:', logLevel: 'silent', ...options.config } })
  t.teardown(() => app.close())
  await app.ready()
  return { app, clock, api: clientFor(app) }
}

/** What the official example client sends to create a GitHub deployment. */
export function githubDeployment(overrides: Record<string, unknown> = {}) {
  return {
    name: 'my_deployment',
    source: 'github',
    source_config: {
      integration_id: '6f1a0c1e-1b43-4a9a-9f57-2f5f7f2d9a10',
      repo_url: 'https://github.com/acme/agent',
      deployment_type: 'dev',
      build_on_push: false,
      custom_url: null,
      resource_spec: null,
    },
    source_revision_config: { repo_ref: 'main', langgraph_config_path: 'langgraph.json', image_uri: null },
    secrets: [
      { name: 'OPENAI_API_KEY', value: 'sk-test' },
      { name: 'ANTHROPIC_API_KEY', value: 'ak-test' },
      { name: 'TAVILY_API_KEY', value: 'tv-test' },
    ],
    ...overrides,
  }
}

export function dockerDeployment(overrides: Record<string, unknown> = {}) {
  return {
    name: 'docker_deployment',
    source: 'external_docker',
    source_config: { deployment_type: 'prod' },
    source_revision_config: { image_uri: 'registry.example.com/agent:1.0' },
    secrets: [],
    ...overrides,
  }
}

/** One turn of the event loop. */
export const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Turns the event loop until `done()` holds (no real time is waited for, only I/O and callbacks). */
export async function until(done: () => boolean, what: string, maxTurns = 20_000) {
  for (let i = 0; i < maxTurns; i++) {
    if (done()) return
    await turn()
  }
  throw new Error(`${what}: still not so after ${maxTurns} turns of the event loop`)
}
