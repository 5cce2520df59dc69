// Where a signed upload URL points: Cloud Storage's XML API as `langgraph deploy` uses it, a PUT of
// the source tarball that the URL alone authorizes (no API key). It answers as Cloud Storage does,
// errors included: XML bodies, not the control plane's `{"detail": …}`, so this plugin has its own
// error exit. Hidden from hangar's OpenAPI document: it is not an operation of the control plane.

import type { FastifyError, FastifyPluginAsync, FastifyReply, onRequestHookHandler } from 'fastify'
import { MAX_UPLOAD_BYTES, UPLOAD_CONTENT_TYPE, UploadRefused, type RefusalCode, type SignedQuery, type SourceUploads } from '../domain/source-uploads.js'
import { ApiError } from '../errors.js'

interface StorageError {
  status: number
  code: string
  message: string
  details?: string
}

/** What Cloud Storage answers for each refusal of a signed upload. */
const REFUSALS: Readonly<Record<RefusalCode, Omit<StorageError, 'details'>>> = {
  SignatureDoesNotMatch: { status: 403, code: 'SignatureDoesNotMatch', message: 'Access denied.' },
  ExpiredToken: { status: 400, code: 'ExpiredToken', message: 'Invalid argument.' },
  EntityTooLarge: { status: 400, code: 'EntityTooLarge', message: 'Your proposed upload is larger than the maximum object size specified in your Policy Document.' },
}
const TOO_LARGE = new UploadRefused('EntityTooLarge', 'Content-length exceeds upper bound on range')
/** Cloud Storage's codes for the other statuses an upload can meet (a malformed request, an injected fault). */
const CODES: Readonly<Record<number, string>> = { 400: 'InvalidArgument', 401: 'AuthenticationRequired', 403: 'AccessDenied', 404: 'NoSuchKey', 429: 'SlowDown', 503: 'ServiceUnavailable' }

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`)

function storageError(error: FastifyError | Error): StorageError {
  if (error instanceof UploadRefused) return { ...REFUSALS[error.code], details: error.details }
  if ((error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE') return storageError(TOO_LARGE)
  const status = error instanceof ApiError ? error.statusCode : (error as FastifyError).statusCode ?? 500
  if (status >= 500) return { status, code: CODES[status] ?? 'InternalError', message: 'We encountered an internal error. Please try again.' }
  return { status, code: CODES[status] ?? 'InvalidArgument', message: error instanceof ApiError && typeof error.detail === 'string' ? error.detail : 'Invalid argument.' }
}

function sendStorageError(reply: FastifyReply, error: StorageError) {
  const details = error.details === undefined ? '' : `<Details>${escapeXml(error.details)}</Details>`
  return reply
    .code(error.status)
    .type('application/xml; charset=UTF-8')
    .send(`<?xml version='1.0' encoding='UTF-8'?><Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message>${details}</Error>`)
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

type Upload = { Params: { bucket: string; '*': string }; Querystring: SignedQuery }

export const signedUploadRoutes: FastifyPluginAsync<{ sourceUploads: SourceUploads }> = async (app, { sourceUploads }) => {
  app.addContentTypeParser(UPLOAD_CONTENT_TYPE, { parseAs: 'buffer', bodyLimit: MAX_UPLOAD_BYTES }, (_request, body, done) => done(null, body))
  app.setErrorHandler((error, request, reply) => {
    const answer = storageError(error as FastifyError)
    if (answer.status >= 500) request.log.error({ err: error }, 'upload failed')
    return sendStorageError(reply, answer)
  })

  // The URL, the signed headers and the announced size are checked before the body is read.
  const authorize: onRequestHookHandler = (request, _reply, done) => {
    const { bucket, '*': objectPath } = request.params as Upload['Params']
    try {
      sourceUploads.authorize(bucket, objectPath, request.query as SignedQuery, {
        contentType: header(request.headers['content-type']),
        lengthRange: header(request.headers['x-goog-content-length-range']),
        contentLength: header(request.headers['content-length']),
      })
      done()
    } catch (error) {
      done(error as Error)
    }
  }

  app.put<Upload>('/storage/:bucket/*', { schema: { hide: true }, bodyLimit: MAX_UPLOAD_BYTES, onRequest: authorize }, async (request, reply) => {
    const content = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
    const { md5, generation } = await sourceUploads.receive(request.params['*'], content)
    return reply
      .header('etag', `"${Buffer.from(md5, 'base64').toString('hex')}"`)
      .header('x-goog-generation', String(generation))
      .header('x-goog-metageneration', '1')
      .header('x-goog-hash', `md5=${md5}`)
      .header('x-goog-stored-content-length', String(content.length))
      .header('x-goog-stored-content-encoding', 'identity')
      .type('text/html; charset=UTF-8')
      .send('')
  })
}
