// The agent server's store: request and response schemas, as the real server's OpenAPI document
// gives them (StorePutRequest, StoreDeleteRequest, StoreSearchRequest, StoreListNamespacesRequest,
// Item, SearchItemsResponse). Validated pydantic-style like every hangar request.

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { AnyDict, DateTime, Nullable } from './common.js'

const opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema))
const Labels = (title: string, description: string) => Type.Array(Type.String(), { title, description })

export const StorePut = Type.Object({
  namespace: Labels('Namespace', 'A list of strings representing the namespace path.'),
  key: Type.String({ title: 'Key', description: 'The unique identifier for the item within the namespace.' }),
  value: AnyDict({ title: 'Value', description: "A dictionary containing the item's data." }),
  index: Type.Optional(Type.Union([Type.Literal(false), Type.Array(Type.String()), Type.Null()], {
    default: null, title: 'Index', description: 'Controls search indexing - null (use defaults), false (disable), or list of field paths to index.',
  })),
  ttl: Type.Optional(Nullable(Type.Number(), { default: null, title: 'TTL', description: 'Optional time-to-live in minutes for the item, or null for no expiration.' })),
}, { title: 'StorePutRequest' })
export type StorePut = Static<typeof StorePut>

export const StoreDelete = Type.Object({
  namespace: Type.Optional(Labels('Namespace', 'A list of strings representing the namespace path.')),
  key: Type.String({ title: 'Key', description: 'The unique identifier for the item.' }),
}, { title: 'StoreDeleteRequest' })

export const StoreGetQuery = Type.Object({
  key: Type.String(),
  namespace: Type.Optional(Type.Array(Type.String(), {
    description: "The namespace's labels joined by '.' (what the SDKs send), or one label per repeated parameter.",
  })),
  refresh_ttl: Type.Optional(Type.Boolean({ description: "Whether to refresh the TTL on this read operation. If not provided, uses the store's default behavior." })),
})

export const StoreSearch = Type.Object({
  namespace_prefix: opt(Labels('Namespace Prefix', 'List of strings representing the namespace prefix.')),
  filter: opt(AnyDict({ title: 'Filter', description: 'Optional dictionary of key-value pairs to filter results.' })),
  limit: Type.Optional(Type.Integer({ minimum: 0, default: 10, title: 'Limit', description: 'Maximum number of items to return (default is 10).' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, title: 'Offset', description: 'Number of items to skip before returning results (default is 0).' })),
  query: opt(Type.String({ title: 'Query', description: 'Optional search query; hangar ranks items by the share of its words they hold (no embeddings).' })),
  refresh_ttl: Type.Optional(Nullable(Type.Boolean(), { default: null, title: 'Refresh TTL', description: 'Whether to refresh the TTL on items returned by this search. If null, uses the store\'s default behavior.' })),
}, { title: 'StoreSearchRequest' })

export const StoreListNamespaces = Type.Object({
  prefix: Type.Optional(Labels('Prefix', 'Optional list of strings representing the prefix to filter namespaces.')),
  suffix: Type.Optional(Labels('Suffix', 'Optional list of strings representing the suffix to filter namespaces.')),
  max_depth: Type.Optional(Type.Integer({ minimum: 1, title: 'Max Depth', description: 'Optional integer specifying the maximum depth of namespaces to return.' })),
  limit: Type.Optional(Type.Integer({ minimum: 0, default: 100, title: 'Limit', description: 'Maximum number of namespaces to return (default is 100).' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, title: 'Offset', description: 'Number of namespaces to skip before returning results (default is 0).' })),
}, { title: 'StoreListNamespacesRequest' })

const itemFields = {
  namespace: Type.Array(Type.String(), { description: "The namespace of the item. A namespace is analogous to a document's directory." }),
  key: Type.String({ description: 'The unique identifier of the item within its namespace.' }),
  value: AnyDict({ description: 'The value stored in the item. This is the document itself.' }),
  created_at: DateTime({ description: 'The timestamp when the item was created.' }),
  updated_at: DateTime({ description: 'The timestamp when the item was last updated.' }),
}
export const Item = Type.Object(itemFields, { title: 'Item' })
/** `null` when there is no such item (the real server answers 200 with `null`, not a 404). */
export const ItemOrNull = Nullable(Item)
export const SearchItemsResponse = Type.Object({
  items: Type.Array(Type.Object({
    ...itemFields,
    score: Type.Optional(Type.Number({ description: 'With a query: the share of its words the item holds, from 0 to 1.' })),
  }, { title: 'SearchItem' })),
}, { title: 'SearchItemsResponse' })
export const ListNamespaceResponse = Type.Object({ namespaces: Type.Array(Type.Array(Type.String())) }, { title: 'ListNamespaceResponse' })
