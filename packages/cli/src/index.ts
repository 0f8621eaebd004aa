/**
 * @salesintel/cli as a library: `Sync.sync` is what `salesintel sync` and the demo run; `Main.main`
 * is the whole `salesintel` command on an Io (what its bin runs on the process).
 */
export * as Forget from "./Forget.ts"
export * as Main from "./Main.ts"
export * as Plan from "./Plan.ts"
export * as Progress from "./Progress.ts"
export * as Query from "./Query.ts"
export * as Report from "./Report.ts"
export * as ReportData from "./report/ReportData.ts"
export * as Sync from "./Sync.ts"
export * as TextTable from "./TextTable.ts"
