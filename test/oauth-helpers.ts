// Driving the simulated OAuth flow as a client and its user's browser would.

import type { App } from '../src/app.js'
import type { Client } from './helpers.js'

/** The path and query of an absolute URL hangar handed out, for app.inject. */
export const pathOf = (url: string) => {
  const u = new URL(url)
  return u.pathname + u.search
}

/** Opens the consent URL like a browser (no credentials) and returns where it redirects. */
export async function consent(app: App, url: string, decision?: 'deny') {
  const res = await app.inject({ method: 'GET', url: pathOf(url) + (decision ? '&decision=deny' : '') })
  return { status: res.statusCode, location: res.headers.location as string | undefined, body: res.body }
}

/** authenticate → consent → callback, as a user clicking through; returns the flow's ids and token. */
export async function completeFlow(app: App, api: Client, provider: string, options: { scopes?: string[]; agentId?: string } = {}) {
  const started = await api.post('/v2/auth/authenticate', { provider, scopes: options.scopes ?? ['read'], agent_id: options.agentId })
  if (started.body.status !== 'pending' && started.body.status !== 'token_expired') {
    throw new Error(`expected a pending flow, got ${started.text}`)
  }
  const redirect = await consent(app, started.body.url)
  const callback = await app.inject({ method: 'GET', url: pathOf(redirect.location!), headers: { accept: 'application/json' } })
  if (callback.statusCode !== 200) throw new Error(`callback failed: ${callback.body}`)
  const done = (await api.get(`/v2/auth/wait/${started.body.auth_id}?timeout=0`)).body
  return { authId: started.body.auth_id as string, tokenId: callback.json().token_id as string, token: done.token as string }
}
