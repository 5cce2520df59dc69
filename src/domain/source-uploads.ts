// How a deployment's source reaches hangar, as `langgraph deploy` sends it: a remote build uploads
// a tarball to a signed URL (`POST …/upload-url`, then a PUT the URL alone authorizes, checked the
// way Cloud Storage checks its signed URLs), a local build pushes an image with a registry token
// (`POST …/push-token`). What was uploaded is kept; when a revision is created its snapshot records
// the tarball's facts and why it cannot be built, if it cannot.

import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../clock.js'
import { BUILT_SOURCES } from '../lifecycle/revisions.js'
import { SOURCE_BUCKET, type SourceProblem, type TarballFacts } from '../lifecycle/revision-snapshot.js'
import type { Deployment } from '../schemas/deployments.js'
import type { DeploymentRepository, RevisionSnapshotter } from '../store/deployments.js'
import type { SourceUpload, SourceUploadRepository } from '../store/source-uploads.js'
import { archivePath, configProblem, inspectArchive } from './source-archive.js'
import { NotFound, RuleViolation } from './errors.js'

/** The size range the upload URL is signed for, as the CLI sends it in `X-Goog-Content-Length-Range`. */
export const MAX_UPLOAD_BYTES = 209_715_200
export const CONTENT_LENGTH_RANGE = `0,${MAX_UPLOAD_BYTES}`
export const UPLOAD_CONTENT_TYPE = 'application/gzip'
/** How long an upload URL stays valid (on hangar's clock). */
export const UPLOAD_URL_SECONDS = 900
const SIGNED_HEADERS = 'content-type;host;x-goog-content-length-range'
const CREDENTIAL = 'hangar-uploads@hangar.iam.gserviceaccount.com'

/** Why Cloud Storage refuses an upload to a signed URL (the route writes its XML error). */
export type RefusalCode = 'SignatureDoesNotMatch' | 'ExpiredToken' | 'EntityTooLarge'

export class UploadRefused extends Error {
  constructor(readonly code: RefusalCode, readonly details: string) {
    super(`${code}: ${details}`)
    this.name = 'UploadRefused'
  }
}

/** What a signed upload URL's query carries (the parameters of a V4 signature). */
export type SignedQuery = Partial<Record<string, string>>

export interface SourceUploadsOptions {
  uploads: SourceUploadRepository
  deployments: DeploymentRepository
  clock: Clock
  /** The registry local builds push to (`HANGAR_REGISTRY_URL`). */
  registry: string
  /** Hears of each upload URL handed out and each upload (the inspector's live view). */
  onChange?: (deploymentId: string) => void
}

const deploymentNotFound = (id: string) => new NotFound(`Deployment ID ${id} not found.`)
/** `20250101T000000Z`: the instant a V4 signature names. */
const signatureDate = (at: number) => new Date(at).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

export class SourceUploads {
  readonly #o: SourceUploadsOptions

  constructor(options: SourceUploadsOptions) {
    this.#o = options
  }

  #deployment(tenantId: string, deploymentId: string): Deployment {
    const deployment = this.#o.deployments.get(tenantId, deploymentId)
    if (!deployment) throw deploymentNotFound(deploymentId)
    return deployment
  }

  /** A signed URL under `base` to PUT the deployment's source tarball to, and the object path a revision names it by. */
  issueUploadUrl(tenantId: string, deploymentId: string, base: string): { upload_url: string; object_path: string } {
    const deployment = this.#deployment(tenantId, deploymentId)
    if (deployment.source !== 'internal_source') {
      throw new RuleViolation(`Upload URLs are only available for 'internal_source' source deployments; deployment ${deploymentId} has source '${deployment.source}'.`)
    }
    const id = randomUUID()
    const objectPath = `deployments/${deploymentId}/sources/${id}.tar.gz`
    const signature = randomBytes(32).toString('hex')
    const issuedAt = this.#o.clock.now()
    // Signatures name whole seconds: the URL is valid from the second it was issued in.
    const signedAt = Math.floor(issuedAt / 1000) * 1000
    this.#o.uploads.issue({ id, tenantId, deploymentId, objectPath, signature, issuedAt, expiresAt: signedAt + UPLOAD_URL_SECONDS * 1000 })
    this.#o.onChange?.(deploymentId)
    const date = signatureDate(signedAt)
    const query = new URLSearchParams({
      'X-Goog-Algorithm': 'GOOG4-RSA-SHA256',
      'X-Goog-Credential': `${CREDENTIAL}/${date.slice(0, 8)}/auto/storage/goog4_request`,
      'X-Goog-Date': date,
      'X-Goog-Expires': String(UPLOAD_URL_SECONDS),
      'X-Goog-SignedHeaders': SIGNED_HEADERS,
      'X-Goog-Signature': signature,
    })
    return { upload_url: `${base}/storage/${SOURCE_BUCKET}/${objectPath}?${query}`, object_path: objectPath }
  }

  /** A token to push images with, for a deployment built locally (`internal_docker`). */
  pushToken(tenantId: string, deploymentId: string): { token: string; registry_url: string } {
    const deployment = this.#deployment(tenantId, deploymentId)
    if (deployment.source !== 'internal_docker') {
      throw new RuleViolation(`Push tokens are only available for 'internal_docker' source deployments; deployment ${deploymentId} has source '${deployment.source}'.`)
    }
    return { token: randomBytes(36).toString('base64url'), registry_url: `${this.#o.registry.replace(/\/+$/, '')}/${deploymentId}` }
  }

  /**
   * Whether a PUT may upload to this URL, checked before its body is read: the signature, the
   * expiry (on hangar's clock), the signed headers' values, the announced size.
   */
  authorize(bucket: string, objectPath: string, query: SignedQuery, headers: { contentType?: string; lengthRange?: string; contentLength?: string }): void {
    const upload = bucket === SOURCE_BUCKET ? this.#o.uploads.byPath(objectPath) : undefined
    const signature = query['X-Goog-Signature'] ?? ''
    if (!upload || !sameText(signature, upload.signature)) {
      throw new UploadRefused('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your Google secret key and signing method.')
    }
    if (this.#o.clock.now() > upload.expires_at) {
      const at = new Date(upload.expires_at).toISOString().replace(/\.\d{3}Z$/, '+00:00')
      throw new UploadRefused('ExpiredToken', `The provided token has expired. Request signature expired at: ${at}`)
    }
    // The signed headers must come with the values they were signed with.
    if (headers.contentType?.trim().toLowerCase() !== UPLOAD_CONTENT_TYPE || headers.lengthRange?.replace(/\s/g, '') !== CONTENT_LENGTH_RANGE) {
      throw new UploadRefused('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your Google secret key and signing method.')
    }
    if (headers.contentLength !== undefined && Number(headers.contentLength) > MAX_UPLOAD_BYTES) throw tooLarge()
  }

  /** Keeps what was uploaded (after `authorize`); answers its MD5 and generation, as Cloud Storage does. */
  async receive(objectPath: string, content: Buffer): Promise<{ md5: string; generation: number }> {
    if (content.length > MAX_UPLOAD_BYTES) throw tooLarge()
    const md5 = createHash('md5').update(content).digest('base64')
    const at = this.#o.clock.now()
    this.#o.uploads.store(objectPath, {
      content,
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      md5,
      archive: await inspectArchive(content),
      at,
    })
    const upload = this.#o.uploads.byPath(objectPath)
    if (upload) this.#o.onChange?.(upload.deployment_id)
    return { md5, generation: at * 1000 }
  }

  /** A deployment's uploads (of any workspace), newest first. */
  list(deploymentId: string): SourceUpload[] | undefined {
    if (this.#o.deployments.tenantOf(deploymentId) === undefined) return undefined
    return this.#o.uploads.list(deploymentId)
  }

  /** The bytes of an upload of a deployment: undefined when there is no such upload, null while nothing was uploaded to it. */
  content(deploymentId: string, uploadId: string): Buffer | null | undefined {
    return this.#o.uploads.content(deploymentId, uploadId)
  }
}

/** What each new revision is made from beyond its config (see RevisionSnapshot): the store takes one as it creates a revision. */
export function snapshotter(uploads: SourceUploadRepository): RevisionSnapshotter {
  return (deployment, revision) => {
    const path = revision.config.source_tarball_path ?? null
    const tarball = revision.source === 'internal_source'
      ? tarballFacts(path, path === null ? undefined : uploads.ofDeployment(deployment.id, path), revision.config.langgraph_config_path ?? 'langgraph.json')
      : null
    const built = BUILT_SOURCES.includes(revision.source)
    return {
      deployment_name: deployment.name,
      secret_names: deployment.secrets.map((secret) => secret.name),
      repo_url: deployment.source_config.repo_url ?? null,
      install_command: built ? deployment.source_config.install_command ?? null : null,
      build_command: built ? deployment.source_config.build_command ?? null : null,
      tarball,
    }
  }
}

const tooLarge = () => new UploadRefused('EntityTooLarge', 'Content-length exceeds upper bound on range')

/** The tarball a revision builds from as it is now, and why it cannot be built (null when it can). */
export function tarballFacts(path: string | null, upload: SourceUpload | undefined, configPath: string): TarballFacts {
  const files = upload?.archive?.files ?? null
  return { object_path: path, size: upload?.size ?? null, sha256: upload?.sha256 ?? null, files: files?.length ?? null, problem: sourceProblem(path, upload, configPath) }
}

/** Why a builder could not build from the upload at `path`, or null. */
export function sourceProblem(path: string | null, upload: SourceUpload | undefined, configPath: string): SourceProblem | null {
  if (path === null) {
    return { step: 'fetch', cause: 'No source tarball to build: source_revision_config.source_tarball_path is not set (upload one to a URL from POST /v2/deployments/{deployment_id}/upload-url).' }
  }
  if (!upload) {
    return { step: 'fetch', cause: `Source tarball not found: ${path} is not an upload of this deployment (object paths come from POST /v2/deployments/{deployment_id}/upload-url).` }
  }
  const archive = upload.archive
  if (upload.uploaded_at === null || !archive) {
    return { step: 'fetch', cause: `Source tarball not found: nothing was uploaded to ${path} (PUT the archive to its upload URL before creating the revision).` }
  }
  if (!archive.gzip) {
    return { step: 'unpack', cause: `The source tarball ${path} is not a gzip-compressed tar archive (it begins with bytes ${archive.head}).` }
  }
  if (archive.files === null) return { step: 'unpack', cause: `The source tarball ${path} could not be unpacked: ${archive.error}.` }
  const wanted = archivePath(configPath)
  if (!archive.files.includes(wanted)) {
    return { step: 'config', cause: `${wanted} was not found in the source tarball ${path}: langgraph_config_path is relative to the root of the archive.` }
  }
  const text = archive.configs?.[wanted]
  const problem = text === undefined ? null : configProblem(wanted, text, archive.files)
  return problem === null ? null : { step: 'config', cause: problem }
}
