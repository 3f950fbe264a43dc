export * from "./address-ranges.js";
export * from "./listener-protocol.js";
export * from "./statuses.js";
