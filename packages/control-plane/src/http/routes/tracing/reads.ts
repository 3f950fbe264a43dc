import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import { Detail } from "../../schemas/common.js";
import type { RouteContext } from "../context.js";
import type { ScopeOfRequest } from "./scope.js";
import type { FeedbackService } from "../../../tracing/feedback.js";
import type { TracingReader } from "../../../tracing/reads.js";
import { presentRun } from "../../../tracing/trace-views.js";
import {
  Feedback,
  PageQuery,
  Project,
  ProjectParams,
  Run,
  RunListQuery,
  RunParams,
  SpanPage,
  SpanPageQuery,
  ThreadUsage,
} from "../../../tracing/schemas.js";

const tag = "Tracing: read";
const NotFound = { 404: { description: "Not found (or another workspace's)", schema: Detail } };
const Page = <T extends z.ZodType>(item: T) => z.object({ resources: z.array(item), offset: z.int() });
const RunTree: z.ZodType = z.lazy(() => Run.extend({ child_runs: z.array(RunTree) }));

/** Berth's read API over traces (LangSmith's own query API is not implemented). */
export function registerReadRoutes(
  { app, catalog }: RouteContext,
  scope: ScopeOfRequest,
  reader: TracingReader,
  feedback: FeedbackService,
): void {
  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/projects/:project",
      summary: "A tracing project, by id or name",
      tag,
      params: ProjectParams,
      responses: { 200: { description: "The project", schema: Project }, ...NotFound },
    },
    async ({ params, request }) => reader.project(await scope(request), params.project),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/projects/:project/runs",
      summary: "A project's runs, newest first: filter by thread_id, trace_id, root_only, status, error, name, latency",
      tag,
      params: ProjectParams,
      query: RunListQuery,
      responses: { 200: { description: "A page of runs; `offset` is the next page's", schema: Page(Run) }, ...NotFound },
    },
    async ({ params, query, request }) => reader.listRuns(await scope(request), params.project, query),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/projects/:project/threads/:thread_id/usage",
      summary: "Token totals of a thread's LLM runs",
      tag,
      params: ProjectParams.extend({ thread_id: z.string().min(1) }),
      responses: { 200: { description: "Totals", schema: ThreadUsage }, ...NotFound },
    },
    async ({ params, request }) => reader.threadUsage(await scope(request), params.project, params.thread_id),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/runs/:run_id",
      summary: "A run",
      tag,
      params: RunParams,
      responses: { 200: { description: "The run", schema: Run }, ...NotFound },
    },
    async ({ params, request }) => presentRun(await reader.run(await scope(request), params.run_id)),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/runs/:run_id/tree",
      summary: "A run and all its descendants, nested in child_runs",
      tag,
      params: RunParams,
      responses: { 200: { description: "The tree", schema: RunTree }, ...NotFound },
    },
    async ({ params, request }) => reader.tree(await scope(request), params.run_id),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/runs/:run_id/spans",
      summary: "A page of a run's subtree (a root: its trace) in dotted order, without inputs, outputs or events",
      tag,
      params: RunParams,
      query: SpanPageQuery,
      responses: { 200: { description: "A page of spans; `offset` is the next page's", schema: SpanPage }, ...NotFound },
    },
    async ({ params, query, request }) => reader.spans(await scope(request), params.run_id, query),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/api/v1/runs/:run_id/feedback",
      summary: "A run's feedback, oldest first",
      tag,
      params: RunParams,
      query: PageQuery,
      responses: { 200: { description: "A page of feedback", schema: Page(Feedback) }, ...NotFound },
    },
    async ({ params, query, request }) => feedback.list(await scope(request), params.run_id, query.limit, query.offset),
  );
}
