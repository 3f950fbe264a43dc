/**
 * Converts graph values to the JSON the API returns: LangChain messages become
 * flat objects (`type`, `content`, `id`, ...), other values keep their shape.
 */
export function toWire(value: unknown): unknown {
  return convert(value, 0);
}

const MAX_DEPTH = 64;

/**
 * The fields of each message type, as LangChain's `toDict()` gives them (what
 * the reference server sends): the ones in OPTIONAL_FIELDS only when set.
 */
const COMMON_MESSAGE_FIELDS = ["content", "additional_kwargs", "response_metadata", "id", "name"] as const;
const FIELDS_BY_TYPE: Record<string, readonly string[]> = {
  ai: ["tool_calls", "invalid_tool_calls", "usage_metadata"],
  tool: ["tool_call_id", "artifact", "status"],
  function: [],
  generic: ["role"],
  chat: ["role"],
};
const OPTIONAL_FIELDS = new Set(["id", "name", "usage_metadata", "artifact", "status"]);

interface MessageLike {
  getType?: () => string;
  _getType?: () => string;
  lc_namespace?: unknown;
  [field: string]: unknown;
}

function isMessage(value: object): value is MessageLike {
  const candidate = value as MessageLike;
  return (
    Array.isArray(candidate.lc_namespace) &&
    candidate.lc_namespace.includes("messages") &&
    (typeof candidate.getType === "function" || typeof candidate._getType === "function")
  );
}

function messageToWire(message: MessageLike): Record<string, unknown> {
  const type = typeof message.getType === "function" ? message.getType() : message._getType!();
  const isChunk = message.constructor?.name?.endsWith("Chunk") ?? false;
  const wire: Record<string, unknown> = { type: isChunk && type === "ai" ? "AIMessageChunk" : type };
  for (const field of [...COMMON_MESSAGE_FIELDS, ...(FIELDS_BY_TYPE[type] ?? [])]) {
    const value = message[field];
    if ((value === undefined || value === null) && OPTIONAL_FIELDS.has(field)) continue;
    wire[field] = convert(value ?? defaultFor(field), 1);
  }
  if (isChunk && type === "ai") wire.tool_call_chunks = convert(message.tool_call_chunks ?? [], 1);
  return wire;
}

function defaultFor(field: string): unknown {
  switch (field) {
    case "additional_kwargs":
    case "response_metadata":
      return {};
    case "tool_calls":
    case "invalid_tool_calls":
      return [];
    default:
      return null;
  }
}

function convert(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object") return value === undefined ? null : value;
  if (depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.map((item) => convert(item, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (isMessage(value)) return messageToWire(value);
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === "function" && !isPlainObject(value)) return convert(toJSON.call(value), depth + 1);
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined) result[key] = convert(item, depth + 1);
  }
  return result;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
