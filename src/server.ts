#!/usr/bin/env node
// The process: read settings, build the app, listen, shut down with grace. Nothing else —
// except `hangar record …`, which runs the recording proxy instead (src/record/cli.ts).
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, helpText, loadConfig, settingName } from './config.js'
import { FixtureError } from './fixtures.js'
import { DatabaseError } from './store/db.js'
import { VERSION } from './version.js'

/**
 * A setting hangar cannot start with ends the process with one line naming it, and exit code 2.
 * Anything else is a bug of hangar's and keeps its stack.
 */
function stopOnBadSetting(error: unknown): never {
  const line = error instanceof ConfigError ? error.message
    : error instanceof DatabaseError ? `${settingName('db')}: ${error.message}`
      : error instanceof FixtureError ? `${settingName(error.setting)}: ${error.message}`
        : undefined
  if (line === undefined) throw error
  process.stderr.write(`hangar: ${line}\n`)
  process.exit(2)
}

/** hangar itself: the settings, the app, listening until a signal. */
async function serve() {
  let loaded
  try {
    loaded = loadConfig(process.argv.slice(2), process.env)
  } catch (error) {
    stopOnBadSetting(error)
  }
  if (loaded.help) {
    process.stdout.write(`${helpText()}\n`)
    process.exit(0)
  }
  if (loaded.version) {
    process.stdout.write(`${VERSION}\n`)
    process.exit(0)
  }

  let app
  try {
    app = buildApp({ config: loaded.config })
  } catch (error) {
    stopOnBadSetting(error)
  }

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })

  // Plugins and routes are registered here; a failure is a bug of hangar's, reported with its stack.
  await app.ready()
  try {
    await app.listen({ port: loaded.config.port, host: loaded.config.host })
  } catch (error) {
    process.stderr.write(`hangar: cannot listen on ${loaded.config.host}:${loaded.config.port}: ${(error as Error).message}\n`)
    process.exit(1)
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : loaded.config.port
  const host = loaded.config.host.includes(':') ? `[${loaded.config.host}]` : loaded.config.host
  // Scripts wait for this line (with --port 0 it is how they learn the port), so it is logged at
  // `info` even when the level is warn, error or fatal; only `silent` silences it.
  const announcer = app.log.level === 'silent' ? app.log : app.log.child({}, { level: 'info' })
  announcer.info(`hangar listening on http://${host}:${port}`)
}

if (process.argv[2] === 'record') await (await import('./record/cli.js')).record(process.argv.slice(3))
else await serve()
