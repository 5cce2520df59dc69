// The parts of the OAuth flow a browser visits, so they take no credentials (the `state` is the
// authorization): hangar's stand-in for the provider's consent screen, and the callbacks the
// provider redirects to.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { CONSENT_PATH } from '../domain/oauth.js'
import type { CallbackParams, OAuthFlows } from '../domain/oauth-flows.js'
import { errorResponses } from '../schemas/common.js'
import { OAuthCallbackQuery, OAuthCallbackResult, OAuthSetupQuery, ProviderParams } from '../schemas/auth.js'

export interface OAuthBrowserRoutesOptions {
  oauth: OAuthFlows
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

export const oauthConsentRoutes: FastifyPluginAsyncTypebox<OAuthBrowserRoutesOptions> = async (app, { oauth }) => {
  app.get(CONSENT_PATH, {
    schema: {
      tags: ['Emulator'], summary: 'Stand-in consent screen',
      description: 'Opening it (a browser or a plain GET) approves the authorization and redirects to the redirect_uri with a code; `decision=deny` refuses.',
      querystring: ConsentQuery,
      response: errorResponses(400, 422),
    },
  }, async (request, reply) => reply.redirect(oauth.consent(request.query), 302))
}

export const oauthCallbackRoutes: FastifyPluginAsyncTypebox<OAuthBrowserRoutesOptions> = async (app, { oauth }) => {
  const finish = (providerId: string, params: CallbackParams) => {
    const { flow, token } = oauth.callback(providerId, params)
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
