export * from "./backend.js";
export * from "./berth-process.js";
export * from "./control-plane.js";
export * from "./deployments.js";
export * from "./http.js";
export * from "./paths.js";
export * from "./ports.js";
