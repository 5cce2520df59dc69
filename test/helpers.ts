// What the tests share: hangar built in-process (:memory: SQLite unless told otherwise, a frozen
// manual clock, silent logs), clients for it, request bodies, and bounded waits. Requests go through
// `app.inject`; `serveApp` gives a real server when a real client matters. A wait never waits for
// real time: it turns the event loop (or moves the manual clock) a bounded number of times and
// fails with a message naming what never came (`beforeDeadline`, for what only a running clock
// brings, bounds its wait in real time instead).

import type { EventEmitter } from 'node:events'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync } from 'fastify'
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

/**
 * A client over real HTTP (`fetch`) to a listening hangar at `base`, sending `headers` on every
 * request the way a tool does (e.g. `X-Api-Key`, `X-Tenant-Id`), and `Content-Type` with bodies.
 */
export function fetchClient(base: string, headers: Record<string, string>): Client {
  const request: Client['request'] = async (method, url, options = {}) => {
    const sent: Record<string, string> = { ...headers, ...options.headers }
    let body: string | undefined = options.raw
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      sent['Content-Type'] ??= 'application/json'
    }
    const res = await fetch(`${base}${url}`, { method, headers: sent, body })
    const text = await res.text()
    const received: Record<string, string> = {}
    res.headers.forEach((value, name) => { received[name] = value })
    return { status: res.status, headers: received, text, body: text ? JSON.parse(text) : undefined }
  }
  return {
    request,
    get: (url, extra) => request('GET', url, { headers: extra }),
    post: (url, body, extra) => request('POST', url, { body, headers: extra }),
    patch: (url, body, extra) => request('PATCH', url, { body, headers: extra }),
    put: (url, body, extra) => request('PUT', url, { body, headers: extra }),
    delete: (url, extra) => request('DELETE', url, { headers: extra }),
  }
}

export interface TestAppOptions {
  config?: Partial<Config>
  /** Default: a manual clock frozen at START. */
  clock?: Clock
  /** Test-only routes, registered before the app is ready; they may use what `app` exposes (e.g. `app.emulator`). */
  routes?: (app: App) => FastifyPluginAsync
}

/**
 * hangar built for a test and nothing more: not ready, not listening, not closed for you. For tests
 * that close and reopen a database, or that expect the build itself to fail; others use makeApp or serveApp.
 */
export function buildTestApp(options: Omit<TestAppOptions, 'routes'> = {}) {
  const clock = options.clock ?? Clock.manual(START)
  const app = buildApp({ clock, config: { db: ':memory:', logLevel: 'silent', ...options.config } })
  return { app, clock }
}

function registered(t: Test, options: TestAppOptions) {
  const built = buildTestApp(options)
  if (options.routes) built.app.register(options.routes(built.app))
  // A test's server goes without waiting for its clients' spare sockets: fetch (undici) may hold
  // connections that never carry a request, and a server's close waits for those until the client
  // drops them (4 s). Tests of a graceful shutdown call close() themselves, before this.
  t.teardown(async () => {
    const closing = built.app.close()
    built.app.server.closeAllConnections()
    await closing
  })
  return built
}

/** hangar in-process, ready, closed when the test ends; `api` sends the API key on every request. */
export async function makeApp(t: Test, options: TestAppOptions = {}) {
  const { app, clock } = registered(t, options)
  await app.ready()
  return { app, clock, api: clientFor(app) }
}

/** hangar on a real port (127.0.0.1, a free one), with a manual clock and no heartbeats: for real HTTP clients. */
export async function serveApp(t: Test, config: Partial<Config> = {}, options: Omit<TestAppOptions, 'config'> = {}) {
  const { app, clock } = registered(t, { ...options, config: { heartbeatMs: 0, ...config } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  return { app, clock, port, base: `http://127.0.0.1:${port}`, api: clientFor(app) }
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

/** Lets `count` turns of the event loop pass: for checking that something has *not* happened. */
export async function turns(count: number) {
  for (let i = 0; i < count; i++) await turn()
}

/**
 * Turns the event loop until `done()` holds (no real time is waited for, only I/O and callbacks);
 * fails naming `what` when it still does not hold after `maxTurns` turns.
 */
export async function until(done: () => boolean | Promise<boolean>, what: string, maxTurns = 20_000) {
  for (let i = 0; i < maxTurns; i++) {
    if (await done()) return
    await turn()
  }
  throw new Error(`${what}: still not so after ${maxTurns} turns of the event loop`)
}

/** Whether `promise` has settled once `count` turns of the event loop have passed. */
export async function settlesWithin(promise: Promise<unknown>, count = 20) {
  let done = false
  void promise.then(() => (done = true), () => (done = true))
  await turns(count)
  return done
}

/**
 * For what only real time brings (a running clock, as `npm start` has): resolves with `promise`,
 * or fails naming `what` once `deadlineMs` of real time have passed without it. The deadline only
 * bounds a failure; a test that passes waits for the event, not for the deadline.
 */
export function beforeDeadline<T>(promise: Promise<T>, deadlineMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still not so after ${deadlineMs} ms of real time`)), deadlineMs)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/** Whether something (a long-poll, a graph's delay, a fault's latency) waits on the clock now. */
export const waitsOnClock = (clock: Clock) => clock.listenerCount('change') > 0

/**
 * Resolves once something starts waiting on the clock (adds a 'change' listener: a long-poll or a
 * delay has registered). Only 'change' counts: `events.once` would itself add an 'error' listener.
 * Create it before the request that will wait, then await it.
 */
export function someoneWaitsOn(clock: Clock): Promise<void> {
  const emitter = clock as unknown as EventEmitter
  return new Promise((resolve) => {
    const onNewListener = (event: string | symbol) => {
      if (event !== 'change') return
      emitter.off('newListener', onNewListener)
      resolve()
    }
    emitter.on('newListener', onNewListener)
  })
}

/**
 * Lets emulated time pass until `finished()` holds: whenever something waits on the clock it is
 * moved `stepMs` forward, and the event loop gets a turn between checks (no real time is waited);
 * fails naming `what` when it still does not hold after `maxTurns` turns.
 */
export async function runClockUntil(
  clock: Clock,
  finished: () => boolean | Promise<boolean>,
  what: string,
  { stepMs = 1000, maxTurns = 10_000 } = {},
) {
  for (let i = 0; i < maxTurns; i++) {
    if (await finished()) return
    if (waitsOnClock(clock)) clock.advance(stepMs)
    await turn()
  }
  throw new Error(`${what}: still not so after ${maxTurns} turns of the event loop and the clock`)
}

/** The ids of the graphs hangar ships (each gets a system assistant), in file-name order. */
export const SHIPPED_GRAPHS: readonly string[] = readdirSync(fileURLToPath(new URL('../fixtures/graphs', import.meta.url)))
  .filter((file) => file.endsWith('.json')).sort().map((file) => file.replace(/\.json$/, ''))
