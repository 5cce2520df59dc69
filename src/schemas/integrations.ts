// Integrations (v1): GitHub installations and their repositories, as in the real OpenAPI document.

import { Type, type Static } from '@sinclair/typebox'
import { Uuid } from './common.js'

export const GithubIntegration = Type.Object(
  { id: Uuid(), installation_id: Type.Integer(), name: Type.String() },
  { title: 'GithubIntegration' },
)
export type GithubIntegration = Static<typeof GithubIntegration>

export const GithubRepository = Type.Object(
  {
    host_integration_id: Uuid(),
    id: Type.Integer(),
    name: Type.String(),
    owner: Type.String(),
    url: Type.String(),
    default_branch: Type.String(),
  },
  { title: 'GithubRepository' },
)
export type GithubRepository = Static<typeof GithubRepository>

export const IntegrationParams = Type.Object({ integration_id: Uuid({ title: 'Integration ID' }) })

export const GithubIntegrations = Type.Array(GithubIntegration)
export const GithubRepositories = Type.Array(GithubRepository)
