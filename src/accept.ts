// What a request's Accept header asks for: the media types it names (their parameters and weights
// are not weighed), and whether a response of one type is acceptable to it.

/** The media types an Accept header names, lower-cased, without parameters. */
const named = (accept: string | undefined) => (accept ?? '').split(',').map((t) => t.split(';')[0]!.trim().toLowerCase()).filter((t) => t !== '')

/** Whether the header names this media type itself (a wildcard does not count). */
export const namesType = (accept: string | undefined, type: string) => named(accept).includes(type)

/** Whether a response of this media type is acceptable: no Accept header, the type itself, its range (`text/*`) or any (`*\/*`). */
export function allowsType(accept: string | undefined, type: string): boolean {
  const types = named(accept)
  return types.length === 0 || types.includes(type) || types.includes(`${type.split('/')[0]}/*`) || types.includes('*/*')
}
