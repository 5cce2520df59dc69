// Records what a running real JS agent server (@langchain/langgraph-api, `langgraphjs dev`) answers
// to the time-travel scenarios (test/time-travel/scenarios.ts) into
// test/fixtures/time-travel/real-server.json. A tool, not a test: run it by hand with
//
//   node --import=tsx test/time-travel/record.ts --url http://127.0.0.1:2124 --server-dir <dir>
//        [--out <file>] [--only fork-edit,interrupt,...]
//
// --server-dir is the directory the server runs from; the versions written into the fixture are
// read from its node_modules. The server must serve the graphs agent, approval, flaky and pipeline
// (see test/fixtures/time-travel/README.md). The SDK client is the repository's own
// (@langchain/langgraph-sdk), with no API key and no retries.

import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@langchain/langgraph-sdk'
import { runScenario, scenarioNames } from './scenarios.js'
import type { Transcript } from './script.js'

const args = process.argv.slice(2)
const option = (name: string, fallback = '') => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback
}
const url = option('url')
const serverDir = option('server-dir')
const out = option('out', fileURLToPath(new URL('../fixtures/time-travel/real-server.json', import.meta.url)))
const only = option('only').split(',').filter(Boolean)
if (!url || !serverDir) {
  console.error('usage: node --import=tsx test/time-travel/record.ts --url <server url> --server-dir <dir> [--out file] [--only a,b]')
  process.exit(2)
}

const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(join(serverDir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
const sdkVersion = (JSON.parse(readFileSync(fileURLToPath(new URL('../../node_modules/@langchain/langgraph-sdk/package.json', import.meta.url)), 'utf8')) as { version: string }).version

const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } })
const names = only.length > 0 ? only : scenarioNames
const unknown = names.filter((name) => !scenarioNames.includes(name))
if (unknown.length > 0) {
  console.error(`unknown scenarios: ${unknown.join(', ')} (known: ${scenarioNames.join(', ')})`)
  process.exit(2)
}

const recorded = new Date().toISOString()
const scenarios: Record<string, Transcript> = {}
for (const name of names) {
  const started = Date.now()
  scenarios[name] = await runScenario(name, client, (pending) => pending)
  console.log(`${name}: ${scenarios[name].length} steps in ${Date.now() - started} ms`)
}

// With --only, the other scenarios of an existing fixture are kept.
let previous: Record<string, Transcript> = {}
if (only.length > 0) {
  try {
    previous = (JSON.parse(readFileSync(out, 'utf8')) as { scenarios: Record<string, Transcript> }).scenarios
  } catch {
    previous = {}
  }
}
const fixture = {
  recorded,
  server: {
    '@langchain/langgraph-api': versionOf('@langchain/langgraph-api'),
    '@langchain/langgraph-cli': versionOf('@langchain/langgraph-cli'),
    '@langchain/langgraph': versionOf('@langchain/langgraph'),
    '@langchain/core': versionOf('@langchain/core'),
    '@langchain/langgraph-sdk (client)': sdkVersion,
    'node (recorder)': process.version,
  },
  scenarios: { ...previous, ...scenarios },
}
writeFileSync(out, `${JSON.stringify(fixture, null, 2)}\n`)
console.log(`wrote ${out}`)
