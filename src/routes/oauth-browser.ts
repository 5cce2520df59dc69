// The parts of the OAuth flow a browser visits, so they take no credentials (the `state` is the
// authorization): hangar's stand-in for the provider's consent screen, and the callbacks the
// provider redirects to.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { CONSENT_PATH, isCallbackFor } from '../domain/oauth.js'
import { RuleViolation } from '../errors.js'
import { errorResponses } from '../schemas/common.js'
import { OAuthCallbackQuery, OAuthCallbackResult, OAuthSetupQuery, ProviderParams } from '../schemas/auth.js'
import type { OAuthFlows } from '../store/oauth-flows.js'

export interface OAuthBrowserRoutesOptions {
  flows: OAuthFlows
}

const tags = ['Auth Service (v2)']

const ConsentQuery = Type.Object({
  response_type: Type.String(),
  client_id: Type.String(),
  redirect_uri: Type.String(),
  scope: Type.Optional(Type.String()),
  state: Type.String(),
  code_challenge: Type.Optional(Type.String()),
  code_challenge_method: Type.Optional(Type.String()),
  decision: Type.Optional(Type.Union([Type.Literal('allow'), Type.Literal('deny')], { default: 'allow' })),
})

/** A callback answers JSON to clients that ask for it, else a page for the browser. */
const CallbackAnswer = {
  description: 'The result as JSON when the client accepts application/json, else an HTML page.',
  content: { 'application/json': { schema: OAuthCallbackResult }, 'text/html': { schema: Type.String() } },
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const page = (title: string, message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
  `<body><main><h1>${escape(title)}</h1><p>${escape(message)}</p></main></body></html>`

/** A browser gets a page; a client that asks for JSON gets the result as JSON. */
function answer(request: FastifyRequest, reply: FastifyReply, result: { provider_id: string; auth_id: string; token_id: string }, name: string) {
  if (request.headers.accept?.includes('application/json')) return { status: 'completed' as const, ...result }
  return reply.type('text/html; charset=utf-8').send(page(`Connected to ${name}`, 'You can close this window and return to the app.'))
}

function redirectTo(uri: string, params: Record<string, string>) {
  const url = new URL(uri)
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return url.toString()
}

export const oauthConsentRoutes: FastifyPluginAsyncTypebox<OAuthBrowserRoutesOptions> = async (app, { flows }) => {
  app.get(CONSENT_PATH, {
    schema: {
      tags: ['Emulator'], summary: 'Stand-in consent screen',
      description: 'Opening it (a browser or a plain GET) approves the authorization and redirects to the redirect_uri with a code; `decision=deny` refuses.',
      querystring: ConsentQuery,
      response: errorResponses(400, 422),
    },
  }, async (request, reply) => {
    const q = request.query
    if (q.response_type !== 'code') throw new RuleViolation(`Unsupported response_type '${q.response_type}'; only 'code' is supported.`)
    const flow = flows.pendingByState(q.state)
    if (!flow) throw new RuleViolation('Unknown or expired authorization request.')
    if (q.client_id !== flow.provider.clientId) throw new RuleViolation('client_id does not match the provider of this request.')
    if (!isCallbackFor(q.redirect_uri, flow.provider.providerId)) {
      throw new RuleViolation('redirect_uri is not the callback of this provider.')
    }
    if (flow.provider.usesPkce && !q.code_challenge) throw new RuleViolation('code_challenge is required by this provider.')
    if (q.decision === 'deny') {
      return reply.redirect(redirectTo(q.redirect_uri, { error: 'access_denied', error_description: 'The user denied access.', state: q.state }), 302)
    }
    const code = flows.issueCode(flow, q.code_challenge ?? null)
    return reply.redirect(redirectTo(q.redirect_uri, { code, state: q.state }), 302)
  })
}

export const oauthCallbackRoutes: FastifyPluginAsyncTypebox<OAuthBrowserRoutesOptions> = async (app, { flows }) => {
  const finish = (providerId: string, query: { code?: string; state?: string; error?: string; error_description?: string }) => {
    if (query.error) {
      throw new RuleViolation(`Authorization failed: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`)
    }
    if (!query.code || !query.state) throw new RuleViolation('The callback needs both code and state.')
    const { flow, token } = flows.exchange(providerId, query.code, query.state)
    return { name: flow.provider.name, result: { provider_id: providerId, auth_id: flow.id, token_id: token.summary.id } }
  }

  app.get('/v2/auth/callback/:provider_id', {
    schema: {
      operationId: 'oauth_callback_get_v2_auth_callback__provider_id__get', tags, summary: 'Oauth Callback Get',
      params: ProviderParams,
      querystring: OAuthCallbackQuery,
      response: { 200: CallbackAnswer, ...errorResponses(400, 422) },
    },
  }, async (request, reply) => {
    const { name, result } = finish(request.params.provider_id, request.query)
    return answer(request, reply, result, name)
  })

  app.get('/v2/auth/setup/:provider_id', {
    schema: {
      operationId: 'oauth_setup_callback_v2_auth_setup__provider_id__get', tags, summary: 'Oauth Setup Callback',
      params: ProviderParams,
      querystring: OAuthSetupQuery,
      response: { 200: CallbackAnswer, ...errorResponses(400, 422) },
    },
  }, async (request, reply) => {
    const q = request.query
    if (q.code || q.state || q.error) {
      const { name, result } = finish(request.params.provider_id, q)
      return answer(request, reply, result, name)
    }
    const action = q.setup_action ?? 'install'
    return reply.type('text/html; charset=utf-8').send(page('Setup complete', `The app installation was updated (${action}).`))
  })
}
