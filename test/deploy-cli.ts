// What the deployment tests share: a project archived the way `langgraph deploy` archives it (the
// CLI's own archiver), its client (the CLI's own HostBackendClient), and the upload it makes to a
// signed URL (the CLI's uploadToGcs is not exported: these are its exact headers).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Test } from 'tap'
import { createArchive } from '@langchain/langgraph-cli/dist/cli/utils/archive.mjs'
import { HostBackendClient } from '@langchain/langgraph-cli/dist/cli/utils/host-backend.mjs'
import { API_KEY } from './helpers.js'

export { HostBackendClient }
export { formatLogEntry } from '@langchain/langgraph-cli/dist/cli/utils/deploy-helpers.mjs'

/** The project files of a small agent (path → text); `langgraph.json` at the root unless told. */
export const PROJECT: Readonly<Record<string, string>> = {
  'langgraph.json': JSON.stringify({ dependencies: ['.'], graphs: { agent: './agent.py:graph' } }),
  'agent.py': 'from langgraph.graph import StateGraph\ngraph = None\n',
  'pyproject.toml': '[project]\nname = "agent"\nversion = "0.1.0"\n',
}

/** The `.tar.gz` the CLI would upload for these files, as bytes; `config` is the langgraph.json it is built around. */
export async function archiveOf(t: Test, files: Readonly<Record<string, string>> = PROJECT, config = 'langgraph.json'): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-project-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  const archive = await createArchive(join(dir, config))
  t.teardown(() => archive.cleanup())
  return readFileSync(archive.archivePath)
}

/** The upload `langgraph deploy` makes to the signed URL (its headers, no API key); `headers` override them. */
export function uploadTo(url: string, bytes: Buffer, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/gzip', 'Content-Length': String(bytes.length), 'X-Goog-Content-Length-Range': '0,209715200', ...headers },
    body: new Uint8Array(bytes),
  })
}

/** The CLI's client for the control plane of a hangar at `base`. */
export const cliFor = (base: string) => new HostBackendClient(base, API_KEY)
