import type { CheckResult } from "./check.js";

export { startServer, type RunningServer, type ServerOptions } from "./server.js";
export { ConfigError } from "./config/langgraph-config.js";
export { GraphLoadError } from "./graphs/registry.js";
export { useCompiledModules, useTypeScriptLoader } from "./graphs/project-module.js";
export { readCompiledModules } from "./graphs/compiled-modules.js";
export type { CheckResult };
/** Test-only: faults a test harness passes to `startServer({ faults })`. */
export { TestFaults } from "./runs/execution/test-faults.js";

/** check.ts's checkProject, loaded when called: a server does not load what only `berth check` needs. */
export async function checkProject(config: string): Promise<CheckResult> {
  return (await import("./check.js")).checkProject(config);
}
