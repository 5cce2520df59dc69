// Seed data: read from the bundled fixtures and a user's directory of JSON files, validated, and
// handed to the code that seeds a workspace — the same code at boot, when a workspace is first
// seen, and on reset.

import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs'
import { join, resolve } from 'node:path'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { Clock } from './clock.js'
import { BUNDLED_FIXTURES } from './config.js'
import { didYouMean } from './did-you-mean.js'
import { newProvider } from './domain/oauth.js'
import type { PydanticError } from './validation/pydantic-error.js'
import type { ResetScope, Stateful } from './stateful.js'
import type { Db } from './store/db.js'
import type { OAuthProviderRepository } from './store/oauth-providers.js'
import type { WorkspaceRepository } from './store/workspaces.js'
import { Nullable, StringEnum, Uuid } from './schemas/common.js'
import { OAuthProviderCreateRequest } from './schemas/auth.js'
import { compile, INVALID } from './validation/pydantic.js'
import { atomically } from './store/group-commit.js'

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
/** The folder of scripted graphs, one `*.json` per graph (agent/graphs.ts reads it). */
const GRAPHS = 'graphs'

export interface Fixtures {
  workspaces: Static<typeof WorkspaceFixture>[]
  providers: ProviderFixture[]
  integrations: IntegrationFixture[]
  /** The folder the scripted graphs are read from. */
  graphsDir: string
}

export class FixtureError extends Error {
  override name = 'FixtureError'

  /** The setting at fault (`fixtures`; `graphs` for the user's own graphs; `replay`, `replayFallback` for a recording). */
  constructor(message: string, readonly setting: 'fixtures' | 'graphs' | 'replay' | 'replayFallback' = 'fixtures') {
    super(message)
  }
}

const where = (loc: (string | number)[]) => loc.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '')

/**
 * Reads the seed data. The bundled fixtures are the base; a fixtures directory (`--fixtures`)
 * replaces each kind it provides — `workspaces.json`, `oauth-providers.json`, `integrations.json`,
 * the `graphs/` folder — and leaves the kinds it does not provide as bundled. (An empty file `[]`
 * or an empty `graphs/` means none of that kind.) A directory that does not exist, provides no kind,
 * or holds a `.json` file hangar does not read (a misspelled name), or an unreadable or invalid file,
 * stops start-up with one line naming the file and the first problem.
 */
export function loadFixtures(dir: string): Fixtures {
  const own = resolve(dir) === resolve(BUNDLED_FIXTURES) ? [] : ownKinds(dir)
  const from = (name: string) => join(own.includes(name) ? dir : BUNDLED_FIXTURES, name)
  const result: Record<string, unknown> = { graphsDir: from(GRAPHS) }
  for (const [key, [file, schema]] of Object.entries(FILES)) {
    const path = from(file)
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
    result[key] = value
  }
  const fixtures = result as unknown as Fixtures
  const duplicate = fixtures.providers.find((p, i) => fixtures.providers.findIndex((q) => q.provider_id === p.provider_id) !== i)
  if (duplicate) throw new FixtureError(`fixture ${from(FILES.providers[0])}: provider_id '${duplicate.provider_id}' appears twice`)
  return fixtures
}

/** The kinds a user's fixtures directory provides (file names, and `graphs`), checked. */
function ownKinds(dir: string): string[] {
  const kinds = [...Object.values(FILES).map(([file]) => file), GRAPHS]
  const listing = `${kinds.slice(0, -1).join(', ')} or ${GRAPHS}/`
  let entries: Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'is not a directory' : `cannot be read (${code})`
    throw new FixtureError(`the fixtures directory ${dir} ${why}`)
  }
  for (const entry of entries) {
    if (entry.name === GRAPHS && !statSync(join(dir, GRAPHS)).isDirectory()) throw new FixtureError(`fixture ${join(dir, GRAPHS)}: expected a folder of graph files`)
    if (!entry.name.endsWith('.json') || kinds.includes(entry.name)) continue
    const near = didYouMean(entry.name, kinds)
    throw new FixtureError(`fixture ${join(dir, entry.name)}: not a file hangar reads (${near ? `did you mean ${near}?` : `fixture files are ${listing}`})`)
  }
  const own = kinds.filter((kind) => entries.some((entry) => entry.name === kind))
  if (own.length === 0) throw new FixtureError(`the fixtures directory ${dir} holds none of ${listing}`)
  return own
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
    atomically(this.db, () => {
      if (!this.repos.workspaces.insert(tenantId, selfHosted, this.clock.now())) return
      for (const provider of this.fixtures.providers) this.repos.providers.create(tenantId, newProvider(provider))
    })
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
