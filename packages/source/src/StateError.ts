/** A stream's saved state does not have the shape this version writes. */
import * as Data from "effect/Data"

export class StateError extends Data.TaggedError("StateError")<{
  readonly stream: string
  readonly path: string
  readonly description: string
  /** What to do about it; by default, start the stream afresh. */
  readonly advice?: string
}> {
  override get message(): string {
    return `the saved state of stream ${this.stream} is not readable at ${this.path}: ${this.description}. ${this.advice ?? "Remove that stream's state to start it afresh."}`
  }
}
