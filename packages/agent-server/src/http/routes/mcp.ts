import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { McpToolService } from "../../services/mcp-tools.js";
import type { Services } from "../../services/index.js";
import { accessOf } from "../auth/access.js";
import type { HeaderSelector } from "../header-patterns.js";
import { acceptsMcpReply, readEnvelope } from "../mcp/envelope.js";
import { McpMethods } from "../mcp/methods.js";
import { acceptsProtocolVersionHeader, SUPPORTED_PROTOCOL_VERSIONS } from "../mcp/protocol-version.js";
import { withRequestHeaders } from "../request-headers.js";
import { EnvelopeErrorSchema, JsonRpcMessageSchema, JsonRpcReplySchema } from "../schemas/mcp.js";
import { disconnectSignal, sendJsonWhenReady } from "../sse.js";
import type { ServerInfo } from "./meta.js";
import type { RouteDef } from "./route-table.js";

export interface McpRouteOptions {
  info: ServerInfo;
  /** A long tool call sends a newline this often until its reply, as `/runs/wait` does, so proxies keep it open. */
  keepAliveMs: number;
  /** Which request headers reach the run's `configurable` (`http.configurable_headers`), as for `/runs/wait`. */
  forwardHeaders: HeaderSelector;
}

/** `/mcp` and `/mcp/` (the reference's OpenAPI spells it so). */
const PATHS = ["/mcp", "/mcp/"] as const;

/** `/mcp`: every assistant as a tool of a stateless MCP server (streamable HTTP, JSON replies). */
export function mcpRoutes(services: Services, options: McpRouteOptions): RouteDef[] {
  const methods = new McpMethods(new McpToolService(services.assistants, services.runs), {
    name: "Berth",
    version: options.info.version,
  });
  return [
    {
      method: "POST",
      path: "/mcp",
      register: ({ app, catalog }, tag) => {
        catalog.push({
          method: "POST",
          path: "/mcp",
          tag,
          summary:
            "MCP (streamable HTTP, stateless): initialize, tools/list (the assistants), tools/call (a stateless run); also /mcp/",
          body: JsonRpcMessageSchema,
          responses: {
            200: { description: "The JSON-RPC reply (errors included)", schema: JsonRpcReplySchema },
            202: { description: "A notification or a response: accepted, no body" },
            400: { description: "Not JSON, not JSON-RPC 2.0, or an Accept without JSON", schema: EnvelopeErrorSchema },
          },
        });
        // Its own body parser: the text as sent, so bad JSON is MCP's 400 `{error}`, after authentication.
        app.register(async (scope: FastifyInstance) => {
          scope.removeAllContentTypeParsers();
          scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
          for (const path of PATHS) {
            scope.post(path, (request, reply) => answerMessage(methods, options, request, reply));
          }
        });
      },
    },
    refusal("GET", 405, "No server-to-client stream: this MCP server is stateless; POST JSON-RPC messages", {
      allow: "POST",
    }),
    refusal("DELETE", 404, "No MCP sessions to end: this server is stateless"),
  ];
}

async function answerMessage(
  methods: McpMethods,
  { keepAliveMs, forwardHeaders }: McpRouteOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  if (!acceptsMcpReply(request.headers.accept)) {
    return badEnvelope(reply, "Not Acceptable: the Accept header must allow application/json or text/event-stream");
  }
  if (!acceptsProtocolVersionHeader(request.headers["mcp-protocol-version"])) {
    return badEnvelope(reply, `Unsupported MCP-Protocol-Version; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`);
  }
  const envelope = readEnvelope(typeof request.body === "string" ? request.body : undefined);
  if (envelope.kind === "refuse") return badEnvelope(reply, envelope.error);
  if (envelope.kind === "acknowledge") {
    await reply.status(202).send();
    return;
  }
  const signal = disconnectSignal(reply);
  // The run gets the request's forwarded headers and user in `configurable`, as a run created through `/runs/wait`.
  const { config } = withRequestHeaders({ config: null }, request.headers, request.user, forwardHeaders);
  const { answer } = await methods.answer(envelope.request, { access: accessOf(request), config, signal });
  await sendJsonWhenReady(reply, answer, { keepAliveMs, headers: {} });
}

async function badEnvelope(reply: FastifyReply, error: string): Promise<void> {
  await reply.status(400).send({ error });
}

/** A method `/mcp` does not serve, answered with `status` and why. */
function refusal(method: "GET" | "DELETE", status: number, error: string, headers: Record<string, string> = {}): RouteDef {
  return {
    method,
    path: "/mcp",
    register: ({ app, catalog }, tag) => {
      catalog.push({
        method,
        path: "/mcp",
        tag,
        summary: `Not served (${status}): the MCP server is stateless`,
        responses: { [status]: { description: error, schema: EnvelopeErrorSchema } },
      });
      for (const path of PATHS)
        app.route({ method, url: path, handler: (_request, reply) => reply.status(status).headers(headers).send({ error }) });
    },
  };
}
