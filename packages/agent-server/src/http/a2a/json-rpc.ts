import { z } from "zod";
import { A2aErrorCode } from "../../services/a2a/protocol.js";

export const JsonRpcIdSchema = z.union([z.string(), z.number(), z.null()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

/** A JSON-RPC 2.0 request; without `id` it is a notification. */
export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema.optional(),
  method: z.string().min(1),
  params: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export function resultResponse(id: JsonRpcId, result: unknown) {
  return { jsonrpc: "2.0" as const, id, result };
}

export function errorResponse(id: JsonRpcId, error: JsonRpcError) {
  return { jsonrpc: "2.0" as const, id, error };
}

/** A body that is not a JSON-RPC request: the HTTP status and the error it is answered with. */
export interface EnvelopeFault {
  status: number;
  body: ReturnType<typeof errorResponse>;
}

/** The request in `text`, or why it is none (bad JSON: -32700; not a 2.0 request: -32600), answered with a 400. */
export function parseEnvelope(text: string): JsonRpcRequest | EnvelopeFault {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fault(null, A2aErrorCode.parseError, `Parse error: ${(error as Error).message}`);
  }
  const parsed = JsonRpcRequestSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const id = JsonRpcIdSchema.safeParse((json as { id?: unknown } | null)?.id);
  const detail = parsed.error.issues.map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`).join("; ");
  return fault(id.success ? id.data : null, A2aErrorCode.invalidRequest, `Invalid Request: ${detail}`);
}

export function isFault(value: JsonRpcRequest | EnvelopeFault): value is EnvelopeFault {
  return "status" in value && "body" in value;
}

function fault(id: JsonRpcId, code: number, message: string): EnvelopeFault {
  return { status: 400, body: errorResponse(id, { code, message }) };
}

/** Whether an `Accept` header lets the answer be `type` (`*` and `type/*` count; no header accepts all). */
export function accepts(header: string | undefined, type: string): boolean {
  if (!header) return true;
  const [major] = type.split("/");
  return header.split(",").some((range) => {
    const media = range.split(";")[0]?.trim().toLowerCase();
    return media === type || media === "*/*" || media === `${major}/*`;
  });
}
