import { z } from "zod";

/** A JSON-RPC id: the reply carries the same value back. */
export const JsonRpcIdSchema = z.union([z.string(), z.number()]);

const ParamsSchema = z.record(z.string(), z.unknown());

/** A request: it has an id and a method, and is answered with the same id. */
export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema,
  method: z.string(),
  params: ParamsSchema.optional(),
});

/** A notification: a method without an id; nothing answers it (202). */
export const JsonRpcNotificationSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  params: ParamsSchema.optional(),
});

export const JsonRpcErrorSchema = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

/** A response a client sends back (to a server request this server never makes): acknowledged with 202. */
export const JsonRpcClientResponseSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema.nullable(),
  result: z.unknown().optional(),
  error: JsonRpcErrorSchema.optional(),
});

/** Any message a client may POST to `/mcp` (one per request: no batches). */
export const JsonRpcMessageSchema = z.union([JsonRpcRequestSchema, JsonRpcNotificationSchema, JsonRpcClientResponseSchema]);

export const JsonRpcSuccessSchema = z.object({ jsonrpc: z.literal("2.0"), id: JsonRpcIdSchema, result: z.unknown() });
export const JsonRpcFailureSchema = z.object({ jsonrpc: z.literal("2.0"), id: JsonRpcIdSchema, error: JsonRpcErrorSchema });
export const JsonRpcReplySchema = z.union([JsonRpcSuccessSchema, JsonRpcFailureSchema]);

/** An envelope refused before any JSON-RPC processing (bad JSON, no `jsonrpc: "2.0"`, a bad Accept): HTTP 400. */
export const EnvelopeErrorSchema = z.object({ error: z.string() });

export const InitializeParamsSchema = z.looseObject({ protocolVersion: z.string().optional() });

export const InitializeResultSchema = z.object({
  protocolVersion: z.string(),
  capabilities: z.object({ tools: z.object({ listChanged: z.boolean() }) }),
  serverInfo: z.object({ name: z.string(), version: z.string() }),
});

/** `cursor`: the offset of the page, as the previous page's `nextCursor` gave it (a string; a number is taken too). */
export const ToolsListParamsSchema = z.looseObject({
  cursor: z
    .union([z.string().regex(/^\d+$/, "a cursor from nextCursor"), z.number().int().min(0)])
    .transform(Number)
    .optional(),
});

export const ToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.looseObject({ type: z.literal("object") }),
});

export const ToolsListResultSchema = z.object({ tools: z.array(ToolSchema), nextCursor: z.string().optional() });

export const ToolsCallParamsSchema = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

export const CallToolResultSchema = z.object({
  content: z.array(z.object({ type: z.literal("text"), text: z.string() })),
  isError: z.boolean().optional(),
});

export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;
export type JsonRpcReply = z.infer<typeof JsonRpcReplySchema>;
export type InitializeResult = z.infer<typeof InitializeResultSchema>;
export type McpTool = z.infer<typeof ToolSchema>;
export type ToolsListResult = z.infer<typeof ToolsListResultSchema>;
export type CallToolResult = z.infer<typeof CallToolResultSchema>;
