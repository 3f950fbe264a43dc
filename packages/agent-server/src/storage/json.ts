// A leaf, so that types.ts and memory-store-types.ts (which types.ts imports) share it without an import cycle.

/** A JSON object as stored and returned by the API. */
export type JsonObject = Record<string, unknown>;
