// `hangar record --upstream <agent server URL> --out <dir> [--api-key <key>] [--port 8123] [--host 127.0.0.1]`:
// reads its options (a bad one ends the process with one line and exit code 2), starts the
// recording proxy (proxy.ts) and keeps it until a signal.

import { parseArgs } from 'node:util'
import closeWithGrace from 'close-with-grace'
import { buildRecorder } from './proxy.js'

export const RECORD_HELP = [
  'Usage: hangar record --upstream <agent server URL> --out <dir> [options]',
  '',
  'Serves as a proxy to a real agent server and records every exchange into <dir>.',
  'Point your app or SDK at hangar instead of the server; nothing secret is written.',
  'When it stops (Ctrl-C), it reads each graph\'s drawing and each thread\'s history from the',
  'server and writes <dir>/replay/<graph>.json; then `hangar --replay <dir>` serves it offline.',
  '',
  '  --upstream <url>     the agent server (e.g. http://localhost:2024 for `langgraph dev`)',
  '  --out <dir>          the recording directory (created if needed; exchanges are appended)',
  '  --api-key <key>      sent to the upstream as x-api-key when a request carries no key   [env HANGAR_UPSTREAM_API_KEY]',
  '  --port <n>           where hangar listens   [default: 8123]',
  '  --host <host>        [default: 127.0.0.1]',
  '  --help               print this help',
].join('\n')

interface RecordOptions {
  upstream: string
  out: string
  apiKey?: string
  port: number
  host: string
}

/** The options, or a one-line error. */
export function recordOptions(argv: readonly string[], env: NodeJS.ProcessEnv): RecordOptions | 'help' {
  let values
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        upstream: { type: 'string' },
        out: { type: 'string' },
        'api-key': { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values
  } catch (error) {
    throw new RecordOptionError(`${(error as Error).message} (hangar record --help lists the options)`)
  }
  if (values.help) return 'help'
  if (!values.upstream) throw new RecordOptionError('--upstream is required: the URL of the agent server to record')
  if (!values.out) throw new RecordOptionError('--out is required: the directory to record into')
  let url: URL
  try {
    url = new URL(values.upstream)
  } catch {
    throw new RecordOptionError(`--upstream: not a URL: ${JSON.stringify(values.upstream)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RecordOptionError(`--upstream: an http or https URL, got ${JSON.stringify(values.upstream)}`)
  const port = values.port === undefined ? 8123 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RecordOptionError(`--port: an integer from 0 to 65535, got ${JSON.stringify(values.port)}`)
  const apiKey = values['api-key'] ?? env.HANGAR_UPSTREAM_API_KEY
  return { upstream: values.upstream, out: values.out, port, host: values.host ?? '127.0.0.1', ...(apiKey ? { apiKey } : {}) }
}

export class RecordOptionError extends Error {}

export async function record(argv: readonly string[]): Promise<void> {
  let options
  try {
    options = recordOptions(argv, process.env)
  } catch (error) {
    if (!(error instanceof RecordOptionError)) throw error
    process.stderr.write(`hangar record: ${error.message}\n`)
    process.exit(2)
  }
  if (options === 'help') {
    process.stdout.write(`${RECORD_HELP}\n`)
    process.exit(0)
  }
  const app = buildRecorder(options)
  // Stopping reads the upstream (the JS dev server takes seconds to derive a graph's schemas the first time).
  closeWithGrace({ delay: 400_000 }, async () => {
    await app.close()
  })
  try {
    await app.listen({ port: options.port, host: options.host })
  } catch (error) {
    process.stderr.write(`hangar record: cannot listen on ${options.host}:${options.port}: ${(error as Error).message}\n`)
    process.exit(1)
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  app.log.info(`hangar recording ${options.upstream} on http://${options.host}:${port} into ${options.out}`)
}
