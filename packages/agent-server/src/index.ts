export { startServer, type RunningServer, type ServerOptions } from "./server.js";
export { ConfigError } from "./config/langgraph-config.js";
export { GraphLoadError } from "./graphs/registry.js";
export { checkProject, type CheckResult } from "./check.js";
