export * from "./errors.js";
export * from "./http/errors.js";
export * from "./http/json-body.js";
export * from "./http/openapi.js";
export * from "./http/route.js";
export * from "./postgres.js";
export * from "./sqlite.js";
export * from "./logger.js";
