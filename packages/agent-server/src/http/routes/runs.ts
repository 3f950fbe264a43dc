import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Access } from "../../services/authorization.js";
import type { RunCreateInput, RunService } from "../../services/runs.js";
import type { Run } from "../../storage/types.js";
import {
  type HttpMethod,
  NotFoundError,
  type RouteInput,
  type RouteSpec,
  type SseEvent,
  writeEventStream,
} from "@berth/service-kit";
import {
  CancelManyBodySchema,
  CancelManyQuerySchema,
  CancelQuerySchema,
  JoinStreamQuerySchema,
  RunCreateSchema,
  RunListQuerySchema,
  RunParamsSchema,
  RunSchema,
  StatelessRunParamsSchema,
  ThreadStreamQuerySchema,
} from "../schemas/runs.js";
import { ThreadIdParamsSchema } from "../schemas/threads.js";
import { withRequestHeaders } from "../request-headers.js";
import { disconnectSignal, runEventFrame, sendJsonWhenReady } from "../sse.js";
import { accessOf } from "../auth/access.js";
import type { HeaderSelector } from "../header-patterns.js";
import { type RouteDef, route } from "./route-table.js";

export interface StreamTimings {
  heartbeatMs: number;
  keepAliveMs: number;
}

/** What the runs routes serve with. `forwardHeaders`: which request headers reach a run's `configurable` (`http.configurable_headers`). */
export interface RunRouteDeps {
  runs: RunService;
  timings: StreamTimings;
  forwardHeaders: HeaderSelector;
}

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

/**
 * A run route under a thread (`/threads/:thread_id/runs…`) that also exists stateless (`/runs…`): one declaration and
 * one handler, which gets the thread's id, or undefined for the stateless variant.
 */
interface ThreadOrStatelessRoute<P extends z.ZodObject, Q extends z.ZodType, B extends z.ZodType> {
  method: HttpMethod;
  /** The path after `…/runs`: `""`, `/stream`, `/:run_id/stream`. */
  path: string;
  summary: string;
  statelessSummary: string;
  /** The path parameters besides the thread's id, the same in both variants. */
  params: P;
  query?: Q;
  body?: B;
  responses: RouteSpec<P, Q, B>["responses"];
  handler: (threadId: string | undefined, input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>) => Promise<unknown>;
}

/** No path parameters besides the thread's id. */
const NoParams = z.object({});

/** The thread variant and the stateless variant of `declared`, the one derived from the other. */
function threadAndStateless<P extends z.ZodObject, Q extends z.ZodType, B extends z.ZodType>(
  declared: ThreadOrStatelessRoute<P, Q, B>,
): { thread: RouteDef; stateless: RouteDef } {
  const { path, summary, statelessSummary, params, handler, ...shared } = declared;
  const threadParams = ThreadIdParamsSchema.extend(params.shape);
  return {
    // The ids are valid once the route's schema passed; parsed again by parts, so each part has its type.
    thread: route(
      { ...shared, path: `/threads/:thread_id/runs${path}`, summary, params: threadParams },
      ({ params: ids, ...input }) => handler(ThreadIdParamsSchema.parse(ids).thread_id, { ...input, params: params.parse(ids) }),
    ),
    stateless: route({ ...shared, path: `/runs${path}`, summary: statelessSummary, params }, (input) =>
      handler(undefined, input),
    ),
  };
}

const created = { 200: { description: "The run (Content-Location: its URL)", schema: RunSchema } };
const streamed = { 200: { description: "Server-Sent Events of the run (Location: the join URL)" } };
const waited = { 200: { description: "The run's final values, or {__error__}" } };

/** The runs routes: a thread's runs, then the stateless ones. */
export function runRoutes(deps: RunRouteDeps): RouteDef[] {
  const twins = twinRunRoutes(deps);
  return [
    ...twins.map((twin) => twin.thread),
    ...threadRunRoutes(deps),
    ...twins.map((twin) => twin.stateless),
    ...statelessRunRoutes(deps),
  ];
}

/** `body` with the request headers `http.configurable_headers` lets into the run's `configurable`. */
function runInput({ forwardHeaders }: RunRouteDeps, body: RunCreateInput, request: FastifyRequest): RunCreateInput {
  return withRequestHeaders(body, request.headers, request.user, forwardHeaders);
}

/** The routes that exist both on a thread and stateless. */
function twinRunRoutes(deps: RunRouteDeps): { thread: RouteDef; stateless: RouteDef }[] {
  const { runs } = deps;
  return [
    threadAndStateless({
      method: "POST",
      path: "",
      summary: "Create a background run",
      statelessSummary: "Create a stateless background run",
      params: NoParams,
      body: RunCreateSchema,
      responses: created,
      handler: async (threadId, { body, request, reply }) => {
        const run = await runs.create(threadId, runInput(deps, body, request), accessOf(request));
        reply.header("content-location", runLocation(run, threadId === undefined));
        return run;
      },
    }),
    threadAndStateless({
      method: "POST",
      path: "/stream",
      summary: "Create a run and stream it",
      statelessSummary: "Create a stateless run and stream it",
      params: NoParams,
      body: RunCreateSchema,
      responses: streamed,
      handler: (threadId, input) => streamNew(deps, newRun(deps, threadId, input)),
    }),
    threadAndStateless({
      method: "POST",
      path: "/wait",
      summary: "Create a run and wait for its output",
      statelessSummary: "Create a stateless run and wait for its output",
      params: NoParams,
      body: RunCreateSchema,
      responses: waited,
      handler: (threadId, input) => waitNew(deps, newRun(deps, threadId, input)),
    }),
    threadAndStateless({
      method: "GET",
      path: "/:run_id/stream",
      summary: "Join a run's event stream (Last-Event-ID resumes after that event; -1 replays all)",
      statelessSummary: "Join a stateless run's event stream",
      params: StatelessRunParamsSchema,
      query: JoinStreamQuerySchema,
      responses: streamed,
      handler: (threadId, { params, query, request, reply }) =>
        joinRunStream(deps, threadId, params.run_id, query.cancel_on_disconnect, request, reply),
    }),
  ];
}

/** The routes of a thread's runs only. */
function threadRunRoutes({ runs, timings }: RunRouteDeps): RouteDef[] {
  return [
    route(
      {
        method: "GET",
        path: "/threads/:thread_id/runs",
        summary: "List a thread's runs, newest first",
        params: ThreadIdParamsSchema,
        query: RunListQuerySchema,
        responses: { 200: { description: "Runs", schema: z.array(RunSchema) } },
      },
      ({ params, query, request }) => runs.list(params.thread_id, query, accessOf(request)),
    ),
    route(
      {
        method: "GET",
        path: "/threads/:thread_id/runs/:run_id",
        summary: "Get a run",
        params: RunParamsSchema,
        responses: created,
      },
      ({ params, request }) => runs.get(params.thread_id, params.run_id, accessOf(request)),
    ),
    route(
      {
        method: "DELETE",
        path: "/threads/:thread_id/runs/:run_id",
        summary: "Delete an ended run",
        params: RunParamsSchema,
        responses: { 204: { description: "Deleted" }, 409: { description: "The run is still active" } },
      },
      async ({ params, request, reply }) => {
        await runs.delete(params.thread_id, params.run_id, accessOf(request));
        return reply.status(204).send();
      },
    ),
    route(
      {
        method: "GET",
        path: "/threads/:thread_id/runs/:run_id/join",
        summary: "Wait for a run's output",
        params: RunParamsSchema,
        responses: waited,
      },
      async ({ params, request, reply }) => {
        const run = await runs.get(params.thread_id, params.run_id, accessOf(request));
        await sendJsonWhenReady(reply, runs.join(run, disconnectSignal(reply)), {
          keepAliveMs: timings.keepAliveMs,
          headers: {},
        });
      },
    ),
    route(
      {
        method: "POST",
        path: "/threads/:thread_id/runs/:run_id/cancel",
        summary: "Cancel a run (action interrupt keeps its progress, rollback deletes it)",
        params: RunParamsSchema,
        query: CancelQuerySchema,
        responses: { 202: { description: "Cancelling" }, 204: { description: "Cancelled (wait=true)" } },
      },
      async ({ params, query, request, reply }) => {
        const run = await runs.get(params.thread_id, params.run_id, accessOf(request), "update");
        await runs.cancel(run, query.action, query.wait);
        return reply.status(query.wait ? 204 : 202).send();
      },
    ),
    route(
      {
        method: "GET",
        path: "/threads/:thread_id/stream",
        summary: "Follow every run of a thread (event ids are <run_id>:<seq>; Last-Event-ID resumes)",
        params: ThreadIdParamsSchema,
        query: ThreadStreamQuerySchema,
        responses: streamed,
      },
      async ({ params, request, reply }) => {
        const header = request.headers["last-event-id"];
        const lastId = typeof header === "string" ? header : undefined;
        const events = await runs.followThread(params.thread_id, lastId, disconnectSignal(reply), accessOf(request));
        await writeEventStream(reply, events, { heartbeatMs: timings.heartbeatMs, headers: {} });
      },
    ),
  ];
}

/** The routes of stateless runs only. */
function statelessRunRoutes(deps: RunRouteDeps): RouteDef[] {
  const { runs } = deps;
  return [
    route(
      {
        method: "POST",
        path: "/runs/batch",
        summary: "Create several stateless background runs",
        body: z.array(RunCreateSchema).min(1).max(1000),
        responses: { 200: { description: "The runs", schema: z.array(RunSchema) } },
      },
      async ({ body, request }) => {
        const batch: Run[] = [];
        for (const item of body) batch.push(await runs.create(undefined, runInput(deps, item, request), accessOf(request)));
        return batch;
      },
    ),
    route(
      {
        method: "POST",
        path: "/runs/cancel",
        summary: "Cancel runs by thread, ids or status",
        body: CancelManyBodySchema,
        query: CancelManyQuerySchema,
        responses: { 204: { description: "Cancelled" } },
      },
      async ({ body, query, request, reply }) => {
        await runs.cancelMany(body, query.action, accessOf(request));
        return reply.status(204).send();
      },
    ),
  ];
}

/** A request that creates a run: on a thread, or stateless when `threadId` is undefined. */
interface NewRun {
  threadId: string | undefined;
  body: RunCreateInput;
  access: Access;
  reply: FastifyReply;
}

function newRun(
  deps: RunRouteDeps,
  threadId: string | undefined,
  { body, request, reply }: { body: RunCreateInput; request: FastifyRequest; reply: FastifyReply },
): NewRun {
  return { threadId, body: runInput(deps, body, request), access: accessOf(request), reply };
}

/** Interrupts the run when its client leaves (for `on_disconnect: cancel` and `cancel_on_disconnect`). */
function cancelOnDisconnect(runs: RunService, run: Run, signal: AbortSignal): void {
  signal.addEventListener("abort", () => void runs.cancel(run, "interrupt", false));
}

/** Streams a new run from its first event; the headers let the SDK rejoin after a disconnect. */
async function streamNew({ runs, timings }: RunRouteDeps, { threadId, body, access, reply }: NewRun): Promise<void> {
  const signal = disconnectSignal(reply);
  const { run, events } = await runs.startStreaming(threadId, body, { signal, access });
  const location = runLocation(run, threadId === undefined);
  if (body.on_disconnect === "cancel") cancelOnDisconnect(runs, run, signal);
  await writeEventStream(reply, events, {
    encode: runEventFrame,
    heartbeatMs: timings.heartbeatMs,
    headers: { "content-location": location, location: `${location}/stream` },
  });
}

async function waitNew({ runs, timings }: RunRouteDeps, { threadId, body, access, reply }: NewRun): Promise<void> {
  const signal = disconnectSignal(reply);
  const { run, ended } = await runs.startWaiting(threadId, body, { access });
  if (body.on_disconnect === "cancel") cancelOnDisconnect(runs, run, signal);
  await sendJsonWhenReady(reply, runs.output(run, ended), {
    keepAliveMs: timings.keepAliveMs,
    headers: { "content-location": runLocation(run, threadId === undefined) },
  });
}

async function joinRunStream(
  { runs, timings }: RunRouteDeps,
  threadId: string | undefined,
  runId: string,
  cancelWhenLeft: boolean,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
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
  if (cancelWhenLeft) cancelOnDisconnect(runs, run, signal);
  const location = runLocation(run, threadId === undefined);
  await writeEventStream(reply, await runs.follow(run.run_id, after, signal), {
    encode: runEventFrame,
    heartbeatMs: timings.heartbeatMs,
    headers: { "content-location": location, location: `${location}/stream` },
  });
}
