// The parity report (docs/parity.md): every operation of the three real OpenAPI documents
// (test/reference/), whether hangar serves it (its routes, read from the app itself), which test
// files exercise it (found in their source: a path literal, or an official SDK call that sends that
// request), and what is known to differ or why it is not served. `npm run parity` writes the page;
// test/parity.test.ts fails when the page is stale, when a served operation has no test, or when an
// operation is neither served nor given a reason.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../../src/app.js'
import { Clock } from '../../src/clock.js'
import type { RouteOptions } from 'fastify'
import { copyPatterns } from '../../src/copies.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const PARITY_PAGE = join(ROOT, 'docs', 'parity.md')
const METHODS = ['get', 'post', 'put', 'patch', 'delete']

interface Document {
  file: string
  title: string
  /** Where hangar serves its paths (the feedback document's `/api/v1/…` also at the root). */
  prefixes: string[]
}

const DOCUMENTS: Document[] = [
  { file: 'agent-server-openapi.json', title: 'Agent server', prefixes: [''] },
  { file: 'control-plane-openapi.json', title: 'Control plane', prefixes: ['', '/api-host'] },
  { file: 'feedback-openapi.json', title: 'Feedback (tracing service)', prefixes: [''] },
]

/**
 * Why an operation is not served, or what is known to differ where it is (`METHOD path` as the
 * document writes it). Every operation hangar does not serve must have a line here.
 */
export const NOTES: Readonly<Record<string, string>> = {
  'GET /metrics': 'not served: hangar has no worker pool or queue whose figures it could report; a scrape would read invented numbers',
  'POST /store/namespaces': 'answers `{"namespaces": [...]}` as the JS server and the SDK read it; the document says a bare list',
  'GET /store/items': 'a missing item is `200 null`, as the JS server answers',
  'GET /assistants/{assistant_id}/subgraphs/{namespace}': 'a namespace that names no subgraph answers `{}`, as the JS server does',
  'POST /threads/prune': 'not on the JS dev server (404); hangar follows the document',
  'POST /v2/auth/providers/mcp-discover': 'discovery is simulated: no network; see README, Auth Service',
}

/** The official SDK calls that send each operation (`client.<group>.<method>(`), as the SDK's source builds them. */
const SDK_CALLS: Readonly<Record<string, readonly string[]>> = {
  'POST /assistants': ['assistants.create'],
  'POST /assistants/search': ['assistants.search'],
  'POST /assistants/count': ['assistants.count'],
  'GET /assistants/{assistant_id}': ['assistants.get'],
  'DELETE /assistants/{assistant_id}': ['assistants.delete'],
  'PATCH /assistants/{assistant_id}': ['assistants.update'],
  'GET /assistants/{assistant_id}/graph': ['assistants.getGraph'],
  'GET /assistants/{assistant_id}/subgraphs': ['assistants.getSubgraphs'],
  'GET /assistants/{assistant_id}/subgraphs/{namespace}': ['assistants.getSubgraphs'],
  'GET /assistants/{assistant_id}/schemas': ['assistants.getSchemas'],
  'POST /assistants/{assistant_id}/versions': ['assistants.getVersions'],
  'POST /assistants/{assistant_id}/latest': ['assistants.setLatest'],
  'POST /threads': ['threads.create'],
  'POST /threads/search': ['threads.search'],
  'POST /threads/count': ['threads.count'],
  'POST /threads/prune': ['threads.prune'],
  'GET /threads/{thread_id}/state': ['threads.getState'],
  'POST /threads/{thread_id}/state': ['threads.updateState'],
  'GET /threads/{thread_id}/state/{checkpoint_id}': ['threads.getState'],
  'POST /threads/{thread_id}/state/checkpoint': ['threads.getState'],
  'POST /threads/{thread_id}/history': ['threads.getHistory'],
  'POST /threads/{thread_id}/copy': ['threads.copy'],
  'GET /threads/{thread_id}': ['threads.get'],
  'DELETE /threads/{thread_id}': ['threads.delete'],
  'PATCH /threads/{thread_id}': ['threads.update'],
  'GET /threads/{thread_id}/stream': ['threads.joinStream'],
  'GET /threads/{thread_id}/runs': ['runs.list'],
  'POST /threads/{thread_id}/runs': ['runs.create'],
  'POST /threads/{thread_id}/runs/crons': ['crons.createForThread'],
  'POST /threads/{thread_id}/runs/stream': ['runs.stream'],
  'POST /threads/{thread_id}/runs/wait': ['runs.wait'],
  'GET /threads/{thread_id}/runs/{run_id}': ['runs.get'],
  'DELETE /threads/{thread_id}/runs/{run_id}': ['runs.delete'],
  'GET /threads/{thread_id}/runs/{run_id}/join': ['runs.join'],
  'GET /threads/{thread_id}/runs/{run_id}/stream': ['runs.joinStream'],
  'POST /threads/{thread_id}/runs/{run_id}/cancel': ['runs.cancel'],
  'POST /runs/crons': ['crons.create'],
  'POST /runs/crons/search': ['crons.search'],
  'POST /runs/crons/count': ['crons.count'],
  'PATCH /runs/crons/{cron_id}': ['crons.update'],
  'DELETE /runs/crons/{cron_id}': ['crons.delete'],
  'POST /runs/stream': ['runs.stream'],
  'POST /runs/cancel': ['runs.cancelMany'],
  'POST /runs/wait': ['runs.wait'],
  'POST /runs': ['runs.create'],
  'POST /runs/batch': ['runs.createBatch'],
  'PUT /store/items': ['store.putItem'],
  'DELETE /store/items': ['store.deleteItem'],
  'GET /store/items': ['store.getItem'],
  'POST /store/items/search': ['store.searchItems'],
  'POST /store/namespaces': ['store.listNamespaces'],
  'GET /api/v1/feedback/tokens/{token}': [],
  'GET /api/v1/feedback': ['listFeedback'],
  'POST /api/v1/feedback': ['createFeedback'],
  'GET /api/v1/feedback/{feedback_id}': ['readFeedback'],
}

export interface OperationParity {
  document: string
  method: string
  path: string
  served: boolean
  tests: string[]
  note: string
}

const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/:[^/]+/g, '{}').replace(/\/$/, '') || '/'

/** Every route hangar registers (method and path with `{}` for each parameter), read from the app itself. */
async function servedRoutes(): Promise<Set<string>> {
  const app = buildApp({ clock: Clock.manual(Date.UTC(2025, 0, 1)), config: { db: ':memory:', logLevel: 'silent' } })
  const registered: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    registered.push(route)
  })
  await app.ready()
  await app.close()
  // A route is also served under the second prefixes it declares (src/copies.ts), known once every scope's hooks ran.
  const routes = new Set<string>()
  for (const route of registered) {
    for (const url of [route.url, ...copyPatterns(route.url, route.config?.copies)]) {
      for (const method of [route.method].flat()) routes.add(`${method.toUpperCase()} ${shape(url)}`)
    }
  }
  return routes
}

/** The test files' sources, with template-literal holes (`${id}`) turned into a path segment. */
function testSources(): { name: string; text: string }[] {
  const dir = join(ROOT, 'test')
  return readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => ({
    name: basename(f, '.test.ts'),
    text: readFileSync(join(dir, f), 'utf8').replace(/\$\{[^}]*\}/g, 'X'),
  }))
}

const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&')

/** Whether a test's source sends this operation: its path as a literal (with the method on that line), or an SDK call that does. */
function exercises(text: string, method: string, path: string, prefixes: string[]): boolean {
  const calls = SDK_CALLS[`${method} ${path}`] ?? []
  if (calls.some((call) => new RegExp(`\\.${escape(call)}\\(`).test(text))) return true
  const paths = prefixes.flatMap((prefix) => [prefix + path, ...(path.startsWith('/api/v1') ? [prefix + path.slice('/api/v1'.length)] : [])])
  for (const candidate of paths) {
    const pattern = escape(candidate.replace(/\/$/, '')).replace(/\\\{[^}]*\\\}|\{[^}]*\}/g, '[^/\'"`\\s?]+')
    const literal = new RegExp(`${pattern}/?(?=['"\`?#])`)
    for (const line of text.split('\n')) {
      if (!literal.test(line)) continue
      const verb = method.toLowerCase()
      const named = new RegExp(`\\.${verb}\\(|method: ['"]${method}['"]|['"]${method}['"]`, 'i').test(line)
      const anyVerb = /\.(get|post|put|patch|delete|inject)\(|method: |['"](GET|POST|PUT|PATCH|DELETE)['"]/.test(line)
      // A fetch with no method is a GET.
      if (named || (method === 'GET' && !anyVerb)) return true
    }
  }
  return false
}

export async function parity(): Promise<OperationParity[]> {
  const served = await servedRoutes()
  const sources = testSources()
  const found: OperationParity[] = []
  for (const document of DOCUMENTS) {
    const spec = JSON.parse(readFileSync(join(ROOT, 'test', 'reference', document.file), 'utf8')) as { paths: Record<string, Record<string, unknown>> }
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const method of METHODS.filter((m) => m in operations).map((m) => m.toUpperCase())) {
        const forms = document.prefixes.map((prefix) => `${method} ${shape(prefix + path)}`)
        found.push({
          document: document.title,
          method,
          path,
          served: forms.every((form) => served.has(form)),
          tests: sources.filter((s) => exercises(s.text, method, path, document.prefixes)).map((s) => s.name),
          note: NOTES[`${method} ${path}`] ?? '',
        })
      }
    }
  }
  return found
}

/** The page. */
export function render(operations: OperationParity[]): string {
  const lines = [
    '# Parity with the real services',
    '',
    'Generated by `npm run parity` from the real services\' OpenAPI documents (`test/reference/`),',
    'hangar\'s routes (read from the app) and its tests (a path literal, or an official SDK call that',
    'sends the request, in a test file). `test/parity.test.ts` fails when this page is stale, when a',
    'served operation has no test, or when an operation is neither served nor given a reason.',
    'Everything else hangar serves (the session protocol, `/_hangar`, the tracing API beyond feedback,',
    'the CLI\'s routes) is outside these documents; the README describes it.',
    '',
    '| document | operations | served | tested | not served |',
    '|---|---:|---:|---:|---:|',
  ]
  const titles = [...new Set(operations.map((o) => o.document))]
  for (const title of titles) {
    const of = operations.filter((o) => o.document === title)
    lines.push(`| ${title} | ${of.length} | ${of.filter((o) => o.served).length} | ${of.filter((o) => o.served && o.tests.length > 0).length} | ${of.filter((o) => !o.served).length} |`)
  }
  for (const title of titles) {
    lines.push('', `## ${title}`, '', '| operation | served | tests | notes |', '|---|---|---|---|')
    for (const o of operations.filter((op) => op.document === title)) {
      const tests = o.tests.length > 4 ? `${o.tests.slice(0, 4).join(', ')} +${o.tests.length - 4}` : o.tests.join(', ')
      lines.push(`| \`${o.method} ${o.path}\` | ${o.served ? 'yes' : '**no**'} | ${tests || '—'} | ${o.note} |`)
    }
  }
  return `${lines.join('\n')}\n`
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const page = render(await parity())
  writeFileSync(PARITY_PAGE, page)
  process.stdout.write(`wrote ${PARITY_PAGE}\n`)
}
