#!/usr/bin/env node
/** source-salesintel, on this process: its commands are Main.ts's (see there). */
// Not the package index: it loads the HTTP server and, with it, ~20 MB of API docs pages.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { CommandLine } from "@salesintel/command-line"
import * as Effect from "effect/Effect"
import { main } from "./Main.ts"

main.pipe(
  Effect.provide(CommandLine.processIo),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false }),
)
