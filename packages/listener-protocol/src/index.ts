export * from "./address-ranges.js";
export * from "./listener-protocol.js";
export * from "./revision-spec.js";
export * from "./statuses.js";
