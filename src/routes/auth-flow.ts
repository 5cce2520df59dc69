import { once } from 'node:events'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { OAuthFlows } from '../domain/oauth-flows.js'
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

export interface AuthFlowRoutesOptions {
  oauth: OAuthFlows
  clock: Clock
  config: Pick<Config, 'publicUrl'>
}

const tags = ['Auth Service (v2)']

/** authenticate → (consent screen) → callback → wait: the OAuth flow, simulated offline. */
export const authFlowRoutes: FastifyPluginAsyncTypebox<AuthFlowRoutesOptions> = async (app, { oauth, clock, config }) => {
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
    const userId = body.user_id ?? body.ls_user_id ?? request.userId
    const answer = oauth.authenticate(request.tenantId, {
      provider: body.provider,
      scopes: body.scopes,
      userId,
      agentId: body.agent_id ?? null,
      tokenId: body.token_id ?? null,
      forceNew: body.force_new ?? false,
      isDefault: body.is_default ?? true,
    }, publicBase(request, config.publicUrl))
    const blank = { url: null, auth_id: null, token: null, user_id: userId, metadata: null }
    switch (answer.status) {
      case 'completed': return { ...blank, status: answer.status, token: answer.token, metadata: answer.metadata }
      case 'connection_required': return { ...blank, status: answer.status, metadata: answer.metadata }
      default: return { ...blank, status: answer.status, url: answer.url, auth_id: answer.authId }
    }
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
    const { flow, token } = oauth.exchange(providerId, request.body.code, request.body.state, request.tenantId)
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
      const flow = oauth.get(request.tenantId, authId)
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
        once(oauth.completions, authId, { signal: controller.signal }).then(() => true),
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
