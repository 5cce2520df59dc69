// What was uploaded for deployments' remote builds, under /_hangar: each signed upload URL handed out
// and what was PUT to it (size, digests, what unpacking it found), and the bytes themselves.

import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { SourceUploads } from '../domain/source-uploads.js'
import { ApiError } from '../errors.js'
import { DateTime, errorResponses, Nullable, Uuid } from '../schemas/common.js'
import { DeploymentParams } from '../schemas/deployments.js'
import type { SourceUpload } from '../store/source-uploads.js'

const tags = ['Emulator']

const UploadSummary = Type.Object({
  id: Uuid(),
  object_path: Type.String({ description: 'What a revision names it by (`source_revision_config.source_tarball_path`)' }),
  issued_at: DateTime({ description: 'When the upload URL was handed out' }),
  expires_at: DateTime({ description: 'Until when the URL accepts a PUT (hangar\'s clock)' }),
  uploaded_at: Nullable(DateTime({ description: 'null until something is uploaded' })),
  size: Nullable(Type.Integer({ description: 'Bytes' })),
  sha256: Nullable(Type.String()),
  md5: Nullable(Type.String({ description: 'Base64, as Cloud Storage reports it' })),
  gzip: Nullable(Type.Boolean({ description: 'Whether it is gzip data' })),
  files: Nullable(Type.Integer({ description: 'How many files the tar archive holds; null when it does not unpack' })),
  archive_error: Nullable(Type.String({ description: 'Why it does not unpack' })),
}, { title: 'UploadSummary' })

const UploadList = Type.Object({ deployment_id: Uuid(), uploads: Type.Array(UploadSummary, { description: 'Newest first' }) }, { title: 'UploadList' })

const at = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
const summary = (u: SourceUpload) => ({
  id: u.id, object_path: u.object_path, issued_at: at(u.issued_at)!, expires_at: at(u.expires_at)!, uploaded_at: at(u.uploaded_at),
  size: u.size, sha256: u.sha256, md5: u.md5, gzip: u.archive?.gzip ?? null, files: u.archive?.files?.length ?? null, archive_error: u.archive?.error ?? null,
})

export const adminUploadRoutes: FastifyPluginAsyncTypebox<{ sourceUploads: SourceUploads }> = async (app, { sourceUploads }) => {
  app.get('/deployments/:deployment_id/uploads', {
    schema: {
      tags, summary: 'List a deployment\'s source uploads',
      description: 'Every upload URL `POST /v2/deployments/{id}/upload-url` handed out for the deployment (of any workspace), and what was uploaded to it.',
      params: DeploymentParams, response: { 200: UploadList, ...errorResponses(404, 422) },
    },
  }, async (request) => {
    const { deployment_id: id } = request.params
    const uploads = sourceUploads.list(id)
    if (!uploads) throw ApiError.notFound(`Deployment ID ${id} not found.`)
    return { deployment_id: id, uploads: uploads.map(summary) }
  })

  app.get('/deployments/:deployment_id/uploads/:upload_id/content', {
    schema: {
      tags, summary: 'Download what was uploaded',
      params: Type.Object({ deployment_id: Uuid(), upload_id: Uuid() }),
      response: { 200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The bytes as uploaded (application/gzip)' }), ...errorResponses(404, 422) },
    },
  }, async (request, reply) => {
    const { deployment_id: id, upload_id: uploadId } = request.params
    const content = sourceUploads.content(id, uploadId)
    if (content === undefined) throw ApiError.notFound(`Upload ${uploadId} of deployment ${id} not found.`)
    if (content === null) throw ApiError.notFound(`Nothing was uploaded to upload ${uploadId} yet.`)
    return reply.type('application/gzip').send(content)
  })
}
