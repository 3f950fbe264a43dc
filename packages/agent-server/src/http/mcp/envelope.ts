import {
  JsonRpcClientResponseSchema,
  JsonRpcNotificationSchema,
  type JsonRpcRequest,
  JsonRpcRequestSchema,
} from "../schemas/mcp.js";

/** What one POST to `/mcp` holds: a request to answer, a message to acknowledge (202), or an envelope to refuse (400). */
export type McpEnvelope =
  | { kind: "request"; request: JsonRpcRequest }
  | { kind: "acknowledge" }
  | { kind: "refuse"; error: string };

/**
 * Whether the client takes a JSON reply. MCP clients send `application/json, text/event-stream`; either one (or a
 * wildcard that covers JSON) is enough. No Accept header means anything is acceptable (HTTP's rule).
 */
export function acceptsMcpReply(accept: string | undefined): boolean {
  if (accept === undefined) return true;
  return accept
    .split(",")
    .map((range) => range.split(";", 1)[0]!.trim().toLowerCase())
    .some((type) => ["application/json", "text/event-stream", "application/*", "*/*"].includes(type));
}

/** The POSTed text as one JSON-RPC 2.0 message. */
export function readEnvelope(text: string | undefined): McpEnvelope {
  let body: unknown;
  try {
    body = JSON.parse(text ?? "");
  } catch {
    return { kind: "refuse", error: "Invalid JSON" };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { kind: "refuse", error: "Invalid JSON-RPC message: the body must be one JSON object (no batches)" };
  }
  if ((body as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
    return { kind: "refuse", error: 'Invalid JSON-RPC message: "jsonrpc" must be "2.0"' };
  }
  const hasId = "id" in body;
  const hasMethod = "method" in body;
  if (hasId && hasMethod) {
    const request = JsonRpcRequestSchema.safeParse(body);
    if (request.success) return { kind: "request", request: request.data };
    return { kind: "refuse", error: "Invalid JSON-RPC request: a string method, a string or number id, object params" };
  }
  if (hasMethod && JsonRpcNotificationSchema.safeParse(body).success) return { kind: "acknowledge" };
  if (hasId && JsonRpcClientResponseSchema.safeParse(body).success) return { kind: "acknowledge" };
  return { kind: "refuse", error: "Invalid JSON-RPC message: neither a request, a notification nor a response" };
}
