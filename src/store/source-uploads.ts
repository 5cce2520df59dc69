import type { ArchiveFacts } from '../domain/source-archive.js'
import type { Db } from './db.js'

/** A signed upload URL handed out for a deployment, and what was uploaded to it (nothing yet: the upload fields are null). */
export interface SourceUpload {
  id: string
  deployment_id: string
  object_path: string
  signature: string
  issued_at: number
  expires_at: number
  uploaded_at: number | null
  size: number | null
  sha256: string | null
  md5: string | null
  archive: ArchiveFacts | null
}

/** A row of `source_uploads` as read: the record, with its seq and what unpacking found as JSON text. */
type UploadRow = Omit<SourceUpload, 'archive'> & { seq: number; archive: string | null }

export interface NewUpload {
  id: string
  tenantId: string
  deploymentId: string
  objectPath: string
  signature: string
  issuedAt: number
  expiresAt: number
}

export interface UploadedContent {
  content: Buffer
  size: number
  sha256: string
  md5: string
  archive: ArchiveFacts
  at: number
}

const toUpload = ({ seq: _seq, archive, ...row }: UploadRow): SourceUpload => ({ ...row, archive: archive === null ? null : JSON.parse(archive) })

const COLUMNS = `u.seq, u.id, d.id AS deployment_id, u.object_path, u.signature, u.issued_at, u.expires_at,
  u.uploaded_at, u.size, u.sha256, u.md5, u.archive`
const FROM = 'FROM source_uploads u JOIN deployments d ON d.seq = u.deployment_seq'

/** The signed upload URLs of deployments' sources and the bytes uploaded to them; they go with their deployment. */
export class SourceUploadRepository {
  readonly #sql

  constructor(db: Db) {
    this.#sql = {
      insert: db.prepare(`INSERT INTO source_uploads (id, deployment_seq, object_path, signature, issued_at, expires_at)
        SELECT @id, seq, @object_path, @signature, @issued_at, @expires_at FROM deployments WHERE tenant_id = @tenant AND id = @deployment`),
      byPath: db.prepare<[string], UploadRow>(`SELECT ${COLUMNS} ${FROM} WHERE u.object_path = ?`),
      ofDeployment: db.prepare<[string, string], UploadRow>(`SELECT ${COLUMNS} ${FROM} WHERE d.id = ? AND u.object_path = ?`),
      list: db.prepare<[string], UploadRow>(`SELECT ${COLUMNS} ${FROM} WHERE d.id = ? ORDER BY u.seq DESC`),
      content: db.prepare<[string, string], { content: Buffer | null }>(`SELECT u.content ${FROM} WHERE d.id = ? AND u.id = ?`),
      store: db.prepare(`UPDATE source_uploads SET content = @content, size = @size, sha256 = @sha256, md5 = @md5,
        archive = @archive, uploaded_at = @at WHERE object_path = @object_path`),
    }
  }

  /** Records a signed URL handed out; false when the deployment is not in the workspace. */
  issue(upload: NewUpload): boolean {
    return this.#sql.insert.run({
      id: upload.id,
      tenant: upload.tenantId,
      deployment: upload.deploymentId,
      object_path: upload.objectPath,
      signature: upload.signature,
      issued_at: upload.issuedAt,
      expires_at: upload.expiresAt,
    }).changes > 0
  }

  /** The upload URL for an object path, whichever deployment it is of. */
  byPath(objectPath: string): SourceUpload | undefined {
    const row = this.#sql.byPath.get(objectPath)
    return row && toUpload(row)
  }

  /** The upload of a deployment at an object path (another deployment's path is not its). */
  ofDeployment(deploymentId: string, objectPath: string): SourceUpload | undefined {
    const row = this.#sql.ofDeployment.get(deploymentId, objectPath)
    return row && toUpload(row)
  }

  /** Keeps what was uploaded to an object path (a later upload to the same URL replaces it). */
  store(objectPath: string, uploaded: UploadedContent): void {
    this.#sql.store.run({ object_path: objectPath, ...uploaded, archive: JSON.stringify(uploaded.archive) })
  }

  /** A deployment's uploads, newest first. */
  list(deploymentId: string): SourceUpload[] {
    return this.#sql.list.all(deploymentId).map(toUpload)
  }

  /** The bytes uploaded: undefined when there is no such upload, null when nothing was uploaded to it. */
  content(deploymentId: string, uploadId: string): Buffer | null | undefined {
    return this.#sql.content.get(deploymentId, uploadId)?.content
  }
}
