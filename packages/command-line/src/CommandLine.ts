/**
 * What a bin imports to declare and run its commands, as one namespace: declarations
 * (`Command.ts`), the options every command shares (`Request.ts`), help (`Help.ts`), checked
 * option values (`Values.ts`), log output (`Logging.ts`), running (`Run.ts`) and what a command
 * gets from its process: arguments, environment, streams, signals, exit code (`Io.ts`).
 */
export * from "./Command.ts"
export * from "./Help.ts"
export * from "./Io.ts"
export * from "./Logging.ts"
export * from "./Request.ts"
export * from "./Run.ts"
export * from "./Values.ts"
