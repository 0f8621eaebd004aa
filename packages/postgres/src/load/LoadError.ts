/**
 * Why a load stops on its input (database failures are DatabaseError). `position` is the 1-based
 * index of the message in the input: the line number when it comes from a JSON-lines file. A line
 * that is no protocol message at all is the reader's error (Ndjson.InvalidMessage).
 */
import * as Data from "effect/Data"

/** A RECORD or STATE of a stream the loader has no tables for (a state it could never use). */
export class UnknownStream extends Data.TaggedError("UnknownStream")<{
  readonly stream: string
  readonly position: number
  readonly known: ReadonlyArray<string>
  readonly of?: "record" | "state"
}> {
  override get message(): string {
    return `message ${this.position}: a ${this.of ?? "record"} of unknown stream "${this.stream}" (streams: ${this.known.join(", ")})`
  }
}

/** A RECORD whose data does not decode as its stream's record. */
export class InvalidRecord extends Data.TaggedError("InvalidRecord")<{
  readonly stream: string
  readonly position: number
  readonly path: string
  readonly description: string
}> {
  override get message(): string {
    return `message ${this.position}: invalid ${this.stream} record at ${this.path}: ${this.description}`
  }
}

export type LoadError = UnknownStream | InvalidRecord
