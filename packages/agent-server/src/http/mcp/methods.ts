import type { z } from "zod";
import { type McpToolService, type ToolCallOptions, ToolLookupError, type ToolOutcome } from "../../services/mcp-tools.js";
import type { JsonObject } from "../../storage/types.js";
import {
  type CallToolResult,
  type InitializeResult,
  InitializeParamsSchema,
  type JsonRpcId,
  type JsonRpcReply,
  type JsonRpcRequest,
  ToolsCallParamsSchema,
  type ToolsListResult,
  ToolsListParamsSchema,
} from "../schemas/mcp.js";
import { negotiatedProtocolVersion } from "./protocol-version.js";

/** JSON-RPC's error codes this server answers with. */
export const JSON_RPC_ERRORS = { methodNotFound: -32601, invalidParams: -32602, internal: -32603 } as const;

/** The name and version `initialize` reports. */
export interface McpServerIdentity {
  name: string;
  version: string;
}

/**
 * A reply whose `answer` may take long (a tool call waits for its run). The outer promise settles once anything
 * that must become an HTTP error (an authorization refusal) has happened; `answer` itself never rejects.
 */
export interface PendingReply {
  answer: Promise<JsonRpcReply>;
}

const replyTo = (id: JsonRpcId, result: unknown): JsonRpcReply => ({ jsonrpc: "2.0", id, result });
const failureOf = (id: JsonRpcId, code: number, message: string): JsonRpcReply => ({
  jsonrpc: "2.0",
  id,
  error: { code, message },
});
const ready = (reply: JsonRpcReply): PendingReply => ({ answer: Promise.resolve(reply) });

/** The MCP methods of a stateless tools server: `initialize`, `ping`, `tools/list`, `tools/call`. */
export class McpMethods {
  constructor(
    private readonly tools: McpToolService,
    private readonly identity: McpServerIdentity,
  ) {}

  async answer(request: JsonRpcRequest, options: ToolCallOptions): Promise<PendingReply> {
    const { id, method } = request;
    const params = request.params ?? {};
    switch (method) {
      case "initialize": {
        const valid = InitializeParamsSchema.safeParse(params);
        if (!valid.success) return ready(invalidParams(id, valid.error));
        return ready(replyTo(id, this.initialize(valid.data)));
      }
      case "ping":
        return ready(replyTo(id, {}));
      case "tools/list": {
        const valid = ToolsListParamsSchema.safeParse(params);
        if (!valid.success) return ready(invalidParams(id, valid.error));
        return ready(replyTo(id, await this.listTools(valid.data.cursor ?? 0, options)));
      }
      case "tools/call": {
        const valid = ToolsCallParamsSchema.safeParse(params);
        if (!valid.success) return ready(invalidParams(id, valid.error));
        return this.callTool(id, valid.data.name, (valid.data.arguments ?? {}) as JsonObject, options);
      }
      default:
        return ready(failureOf(id, JSON_RPC_ERRORS.methodNotFound, `Method not found: ${method}`));
    }
  }

  private initialize(params: z.infer<typeof InitializeParamsSchema>): InitializeResult {
    return {
      protocolVersion: negotiatedProtocolVersion(params.protocolVersion),
      capabilities: { tools: { listChanged: false } },
      serverInfo: this.identity,
    };
  }

  private async listTools(offset: number, { access }: ToolCallOptions): Promise<ToolsListResult> {
    const page = await this.tools.list(offset, access);
    return { tools: page.tools, ...(page.next !== undefined ? { nextCursor: String(page.next) } : {}) };
  }

  private async callTool(id: JsonRpcId, name: string, args: JsonObject, options: ToolCallOptions): Promise<PendingReply> {
    let outcome: Promise<ToolOutcome>;
    try {
      ({ outcome } = await this.tools.call(name, args, options));
    } catch (error) {
      if (error instanceof ToolLookupError) return ready(failureOf(id, JSON_RPC_ERRORS.invalidParams, error.message));
      throw error;
    }
    return {
      answer: outcome.then(
        (ended) => replyTo(id, toolResult(ended)),
        (error: unknown) =>
          failureOf(id, JSON_RPC_ERRORS.internal, `The run's outcome could not be read: ${(error as Error).message}`),
      ),
    };
  }
}

/** The run's output as JSON text; its error as the text of an `isError` result. */
function toolResult(outcome: ToolOutcome): CallToolResult {
  if (!outcome.ok) return { content: [{ type: "text", text: outcome.error }], isError: true };
  return { content: [{ type: "text", text: JSON.stringify(outcome.output ?? null) }] };
}

function invalidParams(id: JsonRpcId, error: z.ZodError): JsonRpcReply {
  const detail = error.issues.map((issue) => `${issue.path.join(".") || "params"}: ${issue.message}`).join("; ");
  return failureOf(id, JSON_RPC_ERRORS.invalidParams, `Invalid params: ${detail}`);
}
