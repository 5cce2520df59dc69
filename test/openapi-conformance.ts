// Checks hangar's responses against the real control plane's OpenAPI document, so that drift from
// the real API fails CI. Statuses the spec documents with a schema are validated against it; the
// ones it documents only by example (400, 404, ...) must be `{"detail": "<text>"}` like the example;
// 204 must have no body. Operations hangar serves beyond the document (revision create and
// interrupt, the free count) are validated against the spec's own component schemas, or a schema
// written here from the newer docs. Enum values the newer service added (known from the official
// tools, docs/control-plane-tools) are added to the spec's enums before validating, and nothing else.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { App } from '../src/app.js'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void

/** The reference documents are part of the repository (test/reference/README.md says where each comes from). */
export const REFERENCE_DIR = fileURLToPath(new URL('./reference/', import.meta.url))

/** Reads one reference document, or fails with a message that says what is missing and how to get it back. */
export function readReference(name: string): any {
  const path = join(REFERENCE_DIR, name)
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: the reference documents are part of the repository (see test/reference/README.md); restore it with \`git checkout -- test/reference\``)
  }
  return JSON.parse(readFileSync(path, 'utf8'))
}

const SPEC_NAME = 'control-plane-openapi.json'

/**
 * Values the newer service added to enums of the v0.1.0 document, as the official Terraform
 * provider's schema lists them: every enum of the document that lists exactly `spec` gets `added`.
 */
const NEWER_ENUM_VALUES: readonly { spec: string[]; added: string[] }[] = [
  { spec: ['github', 'external_docker', 'internal_docker', 'internal_source'], added: ['internal_template'] },
  { spec: ['dev_free', 'dev', 'prod'], added: ['dev_zero', 'dev_free_zero'] },
  { spec: ['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN'], added: ['AWAITING_FINAL_DELETE'] },
]

/** The document with the newer enum values added (in place, on a copy read from disk). */
function withNewerEnums<T>(node: T): T {
  if (Array.isArray(node)) {
    node.forEach(withNewerEnums)
  } else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>
    const newer = Array.isArray(record.enum) && NEWER_ENUM_VALUES.find(({ spec }) => JSON.stringify(spec) === JSON.stringify(record.enum))
    if (newer) record.enum = [...newer.spec, ...newer.added]
    Object.values(record).forEach(withNewerEnums)
  }
  return node
}

const spec = withNewerEnums(readReference(SPEC_NAME))
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ ...spec, $id: 'spec.json' })

/**
 * Operations hangar adds from the newer docs, with what each status returns: a spec component's
 * name, a schema written from the docs, or '' for a `{"detail": "<text>"}` body.
 */
const EXTRA_OPERATIONS: Record<string, Record<string, Record<string, string | object>>> = {
  '/v2/deployments/{deployment_id}/revisions': { post: { '201': 'Revision', '400': '', '404': '', '422': 'HTTPValidationError' } },
  // "Get Free Deployment Count": `{count}` (docs.langchain.com, api-reference/deployments-v2).
  '/v2/deployments/free-count': {
    get: { '200': { type: 'object', required: ['count'], properties: { count: { type: 'integer', minimum: 0 } }, additionalProperties: false } },
  },
  '/v2/deployments/{deployment_id}/revisions/{revision_id}/interrupt': {
    post: { '200': 'Revision', '400': '', '404': '', '422': 'HTTPValidationError' },
  },
}

/** Statuses an operation's description promises without listing them; validated like another status. */
const UNLISTED_STATUSES: Record<string, Record<string, Record<string, string>>> = {
  '/v2/deployments': { delete: { '207': '200' } },
}

/**
 * Error statuses hangar answers where the spec lists none (unknown ids, duplicates, broken rules of
 * the OAuth flow), each a `{"detail": "<text>"}` body. Every one is a decision written in the README.
 */
const HANGAR_ERRORS: Record<string, Record<string, string[]>> = {
  '/v2/auth/providers': { post: ['409'] },
  '/v2/auth/providers/mcp-discover': { post: ['400', '409'] },
  '/v2/auth/providers/{provider_id}': { get: ['404'], patch: ['404'], delete: ['404'] },
  '/v2/auth/authenticate': { post: ['404'] },
  '/v2/auth/callback/{provider_id}': { get: ['400'], post: ['400'] },
  '/v2/auth/setup/{provider_id}': { get: ['400'] },
  '/v2/auth/tokens/{token_id}/metadata': { patch: ['404'] },
  '/v2/auth/tokens/{token_id}': { delete: ['404'] },
  '/v2/auth/agents/{agent_id}/connections': { post: ['404', '409'] },
  '/v2/auth/agents/{agent_id}/connections/{connection_id}': { delete: ['404'] },
}

interface Template {
  path: string
  regex: RegExp
}
/** Literal paths win over templated ones (`/tokens/exists` before `/tokens/{token_id}`), as in routing. */
const templates: Template[] = [...Object.keys(spec.paths), ...Object.keys(EXTRA_OPERATIONS)]
  .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
  .map((path) => ({ path, regex: new RegExp(`^(?:/api-host)?${path.replace(/\{[^}]+\}/g, '[^/]+')}$`) }))

/** Status codes every route may answer besides its documented ones (auth, tenancy). */
const COMMON_ERRORS = new Set(['401', '403'])

export interface Observation {
  method: string
  url: string
  status: number
  body: string
  /** The response's Content-Type; an HTML page passes where the spec's schema is `{}` (any). */
  contentType?: string
}

/** Returns the problems with one response ([] when it conforms), and which (operation, status) it covers. */
export function checkResponse(o: Observation): { problems: string[]; covered?: string } {
  const path = o.url.split('?')[0]
  const template = templates.find((tpl) => tpl.regex.test(path))
  if (!template) return { problems: [] } // not a control-plane route (e.g. 404 for an unknown path)
  const method = o.method.toLowerCase()
  const status = String(o.status)
  const operation = spec.paths[template.path]?.[method]
  const extra = EXTRA_OPERATIONS[template.path]?.[method]
  if (!operation && !extra) {
    if (o.status === 405) return detailOnly(o) // a method the path does not serve
    return { problems: [`${o.method} ${template.path} is not an operation of the spec`] }
  }
  const key = `${o.method} ${template.path} ${status}`
  const like = UNLISTED_STATUSES[template.path]?.[method]?.[status] ?? status
  const documented = operation ? operation.responses[like] : extra![status] !== undefined ? {} : undefined
  if (!documented) {
    if (COMMON_ERRORS.has(status)) return detailOnly(o)
    if (HANGAR_ERRORS[template.path]?.[method]?.includes(status)) return { covered: key, ...detailOnly(o) }
    return { problems: [`${key}: status not documented by the spec`] }
  }
  if (status === '204') return { covered: key, problems: o.body === '' ? [] : [`${key}: 204 with a body`] }

  const anything = (operation?.responses[like]?.content?.['application/json']?.schema ?? null) !== null &&
    Object.keys(operation.responses[like].content['application/json'].schema).length === 0
  if (anything && o.contentType?.startsWith('text/html')) return { covered: key, problems: [] }
  let body: unknown
  try {
    body = JSON.parse(o.body)
  } catch {
    return { covered: key, problems: [`${key}: body is not JSON`] }
  }
  const written = extra?.[status]
  if (typeof written === 'object') return { covered: key, problems: validateWith(ajv.compile(written), key, body) }
  const schema = operation?.responses[like]?.content?.['application/json']?.schema
    ?? (written ? { $ref: `#/components/schemas/${written}` } : undefined)
  if (!schema) {
    const result = detailOnly(o)
    return { covered: key, problems: result.problems }
  }
  // Validate in place (a JSON pointer into the document), so nested $refs resolve against it.
  const pointer = operation?.responses[like]?.content?.['application/json']?.schema
    ? ['paths', template.path, method, 'responses', like, 'content', 'application/json', 'schema'].map(escapePointer).join('/')
    : undefined
  return { covered: key, problems: validateWith(ajv.compile({ $ref: pointer ? `spec.json#/${pointer}` : `spec.json${schema.$ref}` }), key, body) }
}

function validateWith(validate: ReturnType<Ajv2020['compile']>, key: string, body: unknown): string[] {
  return validate(body) ? [] : [`${key}: ${ajv.errorsText(validate.errors)}`]
}


const escapePointer = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1')

function detailOnly(o: Observation): { problems: string[] } {
  try {
    const body = JSON.parse(o.body)
    const ok = body && typeof body.detail === 'string' && Object.keys(body).length === 1
    return { problems: ok ? [] : [`${o.method} ${o.url} ${o.status}: expected {"detail": "<text>"}, got ${o.body}`] }
  } catch {
    return { problems: [`${o.method} ${o.url} ${o.status}: body is not JSON`] }
  }
}

/** Every (method path status) the spec documents for a tag, plus hangar's extra operations and errors. */
export function documentedStatuses(tag: string): string[] {
  const keys: string[] = []
  for (const [path, operations] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation.tags?.includes(tag)) continue
      const statuses = [
        ...Object.keys(operation.responses),
        ...Object.keys(UNLISTED_STATUSES[path]?.[method] ?? {}),
        ...(HANGAR_ERRORS[path]?.[method] ?? []),
      ]
      for (const status of statuses) keys.push(`${method.toUpperCase()} ${path} ${status}`)
    }
  }
  if (keys.length === 0) throw new Error(`no operation of ${SPEC_NAME} has the tag "${tag}"`)
  if (tag === 'Deployments (v2)') {
    for (const [path, operations] of Object.entries(EXTRA_OPERATIONS)) {
      for (const [method, statuses] of Object.entries(operations)) {
        for (const status of Object.keys(statuses)) keys.push(`${method.toUpperCase()} ${path} ${status}`)
      }
    }
  }
  return keys
}

/**
 * A client over `app.inject` that checks every response against the spec and records which
 * (method path status) it covered. It sends an API key and asks for JSON unless told otherwise.
 */
export function conformanceRecorder(app: App) {
  const covered = new Set<string>()
  const problems: string[] = []
  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.inject({
      method: method as 'GET',
      url,
      payload: body === undefined ? undefined : JSON.stringify(body),
      headers: {
        'x-api-key': 'k',
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
    })
    const contentType = String(res.headers['content-type'] ?? '')
    const result = checkResponse({ method, url, status: res.statusCode, body: res.body, contentType })
    if (result.covered) covered.add(result.covered)
    problems.push(...result.problems.map((problem) => `${problem} (${res.body.slice(0, 200)})`))
    return {
      status: res.statusCode,
      body: res.body && contentType.includes('json') ? JSON.parse(res.body) : res.body,
      headers: res.headers,
    }
  }
  return { call, covered, problems }
}
