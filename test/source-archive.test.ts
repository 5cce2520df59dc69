// What an uploaded source archive holds and what a build finds wrong with its langgraph.json, on
// archives made the way the deploy CLI makes them (a gzip tarball of the project directory, paths
// relative to its root). test/deployment-builds.test.ts covers the same through the HTTP API.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { create } from 'tar'
import { configProblem, inspectArchive } from '../src/domain/source-archive.js'

/** A gzip tarball of `files` (path → content), as `tar czf - .` in a directory holding them. */
async function tarball(t: Test, files: Record<string, string>, gzip = true): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'hangar-archive-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  const chunks: Buffer[] = []
  for await (const chunk of create({ gzip, cwd: dir, portable: true }, Object.keys(files))) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const config = (graphs: unknown) => JSON.stringify({ node_version: '20', graphs })

/** What a build finds wrong with the archive and its config at `configPath` (as the build's checks run: unpack, find, read). */
async function sourceArchiveProblem(bytes: Buffer, configPath: string): Promise<string | null> {
  const facts = await inspectArchive(bytes)
  if (!facts.gzip) return 'The uploaded source is not a gzip-compressed tar archive.'
  if (facts.files === null) return `The uploaded source could not be unpacked: ${facts.error}`
  const text = facts.configs?.[configPath]
  if (text === undefined) return `Could not find ${configPath} in the uploaded source.`
  return configProblem(configPath, text, facts.files)
}

t.test('a project whose config and graph files are all there builds', async (t) => {
  const bytes = await tarball(t, { 'langgraph.json': config({ agent: './src/agent.ts:graph' }), 'src/agent.ts': 'export const graph = 1' })
  t.equal(await sourceArchiveProblem(bytes, 'langgraph.json'), null)
  const nested = await tarball(t, { 'app/langgraph.json': config({ agent: './agent.ts:graph' }), 'app/agent.ts': '' })
  t.equal(await sourceArchiveProblem(nested, 'app/langgraph.json'), null, 'graph paths are relative to the config\'s directory')
  const python = await tarball(t, { 'langgraph.json': config({ agent: 'my_agent.graph:graph', other: { path: './o.py:g' } }), 'o.py': '' })
  t.equal(await sourceArchiveProblem(python, 'langgraph.json'), null, 'a module path is not a file to look for; {path} entries are')
})

t.test('each way a source fails to build says why', async (t) => {
  const cases: Array<[string, () => Promise<Buffer>, string, RegExp]> = [
    ['not gzip', async () => Buffer.from('PK\x03\x04 a zip file'), 'langgraph.json', /not a gzip-compressed tar archive/],
    ['gzip but not tar', async () => gzipSync(Buffer.from('just some text, not a tar header at all'.repeat(20))), 'langgraph.json', /could not be unpacked/],
    ['no config', () => tarball(t, { 'src/agent.ts': '' }), 'langgraph.json', /^Could not find langgraph.json in the uploaded source\.$/],
    ['config elsewhere', () => tarball(t, { 'langgraph.json': config({ a: './a.ts:g' }), 'a.ts': '' }), 'app/langgraph.json', /Could not find app\/langgraph.json/],
    ['not JSON', () => tarball(t, { 'langgraph.json': '{"graphs": ' }), 'langgraph.json', /^langgraph.json is not valid JSON: /],
    ['not an object', () => tarball(t, { 'langgraph.json': '[1]' }), 'langgraph.json', /must hold a JSON object/],
    ['no graphs', () => tarball(t, { 'langgraph.json': config({}) }), 'langgraph.json', /defines no graphs/],
    ['a missing graph file', () => tarball(t, { 'langgraph.json': config({ agent: './src/missing.ts:graph' }) }), 'langgraph.json',
      /^Could not find the file of graph 'agent': \.\/src\/missing\.ts \(no src\/missing\.ts in the uploaded source\)\.$/],
  ]
  for (const [name, make, path, expected] of cases) {
    t.match(await sourceArchiveProblem(await make(), path), expected, name)
  }
})
