// How `langgraph deploy` gets a deployment's source to the control plane: a signed URL to upload a
// tarball to (remote builds), or a token to push an image with (local builds).

import { Type } from '@sinclair/typebox'

export const UploadUrl = Type.Object({
  upload_url: Type.String({ description: 'A signed URL: PUT the gzip tarball to it with `Content-Type: application/gzip` and `X-Goog-Content-Length-Range: 0,209715200`; no API key.' }),
  object_path: Type.String({ description: 'Name the upload by this as `source_revision_config.source_tarball_path`.' }),
}, { title: 'UploadUrlResponse' })

export const PushToken = Type.Object({
  token: Type.String({ description: 'The password for `docker login -u oauth2accesstoken`.' }),
  registry_url: Type.String({ description: 'Where to push the image (host[/path]).' }),
}, { title: 'PushTokenResponse' })
