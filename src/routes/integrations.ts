import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { integrationsFor, type Fixtures } from '../fixtures.js'
import { errorResponses } from '../schemas/common.js'
import { GithubIntegrations, GithubRepositories, IntegrationParams, type GithubRepository } from '../schemas/integrations.js'

export interface IntegrationRoutesOptions {
  fixtures: Fixtures
}

const tags = ['Integrations (v1)']

/** The two families of the tag: GitHub App installations, and Forge ones. Same shapes, separate fixtures. */
const FAMILIES = [
  {
    kind: 'github',
    base: '/v1/integrations/github',
    install: { operationId: 'list_github_integrations_v1_integrations_github_install_get', summary: 'List GitHub Integrations' },
    repos: { operationId: 'list_github_repositories_v1_integrations_github__integration_id__repos_get', summary: 'List GitHub Repositories' },
  },
  {
    kind: 'forge',
    base: '/v1/integrations/forge/github',
    install: { operationId: 'list_forge_github_integrations_v1_integrations_forge_github_install_get', summary: 'List Forge GitHub Integrations' },
    repos: {
      operationId: 'list_forge_github_repositories_v1_integrations_forge_github__integration_id__repos_get',
      summary: 'List Forge GitHub Repositories',
    },
  },
] as const

/**
 * Integrations (v1), read from the integration fixtures a workspace sees. The spec documents only
 * 200 and 422 for the repository lists, so an integration the workspace does not see has no repositories.
 */
export const integrationRoutes: FastifyPluginAsyncTypebox<IntegrationRoutesOptions> = async (app, { fixtures }) => {
  for (const { kind, base, install, repos } of FAMILIES) {
    app.get(`${base}/install`, {
      schema: { ...install, tags, response: { 200: GithubIntegrations } },
    }, async (request) =>
      integrationsFor(fixtures, kind, request.tenantId).map(({ id, installation_id, name }) => ({ id, installation_id, name })))

    app.get(`${base}/:integration_id/repos`, {
      schema: { ...repos, tags, params: IntegrationParams, response: { 200: GithubRepositories, ...errorResponses(422) } },
    }, async (request): Promise<GithubRepository[]> => {
      const id = request.params.integration_id
      const integration = integrationsFor(fixtures, kind, request.tenantId).find((i) => i.id === id)
      return (integration?.repos ?? []).map((repo) => ({ host_integration_id: integration!.id, ...repo }))
    })
  }
}
