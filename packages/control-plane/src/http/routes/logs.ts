import { defineRoute, type SseEvent, UnprocessableError, writeEventStream } from "@berth/service-kit";
import type { FastifyRequest } from "fastify";
import type { LogKind } from "../../storage/types.js";
import type { LogService, LogStreamItem } from "../../services/logs.js";
import { OpenStreams } from "../event-streams.js";
import { Detail } from "../schemas/common.js";
import { LogPage, LogQueryBody, LogStreamQuery, ProjectIdParams, ProjectRevisionParams } from "../schemas/deployments.js";
import type { RouteContext } from "./context.js";

const tag = "Logs (v1)";

const STREAMED =
  "Server-Sent Events (text/event-stream): one event per line, its `data` the line as the POST endpoint returns it " +
  "and its `id` how many lines came up to it (send it back as Last-Event-ID, or ?offset=, to resume after it); " +
  "a `: heartbeat` comment after 15 s without a line.";

/** Proxies and browsers drop a connection idle for long. */
const HEARTBEAT_MS = 15_000;

/** `Last-Event-ID` (how many lines the client has), when sent. */
function lastEventId(request: FastifyRequest): number | undefined {
  const header = request.headers["last-event-id"];
  if (header === undefined) return undefined;
  const count = Number(header);
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new UnprocessableError("Last-Event-ID must be the id of an event of this stream", ["header", "last-event-id"]);
  }
  return count;
}

async function* eventsOf(items: AsyncIterable<LogStreamItem>): AsyncGenerator<SseEvent> {
  for await (const item of items) {
    if (item.kind === "line") yield { id: item.count, data: JSON.stringify(item.line) };
    else yield { event: "end", data: JSON.stringify({ status: item.status, status_message: item.status_message }) };
  }
}

/**
 * Build and server logs, on the paths the official deploy CLI reads (a
 * "project" is a deployment). `/deploy_logs` without a revision reads the
 * server logs of every revision. Each has a `/stream` twin that follows it.
 */
export function registerLogRoutes({ app, catalog, caller }: RouteContext, logs: LogService): void {
  const streams = new OpenStreams(app);
  const routes: { path: string; kind: LogKind; summary: string; perRevision: boolean }[] = [
    {
      path: "/v1/projects/:deployment_id/revisions/:revision_id/build_logs",
      kind: "build",
      summary: "A revision's build logs",
      perRevision: true,
    },
    {
      path: "/v1/projects/:deployment_id/revisions/:revision_id/deploy_logs",
      kind: "deploy",
      summary: "A revision's server logs",
      perRevision: true,
    },
    {
      path: "/v1/projects/:deployment_id/deploy_logs",
      kind: "deploy",
      summary: "A deployment's server logs",
      perRevision: false,
    },
  ];
  for (const route of routes) {
    const params = route.perRevision ? ProjectRevisionParams : ProjectIdParams;
    defineRoute(
      app,
      catalog,
      {
        method: "POST",
        path: route.path,
        summary: route.summary,
        tag,
        params,
        body: LogQueryBody,
        bodyOptional: true,
        responses: {
          200: { description: "A page of log lines", schema: LogPage },
          404: { description: "Not found", schema: Detail },
        },
      },
      async ({ params, body, request }) => {
        const { tenantId } = await caller(request);
        const revisionId = "revision_id" in params ? (params.revision_id as string) : undefined;
        return logs.query(tenantId, params.deployment_id, revisionId, route.kind, body);
      },
    );
    defineRoute(
      app,
      catalog,
      {
        method: "GET",
        path: `${route.path}/stream`,
        summary: `${route.summary}, oldest first, then each new line as it comes`,
        tag,
        params,
        query: LogStreamQuery,
        responses: {
          200: {
            description:
              route.kind === "build"
                ? `${STREAMED} Ends with \`event: end\` (data: {status, status_message}) once the revision is final and every line was sent.`
                : `${STREAMED} Stays open until the client goes away.`,
          },
          404: { description: "Not found", schema: Detail },
        },
      },
      async ({ params, query, request, reply }) => {
        const { tenantId } = await caller(request);
        const revisionId = "revision_id" in params ? (params.revision_id as string) : undefined;
        const after = lastEventId(request) ?? query.offset;
        const signal = streams.signal(reply);
        const items = await logs.follow(tenantId, params.deployment_id, revisionId, route.kind, after, signal);
        await writeEventStream(reply, eventsOf(items), { heartbeatMs: HEARTBEAT_MS });
      },
    );
  }
}
