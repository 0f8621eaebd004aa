/**
 * The buffer a COPY's bytes travel to the PGlite worker in, and come back in: one resizable
 * ArrayBuffer, moved to the worker with a COPY (its length exactly the bytes, as PGlite reads
 * `/dev/blob` to the buffer's end) and moved back with the reply, to carry the next one.
 *
 * A buffer per COPY, as before, died in the worker once PGlite had read it, and the worker (its
 * own JavaScript heap small) collected them only every tens of megabytes: a 20,000-contact sync
 * grew the process's malloc heap by 44 MB, most of it such buffers and the Blob copies made of
 * them (bench/README.md, "PGlite's memory").
 */
export class PGliteCopyBuffer {
  /** The buffer back from the worker, waiting for the next COPY (none while one is away). */
  private idle: ArrayBuffer | undefined

  /** Room a new buffer reserves (virtual memory: pages are committed only as it is resized into). */
  static readonly reserve = 64 * 2 ** 20

  /** A buffer holding exactly `data`, to be moved (transferred) to the worker. */
  fill(data: Uint8Array): ArrayBuffer {
    const reused = this.idle !== undefined && this.idle.maxByteLength >= data.length ? this.idle : undefined
    this.idle = undefined
    const buffer =
      reused ??
      new ArrayBuffer(data.length, { maxByteLength: Math.max(PGliteCopyBuffer.reserve, data.length) })
    buffer.resize(data.length)
    new Uint8Array(buffer).set(data)
    return buffer
  }

  /** A buffer the worker moved back: it carries the next COPY. */
  returned(buffer: ArrayBuffer): void {
    if (buffer.resizable) this.idle = buffer
  }
}
