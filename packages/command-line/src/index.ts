/**
 * @salesintel/command-line: how the three bins (`salesintel`, `source-salesintel`,
 * `salesintel-pg`) behave on the command line, written once on @effect/cli, and the JSON files
 * they read. Import a module as a namespace: `import { CommandLine, JsonFile } from "@salesintel/command-line"`.
 */
export * as CommandLine from "./CommandLine.ts"
export * as JsonFile from "./JsonFile.ts"
