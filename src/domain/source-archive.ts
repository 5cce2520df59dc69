// What a remote build finds wrong with an uploaded source archive before it builds anything: the
// archive a deploy CLI uploads (a gzip tarball of the project) must hold the langgraph.json the
// revision names, that file must be a JSON object with graphs, and each graph that names a file
// must find it in the archive. A build of such a source fails, and the reason is the revision's
// `status_message` and an ERROR line of its build logs. The real builder's exact texts are not
// public; these name the file and the graph as its messages would.

import { posix } from 'node:path'
import { Parser, type ReadEntry } from 'tar'

/** The most of langgraph.json that is read (a real one is a few hundred bytes). */
const CONFIG_LIMIT = 1024 * 1024

const isGzip = (bytes: Uint8Array) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b

/** A path as the archive names it, without `./` or a leading slash. */
const normal = (path: string) => posix.normalize(path).replace(/^(\.\/)+/, '').replace(/^\/+/, '').replace(/\/+$/, '')

/** What the archive holds: its file paths, and the text of the one file asked for (if present). */
async function readArchive(bytes: Uint8Array, wanted: string): Promise<{ files: ReadonlySet<string>; text: string | null }> {
  const files = new Set<string>()
  let text: string | null = null
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        const path = normal(entry.path)
        if (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile') files.add(path)
        if (path !== wanted || entry.size > CONFIG_LIMIT) return entry.resume()
        const chunks: Buffer[] = []
        entry.on('data', (chunk: Buffer) => chunks.push(chunk))
        entry.on('end', () => (text = Buffer.concat(chunks).toString('utf8')))
      },
    })
    parser.on('error', reject)
    parser.on('end', resolve)
    parser.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  })
  return { files, text }
}

/** The file part of a graph entry (`./src/agent.ts` of `./src/agent.ts:graph`); null for a module path (`pkg.agent:graph`). */
function graphPath(spec: string): string | null {
  const path = spec.includes(':') ? spec.slice(0, spec.lastIndexOf(':')) : spec
  return path.startsWith('.') || path.includes('/') || /\.(m?[jt]sx?|py)$/.test(path) ? path : null
}

/**
 * Why a build of this uploaded source fails, or null when it would build. `configPath` is the
 * revision's `langgraph_config_path`, relative to the archive's root.
 */
export async function sourceArchiveProblem(bytes: Uint8Array, configPath: string): Promise<string | null> {
  if (!isGzip(bytes)) return 'The uploaded source is not a gzip-compressed tar archive.'
  const wanted = normal(configPath)
  let archive: Awaited<ReturnType<typeof readArchive>>
  try {
    archive = await readArchive(bytes, wanted)
  } catch (error) {
    return `The uploaded source could not be unpacked: ${(error as Error).message}`
  }
  if (archive.text === null) {
    return archive.files.has(wanted)
      ? `${configPath} in the uploaded source is larger than ${CONFIG_LIMIT} bytes.`
      : `Could not find ${configPath} in the uploaded source.`
  }
  let config: unknown
  try {
    config = JSON.parse(archive.text)
  } catch (error) {
    return `${configPath} is not valid JSON: ${(error as Error).message}`
  }
  const graphs = (config as { graphs?: unknown } | null)?.graphs
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return `${configPath} must hold a JSON object.`
  if (typeof graphs !== 'object' || graphs === null || Array.isArray(graphs) || Object.keys(graphs).length === 0) {
    return `${configPath} defines no graphs: add at least one under "graphs".`
  }
  const configDir = posix.dirname(wanted)
  for (const [name, entry] of Object.entries(graphs)) {
    const spec = typeof entry === 'string' ? entry : (entry as { path?: unknown } | null)?.path
    if (typeof spec !== 'string') return `Graph '${name}' in ${configPath} names no file.`
    const path = graphPath(spec)
    if (path === null) continue
    const file = normal(posix.join(configDir, path))
    if (!archive.files.has(file)) return `Could not find the file of graph '${name}': ${path} (no ${file} in the uploaded source).`
  }
  return null
}
