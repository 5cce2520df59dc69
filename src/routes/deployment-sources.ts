// How `langgraph deploy` gets a deployment's source to hangar: `POST …/upload-url` for a remote build
// (a signed URL to PUT the tarball to, served by routes/signed-uploads.ts), `POST …/push-token` for a
// local build. Neither is in the published spec; the CLI's calls are the contract.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Config } from '../config.js'
import type { SourceUploads } from '../domain/source-uploads.js'
import { publicBase } from '../public-url.js'
import { errorResponses } from '../schemas/common.js'
import { PushToken, UploadUrl } from '../schemas/deployment-sources.js'
import { DeploymentParams } from '../schemas/deployments.js'
import { clientUrl } from '../copies.js'

export interface DeploymentSourceRoutesOptions {
  sourceUploads: SourceUploads
  config: Pick<Config, 'publicUrl'>
}

const tags = ['Deployments (v2)']

export const deploymentSourceRoutes: FastifyPluginAsyncTypebox<DeploymentSourceRoutesOptions> = async (app, { sourceUploads, config }) => {
  app.post('/v2/deployments/:deployment_id/upload-url', {
    schema: {
      operationId: 'create_upload_url_v2_deployments__deployment_id__upload_url_post', tags, summary: 'Create Upload URL',
      description: 'A signed URL to upload an `internal_source` deployment\'s source tarball to, and the object path to name it by in a revision. Not in the published spec; `langgraph deploy` calls it for remote builds.',
      params: DeploymentParams,
      response: { 200: UploadUrl, ...errorResponses(400, 404, 422) },
    },
  }, async (request) => {
    // The URL is served under the prefix the request came by (a proxy that forwards only /api-host reaches it too).
    const path = clientUrl(request)
    const base = publicBase(request, config.publicUrl) + path.slice(0, path.indexOf('/v2/'))
    return sourceUploads.issueUploadUrl(request.tenantId, request.params.deployment_id, base)
  })

  app.post('/v2/deployments/:deployment_id/push-token', {
    schema: {
      operationId: 'create_push_token_v2_deployments__deployment_id__push_token_post', tags, summary: 'Create Push Token',
      description: 'A token to push an `internal_docker` deployment\'s image to the registry it names. Not in the published spec; `langgraph deploy` calls it for local builds.',
      params: DeploymentParams,
      response: { 200: PushToken, ...errorResponses(400, 404, 422) },
    },
  }, async (request) => sourceUploads.pushToken(request.tenantId, request.params.deployment_id))
}
