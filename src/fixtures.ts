// Seed data: read from a directory of JSON files, validated, and handed to the code that seeds a
// workspace — the same code at boot, when a workspace is first seen, and on reset.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { Clock } from './clock.js'
import { newProvider } from './domain/oauth.js'
import type { PydanticError } from './validation/pydantic-error.js'
import type { ResetScope, Stateful } from './stateful.js'
import type { Db } from './store/db.js'
import type { OAuthProviderRepository } from './store/oauth-providers.js'
import type { WorkspaceRepository } from './store/workspaces.js'
import { Nullable, StringEnum, Uuid } from './schemas/common.js'
import { OAuthProviderCreateRequest } from './schemas/auth.js'
import { compile, INVALID } from './validation/pydantic.js'

export const WorkspaceFixture = Type.Object({
  id: Uuid(),
  name: Type.Optional(Type.String()),
  self_hosted_enterprise: Type.Boolean(),
})

/** A provider as the create request takes it, plus the account label its tokens show. */
export const ProviderFixture = Type.Object({
  ...OAuthProviderCreateRequest.properties,
  account_label: Type.Optional(Nullable(Type.String())),
})
export type ProviderFixture = Static<typeof ProviderFixture>

export const IntegrationFixture = Type.Object({
  kind: StringEnum(['github', 'forge']),
  id: Uuid(),
  installation_id: Type.Integer(),
  name: Type.String(),
  /** `"*"` for every workspace, or the workspace ids that see it. */
  workspaces: Type.Union([Type.Literal('*'), Type.Array(Uuid())]),
  repos: Type.Array(
    Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.String(), url: Type.String(), default_branch: Type.String() }),
  ),
})
export type IntegrationFixture = Static<typeof IntegrationFixture>

const FILES = {
  workspaces: ['workspaces.json', WorkspaceFixture],
  providers: ['oauth-providers.json', ProviderFixture],
  integrations: ['integrations.json', IntegrationFixture],
} as const

export interface Fixtures {
  workspaces: Static<typeof WorkspaceFixture>[]
  providers: ProviderFixture[]
  integrations: IntegrationFixture[]
}

export class FixtureError extends Error {}

const where = (loc: (string | number)[]) => loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '')

/**
 * Reads the fixtures directory. A missing file means "none of that kind"; an unreadable or invalid
 * one stops start-up with one line naming the file and the first problem.
 */
export function loadFixtures(dir: string): Fixtures {
  const result: Record<string, unknown[]> = {}
  for (const [key, [file, schema]] of Object.entries(FILES)) {
    const path = join(dir, file)
    if (!existsSync(path)) {
      result[key] = []
      continue
    }
    let data: unknown
    try {
      data = JSON.parse(readFileSync(path, 'utf8'))
    } catch (error) {
      throw new FixtureError(`fixture ${path}: ${(error as Error).message}`)
    }
    const errors: PydanticError[] = []
    const value = compile(Type.Array(schema as TSchema))(data, [], errors)
    if (value === INVALID) {
      const first = errors[0]
      throw new FixtureError(`fixture ${path}: ${where(first.loc) || '(top level)'}: ${first.msg}`)
    }
    result[key] = value as unknown[]
  }
  const fixtures = result as unknown as Fixtures
  const duplicate = fixtures.providers.find((p, i) => fixtures.providers.findIndex((q) => q.provider_id === p.provider_id) !== i)
  if (duplicate) throw new FixtureError(`fixture ${join(dir, FILES.providers[0])}: provider_id '${duplicate.provider_id}' appears twice`)
  return fixtures
}

/** The integrations of one kind a workspace sees. */
export const integrationsFor = (fixtures: Fixtures, kind: 'github' | 'forge', tenantId: string) =>
  fixtures.integrations.filter((i) => i.kind === kind && (i.workspaces === '*' || i.workspaces.includes(tenantId)))

/**
 * Seeds a workspace the first time hangar sees it (a request names it, or boot does): its plan flag
 * from the workspace fixtures (else the configured default) and the fixture OAuth providers. The
 * same code runs at boot and for every later workspace, and will run again on reset.
 */
export class WorkspaceSeeder implements Stateful {
  readonly #known = new Set<string>()

  constructor(
    private readonly db: Db,
    private readonly fixtures: Fixtures,
    private readonly repos: { workspaces: WorkspaceRepository; providers: OAuthProviderRepository },
    private readonly clock: Clock,
    private readonly defaultSelfHostedEnterprise: boolean,
  ) {}

  ensure(tenantId: string): void {
    if (this.#known.has(tenantId)) return
    const declared = this.fixtures.workspaces.find((w) => w.id === tenantId)
    const selfHosted = declared?.self_hosted_enterprise ?? this.defaultSelfHostedEnterprise
    this.db.transaction(() => {
      if (!this.repos.workspaces.insert(tenantId, selfHosted, this.clock.now())) return
      for (const provider of this.fixtures.providers) this.repos.providers.create(tenantId, newProvider(provider))
    })()
    this.#known.add(tenantId)
  }

  /** After a reset or import, forgets which workspaces were seeded (one, or all), so the next request seeds them again. */
  afterReset(tenantId: ResetScope): void {
    if (tenantId === undefined) this.#known.clear()
    else this.#known.delete(tenantId)
  }

  /** Seeds the default workspace and every workspace the fixtures name. */
  seedAll(defaultTenant: string): void {
    this.ensure(defaultTenant)
    for (const workspace of this.fixtures.workspaces) this.ensure(workspace.id)
  }
}
