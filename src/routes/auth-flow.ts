import { once } from 'node:events'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Clock } from '../clock.js'
import { authorizeUrl } from '../domain/oauth.js'
import { ApiError } from '../errors.js'
import { publicBase } from '../public-url.js'
import { errorResponses } from '../schemas/common.js'
import {
  AuthAuthenticateRequest,
  AuthAuthenticateResponse,
  AuthWaitParams,
  AuthWaitQuery,
  AuthWaitResponse,
  OAuthCallbackResult,
  OAuthFinalizeRequest,
  ProviderParams,
} from '../schemas/auth.js'
import type { OAuthFlows } from '../store/oauth-flows.js'
import type { OAuthProviderRepository } from '../store/oauth-providers.js'
import type { OAuthTokenRepository, Token } from '../store/oauth-tokens.js'
import { providerNotFound } from './auth-providers.js'

export interface AuthFlowRoutesOptions {
  providers: OAuthProviderRepository
  tokens: OAuthTokenRepository
  flows: OAuthFlows
  clock: Clock
  publicUrl: string
}

const tags = ['Auth Service (v2)']
const covers = (token: Token, scopes: string[]) => scopes.every((scope) => token.scopes.includes(scope))
const tokenMetadata = (token: Token) => ({
  token_id: token.summary.id,
  provider_id: token.summary.provider_id,
  scopes: token.scopes,
  expires_at: token.summary.expires_at,
})

/** authenticate → (consent screen) → callback → wait: the OAuth flow, simulated offline. */
export const authFlowRoutes: FastifyPluginAsyncTypebox<AuthFlowRoutesOptions> = async (app, options) => {
  const { providers, tokens, flows, clock } = options
  /** Waits in progress, ended with their current answer when hangar shuts down. */
  const waits = new Set<AbortController>()
  app.addHook('preClose', (done) => {
    for (const controller of waits) controller.abort(new Error('shutting down'))
    done()
  })

  app.post('/v2/auth/authenticate', {
    schema: {
      operationId: 'authenticate_v2_auth_authenticate_post', tags, summary: 'Authenticate',
      body: AuthAuthenticateRequest,
      response: { 200: AuthAuthenticateResponse, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const body = request.body
    const provider = providers.get(request.tenantId, body.provider)
    if (!provider) throw providerNotFound(body.provider)
    const userId = body.user_id ?? body.ls_user_id ?? request.userId
    let owned = tokens.forUser(provider.seq, userId)
    if (body.token_id) {
      owned = owned.filter((token) => token.summary.id === body.token_id)
      if (owned.length === 0) throw ApiError.notFound(`Token ${body.token_id} not found.`)
    }
    const now = clock.now()
    const live = (token: Token) => token.expiresAt === null || token.expiresAt > now
    const usable = owned.find((token) => live(token) && covers(token, body.scopes))
    const answer = { url: null, auth_id: null, token: null, user_id: userId, metadata: null }
    if (usable && !body.force_new) {
      if (body.agent_id && !tokens.isConnected(body.agent_id, usable.seq)) {
        return { ...answer, status: 'connection_required' as const, metadata: tokenMetadata(usable) }
      }
      return { ...answer, status: 'completed' as const, token: usable.accessToken, metadata: tokenMetadata(usable) }
    }
    const expired = !body.force_new && owned.some((token) => !live(token) && covers(token, body.scopes))
    const flow = flows.start({ provider, userId, agentId: body.agent_id ?? null, scopes: body.scopes, isDefault: body.is_default ?? true })
    const url = authorizeUrl(publicBase(request, options.publicUrl), {
      clientId: provider.clientId,
      providerId: provider.providerId,
      scopes: body.scopes,
      state: flow.state,
      challenge: flow.challenge,
      challengeMethod: provider.codeChallengeMethod,
    })
    return { ...answer, status: expired ? ('token_expired' as const) : ('pending' as const), url, auth_id: flow.id }
  })

  app.post('/v2/auth/callback/:provider_id', {
    schema: {
      operationId: 'oauth_callback_v2_auth_callback__provider_id__post', tags, summary: 'Oauth Callback',
      params: ProviderParams,
      body: OAuthFinalizeRequest,
      response: { 200: OAuthCallbackResult, ...errorResponses(400, 422) },
    },
  }, async (request) => {
    const { provider_id: providerId } = request.params
    const { flow, token } = flows.exchange(providerId, request.body.code, request.body.state, request.tenantId)
    return { status: 'completed' as const, provider_id: providerId, auth_id: flow.id, token_id: token.summary.id }
  })

  app.get('/v2/auth/wait/:auth_id', {
    schema: {
      operationId: 'wait_for_auth_completion_v2_auth_wait__auth_id__get', tags, summary: 'Wait For Auth Completion',
      params: AuthWaitParams,
      querystring: AuthWaitQuery,
      response: { 200: AuthWaitResponse, ...errorResponses(422) },
    },
  }, async (request, reply) => {
    const { auth_id: authId } = request.params
    const status = () => {
      const flow = flows.get(request.tenantId, authId)
      if (!flow) return { status: 'not_found' as const, token: null }
      if (flow.token) return { status: 'completed' as const, token: flow.token.accessToken }
      return undefined
    }
    const settled = status()
    const timeout = request.query.timeout!
    if (settled || timeout <= 0) return settled ?? { status: 'pending' as const, token: null }

    // Long-poll on the clock: the answer comes when the flow completes or `timeout` seconds of
    // clock time pass, whichever is first; a client that goes away, or shutdown, ends the wait.
    const controller = new AbortController()
    waits.add(controller)
    reply.raw.once('close', () => controller.abort(new Error('client closed')))
    try {
      const completed = await Promise.race([
        once(flows.completions, authId, { signal: controller.signal }).then(() => true),
        clock.until(clock.now() + timeout * 1000, controller.signal).then(() => false),
      ])
      return status() ?? { status: completed ? ('completed' as const) : ('timeout' as const), token: null }
    } catch {
      return status() ?? { status: 'pending' as const, token: null }
    } finally {
      controller.abort()
      waits.delete(controller)
    }
  })
}
