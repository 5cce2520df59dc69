// What an uploaded source archive holds, as a builder would find out: whether it is gzip data,
// and the files of the tar archive inside. The bytes are streamed through gunzip and only the tar
// headers are read, so a large archive is never held unpacked.

import { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'

export interface ArchiveFacts {
  /** Whether it begins with gzip's magic bytes (1f 8b). */
  gzip: boolean
  /** Its first bytes in hex, to say what it is when it is not gzip. */
  head: string
  /** The regular files it unpacks to, relative to its root; null when it does not unpack. */
  files: string[] | null
  /** Why it does not unpack; null when it does. */
  error: string | null
}

const BLOCK = 512
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b])

/** Reads the entries of a tar stream fed in chunks (ustar, GNU long names and pax paths). */
class TarListing {
  readonly files: string[] = []
  #rest: Buffer = Buffer.alloc(0)
  /** Content (and padding) bytes still to pass over before the next header. */
  #skip = 0
  /** An entry whose content names the next entry (a GNU long name or a pax header), being read. */
  #naming: { kind: 'L' | 'x'; remaining: number; chunks: Buffer[] } | null = null
  #nextName: string | null = null
  #zeroBlocks = 0
  #ended = false
  #bytes = 0
  #headers = 0

  push(chunk: Buffer): void {
    this.#bytes += chunk.length
    let data = this.#rest.length > 0 ? Buffer.concat([this.#rest, chunk]) : chunk
    let pos = 0
    while (!this.#ended && pos < data.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, data.length - pos)
        if (this.#naming && this.#naming.remaining > 0) {
          const taken = Math.min(n, this.#naming.remaining)
          this.#naming.chunks.push(Buffer.from(data.subarray(pos, pos + taken)))
          this.#naming.remaining -= taken
        }
        pos += n
        this.#skip -= n
        if (this.#skip === 0 && this.#naming) this.#named(this.#naming)
        continue
      }
      if (data.length - pos < BLOCK) break
      this.#header(data.subarray(pos, pos + BLOCK))
      pos += BLOCK
    }
    data = data.subarray(pos)
    this.#rest = this.#ended ? Buffer.alloc(0) : Buffer.from(data)
  }

  /** The files, once the stream has ended; throws when it ended inside an entry. */
  finish(): string[] {
    if (this.#headers === 0 && !this.#ended) throw new Error(`it holds no tar archive (it unpacks to ${this.#bytes} bytes that are not one)`)
    if (!this.#ended && (this.#skip > 0 || this.#rest.length > 0)) throw new Error('the tar archive ends in the middle of an entry')
    return this.files
  }

  #header(block: Buffer): void {
    if (block.every((byte) => byte === 0)) {
      this.#ended = ++this.#zeroBlocks >= 2
      return
    }
    this.#zeroBlocks = 0
    this.#headers++
    if (!checksumHolds(block)) throw new Error('it holds no tar archive (a header\'s checksum does not match)')
    const size = sizeOf(block)
    const type = String.fromCharCode(block[156])
    this.#skip = Math.ceil(size / BLOCK) * BLOCK
    if (type === 'L' || type === 'x') {
      this.#naming = { kind: type, remaining: size, chunks: [] }
      if (this.#skip === 0) this.#named(this.#naming)
      return
    }
    const name = this.#nextName ?? pathOf(block)
    this.#nextName = null
    if (type === '0' || type === '\0' || type === '7') this.files.push(name.replace(/^(\.\/)+/, ''))
  }

  #named(naming: { kind: 'L' | 'x'; chunks: Buffer[] }): void {
    const text = Buffer.concat(naming.chunks).toString('utf8')
    this.#naming = null
    if (naming.kind === 'L') this.#nextName = text.replace(/\0.*$/s, '')
    else this.#nextName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(text)?.[1] ?? this.#nextName
  }
}

const text = (block: Buffer, start: number, length: number) => {
  const field = block.subarray(start, start + length)
  const end = field.indexOf(0)
  return field.subarray(0, end < 0 ? length : end).toString('utf8')
}

function checksumHolds(block: Buffer): boolean {
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]
  return parseInt(text(block, 148, 8).trim(), 8) === sum
}

function sizeOf(block: Buffer): number {
  // Sizes too large for octal are base-256, flagged by the high bit.
  if (block[124] & 0x80) return block.subarray(125, 136).reduce((size, byte) => size * 256 + byte, 0)
  return parseInt(text(block, 124, 12).trim() || '0', 8)
}

function pathOf(block: Buffer): string {
  const name = text(block, 0, 100)
  const prefix = text(block, 257, 5) === 'ustar' ? text(block, 345, 155) : ''
  return prefix ? `${prefix}/${name}` : name
}

/** What the bytes hold: gzip or not, and the files of the tar archive inside. */
export async function inspectArchive(bytes: Buffer): Promise<ArchiveFacts> {
  const head = bytes.subarray(0, 4).toString('hex').replace(/(..)(?=.)/g, '$1 ')
  if (!bytes.subarray(0, 2).equals(GZIP_MAGIC)) return { gzip: false, head, files: null, error: 'it is not gzip-compressed' }
  const listing = new TarListing()
  try {
    for await (const chunk of Readable.from([bytes]).pipe(createGunzip())) listing.push(chunk as Buffer)
    return { gzip: true, head, files: listing.finish(), error: null }
  } catch (error) {
    const reason = (error as Error & { code?: string }).code?.startsWith('Z_') ? `its gzip data is damaged (${(error as Error).message})` : (error as Error).message
    return { gzip: true, head, files: null, error: reason }
  }
}
