/**
 * Option values checked at parsing, with @effect/cli's `Options.mapEffect`: a value that does not
 * hold is a usage error naming the option, the value and what was expected, in the user's words.
 */
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import * as Effect from "effect/Effect"
import { quote } from "./Request.ts"

/**
 * Options.text with a check run at parsing: a failed check is a usage error naming the option,
 * the value (as `show` renders it: a URL without its password) and what was expected.
 */
export const checkedText = (
  name: string,
  check: (value: string) => string | undefined,
  show: (value: string) => string = (value) => value,
): Options.Options<string> =>
  Options.text(name).pipe(
    Options.mapEffect((value) => {
      const problem = check(value)
      return problem === undefined
        ? Effect.succeed(value)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} ${quote(show(value))}: ${problem}`)))
    }),
  )

/**
 * A whole-number option of at least `least`, checked at parsing: anything else is a usage error
 * naming the option, the value and what it counts (`--limit 'x': expected how many runs, a whole
 * number from 1`).
 */
export const wholeNumber = (name: string, least: number, what: string): Options.Options<number> =>
  checkedText(name, (value) =>
    /^\d+$/.test(value) && Number.isSafeInteger(Number(value)) && Number(value) >= least
      ? undefined
      : `expected ${what}, a whole number from ${least}`,
  ).pipe(Options.map(Number))

/** One of `values`, checked at parsing: anything else is a usage error naming the option and them. */
export const choice = <const A extends string>(
  name: string,
  values: ReadonlyArray<A>,
): Options.Options<A> => {
  const allowed = `${values.slice(0, -1).join(", ")}${values.length > 1 ? " or " : ""}${values.at(-1) ?? ""}`
  const isValue = (value: string): value is A => values.some((each) => each === value)
  return checkedText(name, (value) => (isValue(value) ? undefined : `expected ${allowed}`)).pipe(
    Options.map((value) => values.find((each) => each === value) ?? (values[0] as A)),
  )
}
