#!/usr/bin/env node
/** salesintel, on this process: its commands are Main.ts's (see there). */
// Not the package index: it loads the HTTP server and, with it, ~20 MB of API docs pages.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { CommandLine } from "@salesintel/command-line"
import { Runs } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { main } from "./Main.ts"

main.pipe(
  Effect.provide(CommandLine.processIo),
  Effect.provide(NodeContext.layer),
  // Signals are the sync's (StopSignal), not the runtime's: the runtime would cut the run short.
  Runs.StopSignal.runMain,
)
