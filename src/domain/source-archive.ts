// What an uploaded source archive holds, as a builder would find out: whether it is gzip data, the
// files of the tar archive inside (read with `tar`, streaming: a large archive is never held
// unpacked), and the text of its small JSON files, so that once a revision names its
// langgraph.json the build can check it: a JSON object with graphs, each graph's file in the
// archive. The real builder's exact texts are not public; these name the file and the graph as its
// messages would.

import { posix } from 'node:path'
import { Parser, type ReadEntry } from 'tar'

export interface ArchiveFacts {
  /** Whether it begins with gzip's magic bytes (1f 8b). */
  gzip: boolean
  /** Its first bytes in hex, to say what it is when it is not gzip. */
  head: string
  /** The regular files it unpacks to, relative to its root; null when it does not unpack. */
  files: string[] | null
  /** Why it does not unpack; null when it does. */
  error: string | null
  /** The text of each JSON file small enough to be a langgraph.json (by path); absent in archives read before it was kept. */
  configs?: Record<string, string>
}

/** The largest JSON file whose text is kept (a langgraph.json is a few hundred bytes). */
const CONFIG_LIMIT = 64 * 1024
/** The most JSON files whose text is kept. */
const CONFIG_COUNT = 50

const isGzip = (bytes: Uint8Array) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b

/** A path as the archive names it, without `./` or a leading slash. */
export const archivePath = (path: string) => posix.normalize(path).replace(/^(\.\/)+/, '').replace(/^\/+/, '').replace(/\/+$/, '')

const FILE_TYPES: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile'])

/** Why `tar` could not read the archive, in a builder's words rather than its error codes. */
function unpackError(error: NodeJS.ErrnoException): string {
  const message = error.message.replace(/^(zlib|TAR_[A-Z_]+): /, '')
  if (error.code?.startsWith('Z_') || /^zlib: /.test(error.message)) return `its gzip data is damaged (${message})`
  if (/checksum/i.test(error.message)) return 'it holds no tar archive (a header\'s checksum does not match)'
  if (error.code === 'TAR_BAD_ARCHIVE' || /unrecognized archive format/i.test(error.message)) return 'it holds no tar archive'
  return message
}

/** What the bytes hold: gzip or not, the files of the tar archive inside, and its small JSON files' text. */
export async function inspectArchive(bytes: Buffer): Promise<ArchiveFacts> {
  const head = bytes.subarray(0, 4).toString('hex').replace(/(..)(?=.)/g, '$1 ')
  if (!isGzip(bytes)) return { gzip: false, head, files: null, error: 'it is not gzip-compressed' }
  const files: string[] = []
  const configs: Record<string, string> = {}
  try {
    await new Promise<void>((resolve, reject) => {
      const parser = new Parser({
        strict: true,
        onReadEntry: (entry: ReadEntry) => {
          const path = archivePath(entry.path)
          if (FILE_TYPES.has(entry.type)) files.push(path)
          const keep = FILE_TYPES.has(entry.type) && path.endsWith('.json') && entry.size <= CONFIG_LIMIT && Object.keys(configs).length < CONFIG_COUNT
          if (!keep) return entry.resume()
          const chunks: Buffer[] = []
          entry.on('data', (chunk: Buffer) => chunks.push(chunk))
          entry.on('end', () => (configs[path] = Buffer.concat(chunks).toString('utf8')))
        },
      })
      parser.on('error', reject)
      parser.on('end', resolve)
      parser.end(bytes)
    })
  } catch (error) {
    return { gzip: true, head, files: null, error: unpackError(error as NodeJS.ErrnoException) }
  }
  if (files.length === 0) return { gzip: true, head, files: null, error: 'it holds no tar archive, or an empty one' }
  return { gzip: true, head, files, error: null, configs }
}

/** The file part of a graph entry (`./src/agent.ts` of `./src/agent.ts:graph`); null for a module path (`pkg.agent:graph`). */
function graphPath(spec: string): string | null {
  const path = spec.includes(':') ? spec.slice(0, spec.lastIndexOf(':')) : spec
  return path.startsWith('.') || path.includes('/') || /\.(m?[jt]sx?|py)$/.test(path) ? path : null
}

/**
 * Why the langgraph.json at `configPath` (its `text`) cannot be built from, with the archive's
 * `files`: not a JSON object, no graphs, or a graph whose file is not in the archive. Null when it can.
 */
export function configProblem(configPath: string, text: string, files: readonly string[]): string | null {
  let config: unknown
  try {
    config = JSON.parse(text)
  } catch (error) {
    return `${configPath} is not valid JSON: ${(error as Error).message}`
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return `${configPath} must hold a JSON object.`
  const graphs = (config as { graphs?: unknown }).graphs
  if (typeof graphs !== 'object' || graphs === null || Array.isArray(graphs) || Object.keys(graphs).length === 0) {
    return `${configPath} defines no graphs: add at least one under "graphs".`
  }
  const configDir = posix.dirname(archivePath(configPath))
  const present = new Set(files)
  for (const [name, entry] of Object.entries(graphs)) {
    const spec = typeof entry === 'string' ? entry : (entry as { path?: unknown } | null)?.path
    if (typeof spec !== 'string') return `Graph '${name}' in ${configPath} names no file.`
    const path = graphPath(spec)
    if (path === null) continue
    const file = archivePath(posix.join(configDir, path))
    if (!present.has(file)) return `Could not find the file of graph '${name}': ${path} (no ${file} in the uploaded source).`
  }
  return null
}
