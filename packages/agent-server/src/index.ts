export { startServer, type RunningServer, type ServerOptions } from "./server.js";
export { ConfigError } from "./config/langgraph-config.js";
export { GraphLoadError } from "./graphs/registry.js";
export { useTypeScriptLoader } from "./graphs/project-module.js";
export { checkProject, type CheckResult } from "./check.js";
/** Test-only: faults a test harness passes to `startServer({ faults })`. */
export { TestFaults } from "./runs/execution/test-faults.js";
