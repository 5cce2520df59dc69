#!/usr/bin/env node
// The process: read settings, build the app, listen, shut down with grace. Nothing else.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, helpText, loadConfig } from './config.js'
import { VERSION } from './version.js'

let loaded
try {
  loaded = loadConfig(process.argv.slice(2), process.env)
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  process.stderr.write(`hangar: ${error.message}\n`)
  process.exit(2)
}
if (loaded.help) {
  process.stdout.write(`${helpText()}\n`)
  process.exit(0)
}
if (loaded.version) {
  process.stdout.write(`${VERSION}\n`)
  process.exit(0)
}

const app = buildApp({ config: loaded.config })
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'closing after an error')
  else app.log.info({ signal }, 'closing')
  await app.close()
})

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
