import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Access } from "../../services/authorization.js";
import type { RunCreateInput, RunService } from "../../services/runs.js";
import type { Run } from "../../storage/types.js";
import { defineRoute, NotFoundError, type SseEvent, writeEventStream } from "@berth/service-kit";
import {
  CancelManyBodySchema,
  CancelManyQuerySchema,
  CancelQuerySchema,
  JoinStreamQuerySchema,
  RunSchema,
  RunCreateSchema,
  RunListQuerySchema,
  RunParamsSchema,
  StatelessRunParamsSchema,
  ThreadStreamQuerySchema,
} from "../schemas/runs.js";
import { ThreadIdParamsSchema } from "../schemas/threads.js";
import { withRequestHeaders } from "../request-headers.js";
import { disconnectSignal, runEvents, sendJsonWhenReady } from "../sse.js";
import { accessOf } from "../auth/access.js";
import type { HeaderSelector } from "../header-patterns.js";
import type { RouteContext } from "./context.js";

export interface StreamTimings {
  heartbeatMs: number;
  keepAliveMs: number;
}

const tag = "runs";

function runLocation(run: Run, stateless: boolean): string {
  return stateless ? `/runs/${run.run_id}` : `/threads/${run.thread_id}/runs/${run.run_id}`;
}

/** The one event of a join stream whose run the user cannot see. */
async function* runNotFound(): AsyncGenerator<SseEvent> {
  yield { event: "error", data: JSON.stringify({ error: "NotFoundError", message: "404: Run not found" }) };
}

/** `Last-Event-ID` as a sequence number; undefined when absent. */
function lastEventId(request: FastifyRequest): number | undefined {
  const header = request.headers["last-event-id"];
  if (header === undefined) return undefined;
  const value = Number.parseInt(String(header), 10);
  return Number.isFinite(value) ? value : -1;
}

/** `forwardHeaders`: which request headers reach a run's `configurable` (`http.configurable_headers`). */
export function registerRunRoutes(
  { app, catalog }: RouteContext,
  runs: RunService,
  timings: StreamTimings,
  forwardHeaders: HeaderSelector,
): void {
  /** Streams a new run from its first event; the headers let the SDK rejoin after a disconnect. */
  async function streamNew(threadId: string | undefined, body: RunCreateInput, access: Access, reply: FastifyReply) {
    const signal = disconnectSignal(reply);
    const { run, ended, events } = await runs.start(threadId, body, { follow: true, signal, access });
    ended.cancel();
    const location = runLocation(run, threadId === undefined);
    if (body.on_disconnect === "cancel") signal.addEventListener("abort", () => void runs.cancel(run, "interrupt", false));
    await writeEventStream(reply, runEvents(events!), {
      heartbeatMs: timings.heartbeatMs,
      headers: { "content-location": location, location: `${location}/stream` },
    });
  }

  async function waitNew(threadId: string | undefined, body: RunCreateInput, access: Access, reply: FastifyReply) {
    const signal = disconnectSignal(reply);
    const { run, ended } = await runs.start(threadId, body, { follow: false, access });
    if (body.on_disconnect === "cancel") signal.addEventListener("abort", () => void runs.cancel(run, "interrupt", false));
    await sendJsonWhenReady(reply, runs.output(run, ended), {
      keepAliveMs: timings.keepAliveMs,
      headers: { "content-location": runLocation(run, threadId === undefined) },
    });
  }

  const created = { 200: { description: "The run (Content-Location: its URL)", schema: RunSchema } };
  const streamed = { 200: { description: "Server-Sent Events of the run (Location: the join URL)" } };
  const waited = { 200: { description: "The run's final values, or {__error__}" } };

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/runs",
      summary: "Create a background run",
      tag,
      params: ThreadIdParamsSchema,
      body: RunCreateSchema,
      responses: created,
    },
    async ({ params, body, request, reply }) => {
      const run = await runs.create(
        params.thread_id,
        withRequestHeaders(body, request.headers, request.user, forwardHeaders),
        accessOf(request),
      );
      reply.header("content-location", runLocation(run, false));
      return run;
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/runs/stream",
      summary: "Create a run and stream it",
      tag,
      params: ThreadIdParamsSchema,
      body: RunCreateSchema,
      responses: streamed,
    },
    ({ params, body, request, reply }) =>
      streamNew(
        params.thread_id,
        withRequestHeaders(body, request.headers, request.user, forwardHeaders),
        accessOf(request),
        reply,
      ),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/runs/wait",
      summary: "Create a run and wait for its output",
      tag,
      params: ThreadIdParamsSchema,
      body: RunCreateSchema,
      responses: waited,
    },
    ({ params, body, request, reply }) =>
      waitNew(
        params.thread_id,
        withRequestHeaders(body, request.headers, request.user, forwardHeaders),
        accessOf(request),
        reply,
      ),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/runs",
      summary: "List a thread's runs, newest first",
      tag,
      params: ThreadIdParamsSchema,
      query: RunListQuerySchema,
      responses: { 200: { description: "Runs", schema: z.array(RunSchema) } },
    },
    ({ params, query, request }) => runs.list(params.thread_id, query, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/runs/:run_id",
      summary: "Get a run",
      tag,
      params: RunParamsSchema,
      responses: created,
    },
    ({ params, request }) => runs.get(params.thread_id, params.run_id, accessOf(request)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "DELETE",
      path: "/threads/:thread_id/runs/:run_id",
      summary: "Delete an ended run",
      tag,
      params: RunParamsSchema,
      responses: { 204: { description: "Deleted" }, 409: { description: "The run is still active" } },
    },
    async ({ params, request, reply }) => {
      await runs.delete(params.thread_id, params.run_id, accessOf(request));
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/runs/:run_id/join",
      summary: "Wait for a run's output",
      tag,
      params: RunParamsSchema,
      responses: waited,
    },
    async ({ params, request, reply }) => {
      const run = await runs.get(params.thread_id, params.run_id, accessOf(request));
      await sendJsonWhenReady(reply, runs.join(run, disconnectSignal(reply)), { keepAliveMs: timings.keepAliveMs, headers: {} });
    },
  );

  async function joinStream(
    threadId: string | undefined,
    runId: string,
    cancelOnDisconnect: boolean,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    const run = await runs.get(threadId, runId, accessOf(request)).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (!run) {
      // As the reference server answers it: an open stream whose one event is the 404, for a run of another user's
      // thread and a run that does not exist alike.
      await writeEventStream(reply, runNotFound(), { heartbeatMs: timings.heartbeatMs });
      return;
    }
    const signal = disconnectSignal(reply);
    // Without Last-Event-ID a joiner only gets what comes after it joined.
    const after = lastEventId(request) ?? (await runs.lastSeq(run.run_id));
    if (cancelOnDisconnect) signal.addEventListener("abort", () => void runs.cancel(run, "interrupt", false));
    const location = runLocation(run, threadId === undefined);
    await writeEventStream(reply, runEvents(await runs.follow(run.run_id, after, signal)), {
      heartbeatMs: timings.heartbeatMs,
      headers: { "content-location": location, location: `${location}/stream` },
    });
  }

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/runs/:run_id/stream",
      summary: "Join a run's event stream (Last-Event-ID resumes after that event; -1 replays all)",
      tag,
      params: RunParamsSchema,
      query: JoinStreamQuerySchema,
      responses: streamed,
    },
    ({ params, query, request, reply }) =>
      joinStream(params.thread_id, params.run_id, query.cancel_on_disconnect, request, reply),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/threads/:thread_id/runs/:run_id/cancel",
      summary: "Cancel a run (action interrupt keeps its progress, rollback deletes it)",
      tag,
      params: RunParamsSchema,
      query: CancelQuerySchema,
      responses: { 202: { description: "Cancelling" }, 204: { description: "Cancelled (wait=true)" } },
    },
    async ({ params, query, request, reply }) => {
      const run = await runs.get(params.thread_id, params.run_id, accessOf(request), "update");
      await runs.cancel(run, query.action, query.wait);
      return reply.status(query.wait ? 204 : 202).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/threads/:thread_id/stream",
      summary: "Follow every run of a thread (event ids are <run_id>:<seq>; Last-Event-ID resumes)",
      tag,
      params: ThreadIdParamsSchema,
      query: ThreadStreamQuerySchema,
      responses: streamed,
    },
    async ({ params, request, reply }) => {
      const header = request.headers["last-event-id"];
      const events = await runs.followThread(
        params.thread_id,
        typeof header === "string" ? header : undefined,
        disconnectSignal(reply),
        accessOf(request),
      );
      await writeEventStream(reply, events, { heartbeatMs: timings.heartbeatMs, headers: {} });
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs",
      summary: "Create a stateless background run",
      tag,
      body: RunCreateSchema,
      responses: created,
    },
    async ({ body, request, reply }) => {
      const run = await runs.create(
        undefined,
        withRequestHeaders(body, request.headers, request.user, forwardHeaders),
        accessOf(request),
      );
      reply.header("content-location", runLocation(run, true));
      return run;
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/stream",
      summary: "Create a stateless run and stream it",
      tag,
      body: RunCreateSchema,
      responses: streamed,
    },
    ({ body, request, reply }) =>
      streamNew(undefined, withRequestHeaders(body, request.headers, request.user, forwardHeaders), accessOf(request), reply),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/wait",
      summary: "Create a stateless run and wait for its output",
      tag,
      body: RunCreateSchema,
      responses: waited,
    },
    ({ body, request, reply }) =>
      waitNew(undefined, withRequestHeaders(body, request.headers, request.user, forwardHeaders), accessOf(request), reply),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/batch",
      summary: "Create several stateless background runs",
      tag,
      body: z.array(RunCreateSchema).min(1).max(1000),
      responses: { 200: { description: "The runs", schema: z.array(RunSchema) } },
    },
    async ({ body, request }) => {
      const created: Run[] = [];
      for (const item of body)
        created.push(
          await runs.create(
            undefined,
            withRequestHeaders(item, request.headers, request.user, forwardHeaders),
            accessOf(request),
          ),
        );
      return created;
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/runs/cancel",
      summary: "Cancel runs by thread, ids or status",
      tag,
      body: CancelManyBodySchema,
      query: CancelManyQuerySchema,
      responses: { 204: { description: "Cancelled" } },
    },
    async ({ body, query, request, reply }) => {
      await runs.cancelMany(body, query.action, accessOf(request));
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/runs/:run_id/stream",
      summary: "Join a stateless run's event stream",
      tag,
      params: StatelessRunParamsSchema,
      query: JoinStreamQuerySchema,
      responses: streamed,
    },
    ({ params, query, request, reply }) => joinStream(undefined, params.run_id, query.cancel_on_disconnect, request, reply),
  );
}
