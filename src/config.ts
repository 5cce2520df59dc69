import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { RevisionSpeed } from './lifecycle/revisions.js'
import { StringEnum } from './schemas/common.js'
import { compile, INVALID } from './validation/pydantic.js'

/** Every setting of hangar. Environment variables and CLI flags are parsed into this once. */
export const Config = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  db: Type.String({ minLength: 1 }),
  apiKeys: Type.Array(Type.String({ minLength: 1 })),
  defaultTenant: Type.String({ format: 'uuid' }),
  requireTenant: Type.Boolean(),
  revisionSpeed: StringEnum(RevisionSpeed),
  logLevel: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  bodyLimit: Type.Integer({ minimum: 1 }),
  tickMs: Type.Integer({ minimum: 10 }),
  publicUrl: Type.String(),
  fixtures: Type.String({ minLength: 1 }),
  selfHostedEnterprise: Type.Boolean(),
  auth: StringEnum(['on', 'off']),
  heartbeatMs: Type.Integer({ minimum: 0 }),
  sseEndEvent: Type.Boolean(),
  /** Seconds a feedback token stays valid. */
  feedbackTtl: Type.Integer({ minimum: 1 }),
  adminToken: Type.String(),
  /** Requests the journal keeps (the oldest go first). */
  journalSize: Type.Integer({ minimum: 0 }),
  /** Origins browsers may call hangar from: `*` (any), exact origins, or none (no CORS headers). */
  corsOrigins: Type.Array(Type.String({ minLength: 1 })),
  logFormat: StringEnum(['auto', 'json', 'pretty']),
})
export type Config = Static<typeof Config>

/** hangar's default workspace id: ends in the hex of "hangar". */
export const DEFAULT_TENANT = '00000000-0000-4000-8000-68616e676172'

/** The fixtures shipped with hangar (one level above both src/ and dist/). */
export const BUNDLED_FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url))

type Kind = 'string' | 'integer' | 'boolean' | 'list' | 'url' | 'duration'
interface Setting {
  key: keyof Config
  env: string
  flag: string
  kind: Kind
  default: Config[keyof Config]
  help: string
  /** Shown as hidden wherever settings are shown (`GET /info`). */
  secret?: boolean
}

/** The settings table: the single place that names every setting, its env var, flag and default. */
export const SETTINGS: readonly Setting[] = [
  { key: 'port', env: 'PORT', flag: 'port', kind: 'integer', default: 8123, help: 'TCP port; 0 picks a free one' },
  { key: 'host', env: 'HOST', flag: 'host', kind: 'string', default: '127.0.0.1', help: 'interface to listen on (0.0.0.0 for all)' },
  { key: 'db', env: 'HANGAR_DB', flag: 'db', kind: 'string', default: './.hangar/hangar.db', help: 'SQLite file (directory created on demand; one hangar per file) or :memory:' },
  { key: 'apiKeys', env: 'HANGAR_API_KEYS', flag: 'api-keys', kind: 'list', default: [], secret: true, help: 'comma-separated accepted API keys; empty accepts any non-empty key' },
  { key: 'defaultTenant', env: 'HANGAR_DEFAULT_TENANT', flag: 'default-tenant', kind: 'string', default: DEFAULT_TENANT, help: 'workspace used when a request has no X-Tenant-Id' },
  { key: 'requireTenant', env: 'HANGAR_REQUIRE_TENANT', flag: 'require-tenant', kind: 'boolean', default: false, help: 'answer 403 "requires workspace specification" without X-Tenant-Id' },
  { key: 'revisionSpeed', env: 'HANGAR_REVISION_SPEED', flag: 'speed', kind: 'string', default: 'fast', help: `how revisions advance: ${RevisionSpeed.join(', ')}` },
  { key: 'logLevel', env: 'HANGAR_LOG_LEVEL', flag: 'log-level', kind: 'string', default: 'info', help: 'fatal, error, warn, info, debug, trace or silent' },
  { key: 'bodyLimit', env: 'HANGAR_BODY_LIMIT', flag: 'body-limit', kind: 'integer', default: 1048576, help: 'largest accepted request body in bytes (413 above)' },
  { key: 'tickMs', env: 'HANGAR_TICK_MS', flag: 'tick-ms', kind: 'integer', default: 250, help: 'how often due revision transitions are written to the store (ms)' },
  { key: 'publicUrl', env: 'HANGAR_PUBLIC_URL', flag: 'public-url', kind: 'url', default: '', help: 'base of the URLs hangar hands out; empty derives it from each request' },
  { key: 'fixtures', env: 'HANGAR_FIXTURES', flag: 'fixtures', kind: 'string', default: BUNDLED_FIXTURES, help: 'directory of seed data (workspaces, OAuth providers, integrations)' },
  { key: 'selfHostedEnterprise', env: 'HANGAR_SELF_HOSTED_ENTERPRISE', flag: 'self-hosted-enterprise', kind: 'boolean', default: true, help: 'whether workspaces not named in the fixtures may use listeners' },
  { key: 'auth', env: 'HANGAR_AUTH', flag: 'auth', kind: 'string', default: 'on', help: 'off: accept requests without credentials everywhere' },
  { key: 'heartbeatMs', env: 'HANGAR_HEARTBEAT_MS', flag: 'heartbeat-ms', kind: 'integer', default: 5000, help: 'interval of ": heartbeat" comments on event streams (0: none)' },
  { key: 'sseEndEvent', env: 'HANGAR_SSE_END_EVENT', flag: 'sse-end-event', kind: 'boolean', default: false, help: 'end each run stream with an "end" event' },
  { key: 'adminToken', env: 'HANGAR_ADMIN_TOKEN', flag: 'admin-token', kind: 'string', default: '', secret: true, help: 'when set, the /_hangar admin API requires it (X-Hangar-Admin-Token or Bearer)' },
  { key: 'feedbackTtl', env: 'HANGAR_FEEDBACK_TTL', flag: 'feedback-ttl', kind: 'duration', default: 3 * 3600, help: 'lifetime of feedback tokens: 3h, 90m, 600s or seconds' },
  { key: 'journalSize', env: 'HANGAR_JOURNAL_SIZE', flag: 'journal-size', kind: 'integer', default: 1000, help: 'requests kept by the request journal (GET /_hangar/requests); 0 keeps none' },
  { key: 'corsOrigins', env: 'HANGAR_CORS_ORIGINS', flag: 'cors-origins', kind: 'list', default: ['*'], help: 'origins browsers may call from: * for any, or a comma-separated list; "none" sends no CORS headers' },
  { key: 'logFormat', env: 'HANGAR_LOG_FORMAT', flag: 'log-format', kind: 'string', default: 'auto', help: 'json, pretty, or auto: pretty on a terminal, JSON otherwise' },
]

/** A setting hangar cannot start with; its message is one line naming the setting and what is accepted. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

export const defaultConfig = (): Config =>
  Object.fromEntries(SETTINGS.map((s) => [s.key, structuredClone(s.default)])) as Config

/** How a setting is named in messages about the environment and the command line: `PORT (--port)`. */
export const settingName = (key: keyof Config): string => {
  const s = SETTINGS.find((setting) => setting.key === key)!
  return `${s.env} (--${s.flag})`
}

/**
 * Read settings from CLI flags (first) and environment variables (second), falling back to defaults.
 * Throws a ConfigError with a one-line message naming the setting at the first invalid one.
 * `--help` and `--version` are reported back to the caller rather than acted on.
 */
export function loadConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { config: Config; help: boolean; version: boolean } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    help: { type: 'boolean' },
    version: { type: 'boolean' },
  }
  for (const s of SETTINGS) options[s.flag] = { type: s.kind === 'boolean' ? 'boolean' : 'string' }
  let values: Record<string, string | boolean | undefined>
  try {
    ;({ values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false, allowNegative: true }))
  } catch (error) {
    // parseArgs' own wording is long; keep its first sentence and point at --help.
    const first = (error as Error).message.split(/\.\s|\n/)[0]
    throw new ConfigError(`${first.replace(/^Unknown option/, 'unknown option')} (hangar --help lists every option)`)
  }

  const config = defaultConfig() as Record<string, unknown>
  for (const s of SETTINGS) {
    const fromFlag = values[s.flag]
    const raw = fromFlag ?? env[s.env]
    if (raw === undefined || raw === '') continue
    const name = `${s.env} (--${s.flag})`
    const value = typeof raw === 'boolean' ? raw : convert(s.kind, raw.trim())
    const schema = Config.properties[s.key] as TSchema
    if (value === undefined || compile(schema)(value, [], []) === INVALID) {
      throw new ConfigError(`invalid setting ${name}: ${describe(s, schema)}, got ${JSON.stringify(raw)}`)
    }
    config[s.key] = s.key === 'defaultTenant' ? (value as string).toLowerCase() : value
  }
  return { config: config as Config, help: values.help === true, version: values.version === true }
}

function convert(kind: Kind, raw: string): unknown {
  switch (kind) {
    case 'integer':
      return /^[+-]?\d+$/.test(raw) ? Number(raw) : undefined
    case 'boolean': {
      const v = raw.toLowerCase()
      if (['1', 'true', 'yes', 'on'].includes(v)) return true
      if (['0', 'false', 'no', 'off'].includes(v)) return false
      return undefined
    }
    case 'list':
      return raw.split(',').map((item) => item.trim()).filter((item) => item !== '')
    case 'duration': {
      const match = /^(\d+)\s*([smhd]?)$/i.exec(raw)
      if (!match) return undefined
      return Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2].toLowerCase() as '' | 's' | 'm' | 'h' | 'd']
    }
    case 'url':
      return URL.canParse(raw) && /^https?:$/.test(new URL(raw).protocol) ? raw.replace(/\/+$/, '') : undefined
    default:
      return raw
  }
}

function describe(s: Setting, schema: TSchema): string {
  if (s.kind === 'boolean') return 'expected true or false'
  if (s.kind === 'url') return 'expected an http(s) URL'
  if (s.kind === 'duration') return 'expected a duration such as 3h, 90m, 600s or a number of seconds (at least 1)'
  if (s.kind === 'integer') {
    const max = schema.maximum === undefined ? '' : ` and ${schema.maximum}`
    return max ? `expected an integer between ${schema.minimum}${max}` : `expected an integer of at least ${schema.minimum}`
  }
  if (schema.enum) return `expected one of ${(schema.enum as string[]).join(', ')}`
  if (schema.format === 'uuid') return 'expected a UUID'
  return 'expected a non-empty value'
}

/**
 * The effective settings by environment variable, as `GET /info` shows them: secrets (API keys,
 * the admin token) are replaced by `<hidden>` when set, so their presence shows but not their value.
 */
export function visibleSettings(config: Config): Record<string, unknown> {
  const hide = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(() => HIDDEN) : value === '' ? value : HIDDEN
  return Object.fromEntries(SETTINGS.map((s) => [s.env, s.secret ? hide(config[s.key]) : config[s.key]]))
}
const HIDDEN = '<hidden>'

/** The `--help` text: every setting with its flag, environment variable and default. */
export function helpText(): string {
  const rows = SETTINGS.map((s) => {
    const flag = s.kind === 'boolean' ? `--${s.flag}` : `--${s.flag} <${s.kind === 'list' ? 'a,b' : 'value'}>`
    const def = Array.isArray(s.default) ? (s.default.length ? s.default.join(',') : '(none)') : String(s.default) || '(none)'
    return `  ${flag.padEnd(28)} ${s.env.padEnd(24)} ${s.help} [default: ${def}]`
  })
  return [
    'Usage: hangar [options]',
    '',
    'Every option can also be set with its environment variable; a flag wins over the variable.',
    '',
    `  ${'flag'.padEnd(28)} ${'environment variable'.padEnd(24)} meaning`,
    ...rows,
    `  ${'--help'.padEnd(28)} ${''.padEnd(24)} print this help`,
    `  ${'--version'.padEnd(28)} ${''.padEnd(24)} print the version`,
  ].join('\n')
}
