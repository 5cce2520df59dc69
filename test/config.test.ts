import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { BUNDLED_FIXTURES, checkConfig, ConfigError, DEFAULT_TENANT, defaultConfig, helpText, loadConfig, SETTINGS, visibleSettings } from '../src/config.js'
import { startHangar } from '../src/embed.js'
import { FixtureError, loadFixtures } from '../src/fixtures.js'
import { loadAgentUsers } from '../src/domain/agent-users.js'
import { closeDatabase, DatabaseError, openDatabase } from '../src/store/db.js'
import { MIGRATIONS } from '../src/store/migrations.js'
import { clientFor, makeApp, SHIPPED_GRAPHS } from './helpers.js'

t.test('with nothing set, every setting has its documented default', async (t) => {
  const { config } = loadConfig([], {})
  t.same(config, {
    port: 8123,
    host: '127.0.0.1',
    db: './.hangar/hangar.db',
    apiKeys: [],
    defaultTenant: DEFAULT_TENANT,
    requireTenant: false,
    revisionSpeed: 'fast',
    logLevel: 'info',
    bodyLimit: 1048576,
    tickMs: 250,
    publicUrl: '',
    fixtures: BUNDLED_FIXTURES,
    graphs: '',
    replay: '',
    replaySpeed: 'realtime',
    replayFallback: '',
    selfHostedEnterprise: true,
    auth: 'on',
    agentAuth: 'api-key',
    agentUsers: '',
    heartbeatMs: 5000,
    sseEndEvent: false,
    feedbackTtl: 10800,
    adminToken: '',
    journalSize: 1000,
    corsOrigins: ['*'],
    logFormat: 'auto',
    webhookLoopback: true,
    registryUrl: 'localhost:5000/hangar',
  })
  t.same(config, defaultConfig())
})

t.test('environment variables set every setting, parsed into their types', async (t) => {
  const { config } = loadConfig([], {
    PORT: '9000', HOST: '0.0.0.0', HANGAR_DB: ':memory:', HANGAR_API_KEYS: 'a, b,,c',
    HANGAR_DEFAULT_TENANT: '11111111-1111-4111-8111-11111111111A', HANGAR_REQUIRE_TENANT: 'yes',
    HANGAR_REVISION_SPEED: 'poll', HANGAR_LOG_LEVEL: 'debug', HANGAR_BODY_LIMIT: '2048', HANGAR_TICK_MS: '50',
    HANGAR_PUBLIC_URL: 'https://hangar.example.com:8443/', HANGAR_FIXTURES: '/srv/fixtures', HANGAR_GRAPHS: '/srv/graphs', HANGAR_SELF_HOSTED_ENTERPRISE: 'off',
    HANGAR_REPLAY: '/srv/recording', HANGAR_REPLAY_SPEED: '2.5', HANGAR_REPLAY_FALLBACK: 'agent',
    HANGAR_AUTH: 'off', HANGAR_HEARTBEAT_MS: '0', HANGAR_SSE_END_EVENT: 'true', HANGAR_FEEDBACK_TTL: '90m', HANGAR_ADMIN_TOKEN: 'adm',
    HANGAR_JOURNAL_SIZE: '50', HANGAR_CORS_ORIGINS: 'http://localhost:3000, https://app.example.com', HANGAR_LOG_FORMAT: 'json',
    HANGAR_WEBHOOK_LOOPBACK: 'no', HANGAR_AGENT_AUTH: 'users', HANGAR_AGENT_USERS: '/srv/users.json',
    HANGAR_REGISTRY_URL: 'registry.example.com:5000/builds',
  })
  t.same(config, {
    port: 9000, host: '0.0.0.0', db: ':memory:', apiKeys: ['a', 'b', 'c'],
    defaultTenant: '11111111-1111-4111-8111-11111111111a', requireTenant: true, revisionSpeed: 'poll',
    logLevel: 'debug', bodyLimit: 2048, tickMs: 50,
    publicUrl: 'https://hangar.example.com:8443', fixtures: '/srv/fixtures', graphs: '/srv/graphs', selfHostedEnterprise: false,
    replay: '/srv/recording', replaySpeed: '2.5', replayFallback: 'agent',
    auth: 'off', heartbeatMs: 0, sseEndEvent: true, feedbackTtl: 5400, adminToken: 'adm',
    journalSize: 50, corsOrigins: ['http://localhost:3000', 'https://app.example.com'], logFormat: 'json',
    webhookLoopback: false, agentAuth: 'users', agentUsers: '/srv/users.json',
    registryUrl: 'registry.example.com:5000/builds',
  })
})

t.test('CLI flags win over environment variables, in both --flag value and --flag=value forms', async (t) => {
  const { config } = loadConfig(['--port', '7000', '--db=/tmp/x.db', '--speed', 'instant', '--no-require-tenant'], {
    PORT: '9000', HANGAR_DB: 'env.db', HANGAR_REQUIRE_TENANT: 'true',
  })
  t.equal(config.port, 7000)
  t.equal(config.db, '/tmp/x.db')
  t.equal(config.revisionSpeed, 'instant')
  t.equal(config.requireTenant, false)
  t.equal(loadConfig(['--require-tenant'], {}).config.requireTenant, true)
  t.equal(loadConfig([], { PORT: '' }).config.port, 8123, 'an empty variable counts as unset')
})

t.test('an invalid setting stops with one line naming the setting', async (t) => {
  const cases: [string[], NodeJS.ProcessEnv, string][] = [
    [['--port', 'abc'], {}, 'invalid setting PORT (--port): expected an integer between 0 and 65535, got "abc"'],
    [[], { PORT: '70000' }, 'invalid setting PORT (--port): expected an integer between 0 and 65535, got "70000"'],
    [[], { HANGAR_REVISION_SPEED: 'warp' }, 'invalid setting HANGAR_REVISION_SPEED (--speed): expected one of fast, realistic, instant, poll, manual, got "warp"'],
    [['--replay-speed', 'fast'], {}, 'invalid setting HANGAR_REPLAY_SPEED (--replay-speed): expected realtime, instant, or a number (4: four times faster), got "fast"'],
    [[], { HANGAR_REQUIRE_TENANT: 'maybe' }, 'invalid setting HANGAR_REQUIRE_TENANT (--require-tenant): expected true or false (or 1/0, yes/no, on/off), got "maybe"'],
    [['--default-tenant', 'acme'], {}, 'invalid setting HANGAR_DEFAULT_TENANT (--default-tenant): expected a UUID, got "acme"'],
    [[], { HANGAR_TICK_MS: '1' }, 'invalid setting HANGAR_TICK_MS (--tick-ms): expected an integer of at least 10, got "1"'],
    [[], { HANGAR_FEEDBACK_TTL: 'soon' }, 'invalid setting HANGAR_FEEDBACK_TTL (--feedback-ttl): expected a duration such as 3h, 90m, 600s or a number of seconds (at least 1), got "soon"'],
    [[], { HANGAR_PUBLIC_URL: 'ftp://x' }, 'invalid setting HANGAR_PUBLIC_URL (--public-url): expected an http(s) URL, got "ftp://x"'],
    [['--agent-auth', 'oauth'], {}, 'invalid setting HANGAR_AGENT_AUTH (--agent-auth): expected one of api-key, none, users, got "oauth"'],
    [['--colour'], {}, "unknown option '--colour' (hangar --help lists every option)"],
    [['--port'], {}, "option --port needs a value: --port <value> (hangar --help lists every option)"],
  ]
  for (const [argv, env, message] of cases) {
    t.throws(() => loadConfig(argv, env), new ConfigError(message), message)
    try {
      loadConfig(argv, env)
    } catch (error) {
      t.notMatch((error as Error).message, /\n/, 'one line')
    }
  }
})

t.test('--help lists every setting with its flag, environment variable and default', async (t) => {
  const help = helpText()
  for (const s of SETTINGS) {
    t.match(help, `--${s.flag}`)
    t.match(help, s.env)
  }
  t.match(help, '[default: 8123]')
  t.equal(loadConfig(['--help'], {}).help, true)
  t.equal(loadConfig(['--version'], {}).version, true)
})

t.test('the settings /info shows hide API keys and the admin token, and show whether they are set', async (t) => {
  // Secrets no path or generated name could hold by chance (a temporary directory's name once held "k2").
  const shown = visibleSettings({ ...defaultConfig(), apiKeys: ['secret-key-one', 'secret-key-two'], adminToken: 'secret-sesame', port: 0 })
  t.same(Object.keys(shown), SETTINGS.map((s) => s.env), 'every setting, by its environment variable')
  t.same(shown.HANGAR_API_KEYS, ['<hidden>', '<hidden>'])
  t.equal(shown.HANGAR_ADMIN_TOKEN, '<hidden>')
  t.equal(shown.PORT, 0)
  t.notMatch(JSON.stringify(shown), /secret-key-one|secret-key-two|secret-sesame/)
  const unset = visibleSettings(defaultConfig())
  t.same([unset.HANGAR_API_KEYS, unset.HANGAR_ADMIN_TOKEN], [[], ''], 'unset secrets show as unset')
})

/** The message a call throws, to compare as one exact line. */
function thrown(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    return (error as Error).message
  }
  return '(nothing thrown)'
}

t.test('a value option takes a value that starts with a dash, so --port -1 reports the range, not "ambiguous"', async (t) => {
  const range = 'invalid setting PORT (--port): expected an integer between 0 and 65535, got "-1"'
  t.equal(thrown(() => loadConfig(['--port', '-1'], {})), range)
  t.equal(thrown(() => loadConfig(['--port=-1'], {})), range)
  t.equal(loadConfig(['--admin-token', '-s3cret'], {}).config.adminToken, '-s3cret')
  t.equal(thrown(() => loadConfig(['--port', '--db', 'x.db'], {})), 'option --port needs a value: --port <value> (hangar --help lists every option)',
    'a value that starts with two dashes is the next option: the value is missing')
  t.equal(thrown(() => loadConfig(['--prot', '1'], {})), "unknown option '--prot'; did you mean --port? (hangar --help lists every option)")
  t.equal(thrown(() => loadConfig(['8123'], {})), "unexpected argument '8123': hangar takes only --options (hangar --help lists every option)")
})

t.test('a yes/no option takes a bare --flag, --no-flag, or a value: true/false, 1/0, yes/no, on/off', async (t) => {
  const she = (argv: string[]) => loadConfig(argv, {}).config.selfHostedEnterprise
  for (const word of ['false', '0', 'no', 'off', 'FALSE']) {
    t.equal(she(['--self-hosted-enterprise', word]), false, `--self-hosted-enterprise ${word}`)
    t.equal(she([`--self-hosted-enterprise=${word}`]), false, `--self-hosted-enterprise=${word}`)
  }
  for (const word of ['true', '1', 'yes', 'on']) t.equal(loadConfig(['--require-tenant', word], {}).config.requireTenant, true, word)
  t.equal(she(['--no-self-hosted-enterprise']), false)
  t.equal(she(['--self-hosted-enterprise']), true)
  const bare = loadConfig(['--require-tenant', '--port', '0'], {}).config
  t.same([bare.requireTenant, bare.port], [true, 0], 'a bare flag followed by another option')
  t.equal(loadConfig(['--no-require-tenant'], { HANGAR_REQUIRE_TENANT: 'true' }).config.requireTenant, false, '--no-flag wins over the variable')
  t.equal(thrown(() => loadConfig(['--self-hosted-enterprise', 'maybe'], {})),
    'invalid setting HANGAR_SELF_HOSTED_ENTERPRISE (--self-hosted-enterprise): expected true or false (or 1/0, yes/no, on/off), got "maybe"')
  t.match(helpText(), '--no-flag', '--help says how yes/no options are written')
})

t.test('settings given from code are checked against the same schema: one line naming the setting', async (t) => {
  const cases: [unknown, string][] = [
    [{ revisonSpeed: 'instant' }, "unknown setting 'revisonSpeed': did you mean 'revisionSpeed'?"],
    [{ colour: 'blue' }, `unknown setting 'colour': the settings are ${SETTINGS.map((s) => s.key).join(', ')}`],
    [{ revisionSpeed: 'warp' }, 'invalid setting revisionSpeed: expected one of fast, realistic, instant, poll, manual, got "warp"'],
    [{ port: '8123' }, 'invalid setting port: expected an integer between 0 and 65535, got "8123"'],
    [{ port: 70000 }, 'invalid setting port: expected an integer between 0 and 65535, got 70000'],
    [{ apiKeys: 'k' }, 'invalid setting apiKeys: expected an array of non-empty strings, got "k"'],
    [{ selfHostedEnterprise: 'false' }, 'invalid setting selfHostedEnterprise: expected true or false, got "false"'],
    [{ feedbackTtl: 0 }, 'invalid setting feedbackTtl: expected a whole number of seconds of at least 1, got 0'],
    [{ publicUrl: 'ftp://x' }, "invalid setting publicUrl: expected an http(s) URL or '', got \"ftp://x\""],
    [{ defaultTenant: 'acme' }, 'invalid setting defaultTenant: expected a UUID, got "acme"'],
    [{ db: undefined }, 'invalid setting db: expected a non-empty string, got undefined (leave a setting out to take its default)'],
    ['fast', 'config: expected an object of settings, got "fast"'],
  ]
  for (const [config, message] of cases) t.equal(thrown(() => checkConfig(config)), message, message)
  t.doesNotThrow(() => checkConfig({ revisionSpeed: 'instant', apiKeys: ['k'], publicUrl: 'http://localhost:1', port: 0, db: ':memory:' }))
  t.doesNotThrow(() => checkConfig(undefined))
  t.doesNotThrow(() => checkConfig(defaultConfig()), 'every default passes')

  t.throws(() => buildApp({ config: { db: ':memory:', revisonSpeed: 'instant' } as object }), new ConfigError("unknown setting 'revisonSpeed': did you mean 'revisionSpeed'?"), 'buildApp checks its config')
  await t.rejects(startHangar({ config: { revisionSpeed: 'instnat' as 'instant' } }), { name: 'ConfigError', message: /^invalid setting revisionSpeed: expected one of/ }, 'and so does startHangar')
})

t.test('a database file hangar cannot use is one line naming the file and why', async (t) => {
  const dir = t.testdir({ file: 'plain text', 'text.db': 'not a database, just text that is long enough to hold a header of one hundred bytes or so, padded out......' })
  t.equal(thrown(() => openDatabase(join(dir, 'file', 'x.db'))), `the database ${join(dir, 'file', 'x.db')}: ${join(dir, 'file')} is not a directory`)
  t.equal(thrown(() => openDatabase(join(dir, 'text.db'))), `the database ${join(dir, 'text.db')} is not a SQLite database (give a new file name to start an empty one)`)
  t.notOk(existsSync(join(dir, 'text.db-lock')), 'nothing was written beside a file that is not a database')
  t.equal(thrown(() => openDatabase(dir)), `the database ${dir}: it is a directory, not a file`)
  const newer = join(dir, 'newer.db')
  const raw = new Database(newer)
  raw.pragma(`user_version = ${MIGRATIONS.length + 1}`)
  raw.close()
  t.equal(thrown(() => openDatabase(newer)),
    `the database ${newer} was written by a newer hangar (schema ${MIGRATIONS.length + 1}; this one knows ${MIGRATIONS.length}): start that hangar, or give this one another file`)
  t.type((() => { try { openDatabase(newer) } catch (error) { return error } })(), DatabaseError)
})

t.test('a database path under /proc is refused at once instead of retrying forever', { skip: existsSync('/proc/self') ? false : 'no /proc here' }, async (t) => {
  t.equal(thrown(() => openDatabase('/proc/hangar-nope/x.db')), 'the database /proc/hangar-nope/x.db: cannot create the directory /proc/hangar-nope (no such file or directory)')
})

t.test('one database file, one hangar: a second is refused until the first closes', async (t) => {
  const path = join(t.testdir(), 'one.db')
  const first = openDatabase(path)
  t.equal(thrown(() => openDatabase(path)), `the database ${path} is in use by another hangar in this process (pid ${process.pid}): close that one first`)
  const reader = new Database(path, { readonly: true })
  t.equal(reader.pragma('user_version', { simple: true }), MIGRATIONS.length, 'other tools can still read the database meanwhile')
  reader.close()
  closeDatabase(first)
  const second = openDatabase(path)
  t.ok(second.open, 'once the first is closed, the file opens again')
  closeDatabase(second)
})

t.test('a fixtures directory replaces the kinds it provides; the bundled fixtures give the rest', async (t) => {
  const mine = '11111111-1111-4111-8111-111111111111'
  const dir = t.testdir({ 'workspaces.json': JSON.stringify([{ id: mine, name: 'mine', self_hosted_enterprise: false }]), 'README.md': 'notes' })
  const fixtures = loadFixtures(dir)
  const bundled = loadFixtures(BUNDLED_FIXTURES)
  t.same(fixtures.workspaces.map((w) => w.id), [mine], 'workspaces: the directory\'s')
  t.same(fixtures.providers, bundled.providers, 'OAuth providers: bundled')
  t.same(fixtures.integrations, bundled.integrations, 'integrations: bundled')
  t.equal(fixtures.graphsDir, join(BUNDLED_FIXTURES, 'graphs'), 'graphs: bundled')

  const { app, api } = await makeApp(t, { config: { fixtures: dir } })
  const graphs = (await api.post('/assistants/search', { limit: 100 })).body.map((a: any) => a.graph_id).sort()
  t.same(graphs, [...SHIPPED_GRAPHS], 'the bundled graphs still serve')
  t.equal((await api.get('/v2/auth/providers/github')).status, 200, 'and the bundled providers are seeded')
  const listeners = await clientFor(app, { 'x-api-key': 'k', 'x-tenant-id': mine }).get('/v2/listeners')
  t.equal(listeners.status, 403, 'the directory\'s workspace has its plan')

  const ownGraphs = t.testdir({ graphs: { 'echo.json': JSON.stringify({ graph_id: 'echo', state: { messages: 'messages' }, nodes: [{ name: 'n', steps: [{ reply: { text: '{{last_human}}' } }] }] }) } })
  t.equal(loadFixtures(ownGraphs).graphsDir, join(ownGraphs, 'graphs'), 'a graphs/ folder replaces the bundled graphs')
  t.same(loadFixtures(t.testdir({ 'oauth-providers.json': '[]' })).providers, [], 'an empty file means none of that kind')
})

t.test('a fixtures directory that is missing, provides nothing or holds a misspelled file stops start-up with one line', async (t) => {
  const missing = join(t.testdirName, 'nowhere')
  t.throws(() => loadFixtures(missing), new FixtureError(`the fixtures directory ${missing} does not exist`))
  const empty = t.testdir({ 'README.md': 'x' })
  t.throws(() => loadFixtures(empty), new FixtureError(`the fixtures directory ${empty} holds none of workspaces.json, oauth-providers.json, integrations.json or graphs/`))
  const typo = t.testdir({ 'workspace.json': '[]' })
  t.throws(() => loadFixtures(typo), new FixtureError(`fixture ${join(typo, 'workspace.json')}: not a file hangar reads (did you mean workspaces.json?)`))
})

t.test('the agent server\'s users file (--agent-users) is read with --agent-auth users; a bad one stops start-up with one line', async (t) => {
  const setting = 'HANGAR_AGENT_USERS (--agent-users)'
  const dir = t.testdir({
    'users.json': JSON.stringify([{ token: 'alice-token', identity: 'alice', permissions: ['threads:read', 'store:*', '*:search', '*'] }]),
    'typo.json': JSON.stringify([{ token: 'alice-token', identity: 'alice' }, { token: 'bob-token', identity: 'bob', permissions: ['threads:read', 'threads:write'] }]),
    'broken.json': '[{"token": ',
    'no-identity.json': JSON.stringify([{ token: 'x' }]),
    'empty.json': '[]',
    'twice.json': JSON.stringify([{ token: 'same', identity: 'alice' }, { token: 'same', identity: 'bob' }]),
  })
  const users = loadAgentUsers({ agentAuth: 'users', agentUsers: join(dir, 'users.json') })
  t.equal(users.byToken('alice-token')?.identity, 'alice', 'a listed token is its user')
  t.equal(users.byToken('bob-token'), undefined, 'an unlisted one is nobody')
  t.equal(loadAgentUsers({ agentAuth: 'api-key', agentUsers: join(dir, 'missing.json') }).byToken('alice-token'), undefined, 'the file is not read in another mode')

  const cases: [string, string][] = [
    ['', `${setting}: HANGAR_AGENT_AUTH=users needs a users file, [{"token": "…", "identity": "…"}]`],
    [join(dir, 'missing.json'), `${setting}: the users file ${join(dir, 'missing.json')} does not exist`],
    [join(dir, 'broken.json'), `${setting}: the users file ${join(dir, 'broken.json')} is not JSON: `],
    [join(dir, 'no-identity.json'), `${setting}: the users file ${join(dir, 'no-identity.json')}: [0].identity: Field required`],
    [join(dir, 'empty.json'), `${setting}: the users file ${join(dir, 'empty.json')}: (top level): `],
    [join(dir, 'twice.json'), `${setting}: the users file ${join(dir, 'twice.json')}: users 'alice' and 'bob' have the same token`],
    [join(dir, 'typo.json'), `${setting}: the users file ${join(dir, 'typo.json')}: [1].permissions: 'threads:write' is not a permission hangar knows; use resource:action`],
  ]
  for (const [file, message] of cases) {
    const error = t.throws(() => loadAgentUsers({ agentAuth: 'users', agentUsers: file })) as Error
    t.type(error, ConfigError, `${file || '(none)'}: a ConfigError`)
    t.ok(error.message.startsWith(message), `${file || '(none)'}: ${error.message}`)
    t.notMatch(error.message, /\n/, 'one line')
  }
  t.throws(() => buildApp({ config: { db: ':memory:', logLevel: 'silent', agentAuth: 'users' } }), ConfigError, 'buildApp reads the file, so a bad one stops it')
})
