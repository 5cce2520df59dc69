import { fileURLToPath } from 'node:url'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { didYouMean } from './did-you-mean.js'
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
  /** A directory of the user's own scenario graphs, served next to the shipped ones ('' for none). */
  graphs: Type.String(),
  /** A recording directory (`hangar record --out`) whose graphs are replayed ('' for none). */
  replay: Type.String(),
  /** How fast a recording's time passes: `realtime`, `instant`, or a factor (`4`: four times faster). */
  replaySpeed: Type.String({ pattern: '^(realtime|instant|[0-9]+(\\.[0-9]+)?)$' }),
  /** The scripted graph that answers inputs a recording has not seen ('' for none: such runs fail). */
  replayFallback: Type.String(),
  selfHostedEnterprise: Type.Boolean(),
  auth: StringEnum(['on', 'off']),
  /** The agent server's credentials: an API key (as hosted), none (as `langgraph dev`), or the bearer users of a file. */
  agentAuth: StringEnum(['api-key', 'none', 'users']),
  /** The users file of `agentAuth: 'users'` (a JSON list of `{token, identity, permissions?}`); '' for none. */
  agentUsers: Type.String(),
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
  /** Whether runs may name webhooks on this machine (localhost, 127.0.0.1, ::1, relative URLs). */
  webhookLoopback: Type.Boolean(),
  /** The registry `POST …/push-token` names for local builds to push to (host[:port][/path]). */
  registryUrl: Type.String({ minLength: 1 }),
})
export type Config = Static<typeof Config>
/** Each setting's validator, compiled once when hangar loads (a schema the validator cannot honour stops it there). */
const settingChecks = Object.fromEntries(Object.entries(Config.properties).map(([key, schema]) => [key, compile(schema, `setting ${key}`)]))

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
  { key: 'tickMs', env: 'HANGAR_TICK_MS', flag: 'tick-ms', kind: 'integer', default: 250, help: 'how often revisions that ended (every step while the event stream is followed) are written when nobody reads (ms)' },
  { key: 'publicUrl', env: 'HANGAR_PUBLIC_URL', flag: 'public-url', kind: 'url', default: '', help: 'base of the URLs hangar hands out; empty derives it from each request' },
  { key: 'fixtures', env: 'HANGAR_FIXTURES', flag: 'fixtures', kind: 'string', default: BUNDLED_FIXTURES, help: 'directory of your seed data: each kind it holds (workspaces.json, oauth-providers.json, integrations.json, graphs/) replaces the bundled one' },
  { key: 'graphs', env: 'HANGAR_GRAPHS', flag: 'graphs', kind: 'string', default: '', help: 'directory of your own scenario graphs (*.json), served next to the shipped ones; one with a shipped graph\'s graph_id replaces it' },
  { key: 'replay', env: 'HANGAR_REPLAY', flag: 'replay', kind: 'string', default: '', help: 'a recording directory (made by hangar record): its agents are served as recorded, with fresh ids' },
  { key: 'replaySpeed', env: 'HANGAR_REPLAY_SPEED', flag: 'replay-speed', kind: 'string', default: 'realtime', help: 'how fast recorded runs play: realtime, instant, or a factor (4: four times faster)' },
  { key: 'replayFallback', env: 'HANGAR_REPLAY_FALLBACK', flag: 'replay-fallback', kind: 'string', default: '', help: 'a scripted graph that answers inputs the recording has not seen (default: such runs end with an error naming the closest recorded input)' },
  { key: 'selfHostedEnterprise', env: 'HANGAR_SELF_HOSTED_ENTERPRISE', flag: 'self-hosted-enterprise', kind: 'boolean', default: true, help: 'whether workspaces not named in the fixtures may use listeners' },
  { key: 'auth', env: 'HANGAR_AUTH', flag: 'auth', kind: 'string', default: 'on', help: 'off: accept requests without credentials everywhere' },
  { key: 'agentAuth', env: 'HANGAR_AGENT_AUTH', flag: 'agent-auth', kind: 'string', default: 'api-key', help: 'the agent server\'s credentials: api-key (any key, or one of HANGAR_API_KEYS), none (as langgraph dev), or users (Bearer tokens of HANGAR_AGENT_USERS; each sees only its own threads); HANGAR_AUTH=off admits everyone whatever this says' },
  { key: 'agentUsers', env: 'HANGAR_AGENT_USERS', flag: 'agent-users', kind: 'string', default: '', help: 'with --agent-auth users: a JSON file listing the users, [{"token": "…", "identity": "alice", "permissions": ["threads:*", "store:*"]}]; a user without permissions may do everything' },
  { key: 'heartbeatMs', env: 'HANGAR_HEARTBEAT_MS', flag: 'heartbeat-ms', kind: 'integer', default: 5000, help: 'interval of ": heartbeat" comments on event streams (0: none)' },
  { key: 'sseEndEvent', env: 'HANGAR_SSE_END_EVENT', flag: 'sse-end-event', kind: 'boolean', default: false, help: 'end each run stream with an "end" event' },
  { key: 'adminToken', env: 'HANGAR_ADMIN_TOKEN', flag: 'admin-token', kind: 'string', default: '', secret: true, help: 'when set, the /_hangar admin API requires it (X-Hangar-Admin-Token or Bearer)' },
  { key: 'feedbackTtl', env: 'HANGAR_FEEDBACK_TTL', flag: 'feedback-ttl', kind: 'duration', default: 3 * 3600, help: 'lifetime of feedback tokens: 3h, 90m, 600s or seconds' },
  { key: 'journalSize', env: 'HANGAR_JOURNAL_SIZE', flag: 'journal-size', kind: 'integer', default: 1000, help: 'requests kept by the request journal (GET /_hangar/requests); 0 keeps none' },
  { key: 'corsOrigins', env: 'HANGAR_CORS_ORIGINS', flag: 'cors-origins', kind: 'list', default: ['*'], help: 'origins browsers may call from: * for any, or a comma-separated list; "none" sends no CORS headers' },
  { key: 'logFormat', env: 'HANGAR_LOG_FORMAT', flag: 'log-format', kind: 'string', default: 'auto', help: 'json, pretty, or auto: pretty on a terminal, JSON otherwise' },
  { key: 'webhookLoopback', env: 'HANGAR_WEBHOOK_LOOPBACK', flag: 'webhook-loopback', kind: 'boolean', default: true, help: 'runs may name webhooks on this machine (localhost, 127.0.0.1, ::1, relative URLs); false refuses them with 422 as the hosted server does (cloud metadata endpoints are refused either way)' },
  { key: 'registryUrl', env: 'HANGAR_REGISTRY_URL', flag: 'registry-url', kind: 'string', default: 'localhost:5000/hangar', help: 'the registry POST /v2/deployments/{id}/push-token names for langgraph deploy\'s local builds (a registry:2 container on localhost:5000 takes the pushes)' },
]

/** A setting hangar cannot start with; its message is one line naming the setting and what is accepted. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

export const defaultConfig = (): Config =>
  // A list default is copied (callers may change theirs); a scalar needs no copy.
  Object.fromEntries(SETTINGS.map((s) => [s.key, typeof s.default === 'object' && s.default !== null ? structuredClone(s.default) : s.default])) as Config

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
  const flags = readFlags(argv)
  const config = defaultConfig() as Record<string, unknown>
  for (const s of SETTINGS) {
    const raw = flags.values.get(s.key) ?? env[s.env]
    if (raw === undefined || raw === '') continue
    const value = typeof raw === 'boolean' ? raw : convert(s.kind, raw.trim())
    const schema = Config.properties[s.key] as TSchema
    if (value === undefined || settingChecks[s.key](value, [], []) === INVALID) {
      throw new ConfigError(`invalid setting ${settingName(s.key)}: ${describe(s, schema)}, got ${JSON.stringify(raw)}`)
    }
    config[s.key] = s.key === 'defaultTenant' ? (value as string).toLowerCase() : value
  }
  return { config: config as Config, help: flags.help, version: flags.version }
}

const SEE_HELP = '(hangar --help lists every option)'

/**
 * The command line, read as people write it (POSIX getopt's way rather than node's parseArgs', which
 * refuses `--port -1` as "ambiguous"): `--flag value` and `--flag=value`, where the value may start
 * with one dash (`--port -1`) but not two (`--port --db x` is a missing value); a boolean setting
 * also takes a bare `--flag`, `--no-flag`, or a word after it (`--flag false`, `--flag=off`).
 */
function readFlags(argv: readonly string[]): { values: Map<keyof Config, string | boolean>; help: boolean; version: boolean } {
  const values = new Map<keyof Config, string | boolean>()
  const result = { values, help: false, version: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (!arg.startsWith('--') || arg === '--') {
      const what = arg.startsWith('-') && arg.length > 1 ? 'unknown option' : 'unexpected argument'
      throw new ConfigError(`${what} '${arg}': hangar takes only --options ${SEE_HELP}`)
    }
    const equals = arg.indexOf('=')
    const name = arg.slice(2, equals < 0 ? undefined : equals)
    const inline = equals < 0 ? undefined : arg.slice(equals + 1)
    const next = argv[i + 1]
    if (name === 'help' || name === 'version') {
      if (inline !== undefined) throw new ConfigError(`option --${name} takes no value ${SEE_HELP}`)
      result[name] = true
      continue
    }
    const setting = SETTINGS.find((s) => s.flag === name)
    const negated = setting ? undefined : SETTINGS.find((s) => s.kind === 'boolean' && `no-${s.flag}` === name)
    if (negated) {
      if (inline !== undefined) throw new ConfigError(`option --${name} takes no value ${SEE_HELP}`)
      values.set(negated.key, false)
    } else if (!setting) {
      const known = [...SETTINGS.flatMap((s) => (s.kind === 'boolean' ? [s.flag, `no-${s.flag}`] : [s.flag])), 'help', 'version']
      const near = didYouMean(name, known)
      throw new ConfigError(`unknown option '--${name}'${near ? `; did you mean --${near}?` : ''} ${SEE_HELP}`)
    } else if (setting.kind === 'boolean') {
      // hangar takes no positional arguments, so a word after a boolean flag can only be its value.
      const value = inline ?? (next !== undefined && !next.startsWith('-') ? argv[++i] : true)
      values.set(setting.key, value)
    } else {
      const value = inline ?? (next !== undefined && !next.startsWith('--') ? argv[++i] : undefined)
      if (value === undefined) throw new ConfigError(`option --${name} needs a value: --${name} <value> ${SEE_HELP}`)
      values.set(setting.key, value)
    }
  }
  return result
}

/**
 * Checks settings given from code (`buildApp({config})`, `startHangar({config})`) against the same
 * schema the environment and the command line are read into: an unknown key (with the likely one it
 * misspells), a value of the wrong type or out of range, or `undefined` (leave a setting out to take
 * its default) throws a ConfigError naming the setting and what it accepts.
 */
export function checkConfig(partial: unknown = {}): void {
  if (typeof partial !== 'object' || partial === null || Array.isArray(partial)) {
    throw new ConfigError(`config: expected an object of settings, got ${shown(partial)}`)
  }
  const keys = SETTINGS.map((s) => s.key)
  for (const [key, value] of Object.entries(partial)) {
    const s = SETTINGS.find((setting) => setting.key === key)
    if (!s) {
      const near = didYouMean(key, keys)
      throw new ConfigError(`unknown setting '${key}': ${near ? `did you mean '${near}'?` : `the settings are ${keys.join(', ')}`}`)
    }
    const schema = Config.properties[s.key] as TSchema
    const url = s.kind !== 'url' || value === '' || (typeof value === 'string' && convert('url', value) !== undefined)
    if (!hasType(schema, value) || compile(schema)(value, [], []) === INVALID || !url) {
      throw new ConfigError(`invalid setting ${key}: ${describe(s, schema, 'code')}, got ${shown(value)}`)
    }
  }
}

/** The JavaScript type the schema declares (the validator alone would coerce `'8123'` to 8123). */
function hasType(schema: TSchema, value: unknown): boolean {
  switch (schema.type) {
    case 'integer':
      return typeof value === 'number'
    case 'array':
      return Array.isArray(value) && value.every((item) => hasType(schema.items as TSchema, item))
    default:
      return typeof value === schema.type
  }
}

const shown = (value: unknown): string =>
  value === undefined ? 'undefined (leave a setting out to take its default)' : typeof value === 'function' ? 'a function' : JSON.stringify(value) ?? String(value)

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

function describe(s: Setting, schema: TSchema, from: 'text' | 'code' = 'text'): string {
  if (s.kind === 'boolean') return from === 'code' ? 'expected true or false' : 'expected true or false (or 1/0, yes/no, on/off)'
  if (s.kind === 'url') return from === 'code' ? "expected an http(s) URL or ''" : 'expected an http(s) URL'
  if (s.kind === 'duration') {
    return from === 'code'
      ? `expected a whole number of seconds of at least ${schema.minimum}`
      : 'expected a duration such as 3h, 90m, 600s or a number of seconds (at least 1)'
  }
  if (s.kind === 'list' && from === 'code') return 'expected an array of non-empty strings'
  if (s.kind === 'integer') {
    const max = schema.maximum === undefined ? '' : ` and ${schema.maximum}`
    return max ? `expected an integer between ${schema.minimum}${max}` : `expected an integer of at least ${schema.minimum}`
  }
  if (schema.enum) return `expected one of ${(schema.enum as string[]).join(', ')}`
  if (schema.format === 'uuid') return 'expected a UUID'
  if (s.key === 'replaySpeed') return 'expected realtime, instant, or a number (4: four times faster)'
  if (from === 'code') return schema.minLength === undefined ? 'expected a string' : 'expected a non-empty string'
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
    '       hangar record --upstream <agent server URL> --out <dir>   (a recording proxy; hangar record --help)',
    '',
    'Every option can also be set with its environment variable; a flag wins over the variable.',
    'A yes/no option takes a bare --flag, --no-flag, or a value: --flag false (true/false, 1/0, yes/no, on/off).',
    '',
    `  ${'flag'.padEnd(28)} ${'environment variable'.padEnd(24)} meaning`,
    ...rows,
    `  ${'--help'.padEnd(28)} ${''.padEnd(24)} print this help`,
    `  ${'--version'.padEnd(28)} ${''.padEnd(24)} print the version`,
  ].join('\n')
}
