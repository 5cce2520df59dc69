// Listeners (v2): request and response schemas, field for field as in the real service's OpenAPI
// document (`test/reference/control-plane-openapi.json`), in the same property order.

import { Type, type Static } from '@sinclair/typebox'
import { DateTime, Nullable, Uuid } from './common.js'

/** The spec's `"const": "k8s"`: the validator answers `literal_error` "Input should be 'k8s'". */
export const ComputeType = Type.Literal('k8s')

const version = Nullable(Type.String(), { description: 'The version of the listener.' })
const namespaces = Nullable(Type.Array(Type.String()), { title: 'Kubernetes Namespaces' })

/** As requests send it: every field may be left out (it is then null). */
export const ListenerComputeConfigRequest = Type.Object(
  { k8s_namespaces: Type.Optional(namespaces) },
  { title: 'ListenerComputeConfig' },
)

/** As responses send it: `k8s_namespaces` is always present, null when unset. */
export const ListenerComputeConfig = Type.Object({ k8s_namespaces: namespaces }, { title: 'ListenerComputeConfig' })
export type ListenerComputeConfig = Static<typeof ListenerComputeConfig>

export const ListenerCreateRequest = Type.Object(
  {
    version: Type.Optional(version),
    compute_type: ComputeType,
    compute_id: Type.String(),
    compute_config: ListenerComputeConfigRequest,
  },
  { title: 'ListenerCreateRequest' },
)
export type ListenerCreateRequest = Static<typeof ListenerCreateRequest>

/** `compute_type` and `compute_id` cannot change, so they are not fields of a patch (and are ignored). */
export const ListenerPatchRequest = Type.Object(
  {
    version: Type.Optional(version),
    compute_config: Type.Optional(Nullable(ListenerComputeConfigRequest)),
  },
  { title: 'ListenerPatchRequest' },
)
export type ListenerPatchRequest = Static<typeof ListenerPatchRequest>

/** Every field is always sent (`version` as null when unset), so all are required here, in the spec's order. */
export const Listener = Type.Object(
  {
    version,
    compute_type: ComputeType,
    compute_id: Type.String(),
    compute_config: ListenerComputeConfig,
    id: Uuid(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Listener' },
)
export type Listener = Static<typeof Listener>

export const ListenersList = Type.Object({ resources: Type.Array(Listener), offset: Type.Integer() }, { title: 'ListenersList' })

export const ListenerListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Maximum number of resources to return.' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Pagination offset.' })),
})

export const ListenerParams = Type.Object({ listener_id: Uuid({ title: 'Listener ID' }) })
