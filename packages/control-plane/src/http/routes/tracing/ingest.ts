import { defineRoute, RequestValidationError } from "@berth/service-kit";
import { z } from "zod";
import { Detail } from "../../schemas/common.js";
import type { RouteContext } from "../context.js";
import type { ScopeOfRequest } from "./scope.js";
import type { TracingIngest } from "../../../tracing/ingest.js";
import { MultipartBody } from "../../../tracing/multipart.js";
import { multipartBatch } from "../../../tracing/multipart-ops.js";
import { RunBatch, RunCreate, RunUpdate, Uuid } from "../../../tracing/wire.js";

const tag = "Tracing: ingestion (LangSmith)";
const Accepted = {
  202: { description: "Stored", schema: z.object({}) },
  404: { description: "session_id of no project of the workspace", schema: Detail },
};

/**
 * The ingestion endpoints of the LangSmith API, as the langsmith client calls
 * them (with autoBatchTracing: /runs/multipart, or /runs/batch when /info
 * turns multipart off; without it: POST /runs and PATCH /runs/{id}).
 */
export function registerIngestRoutes({ app, catalog }: RouteContext, scope: ScopeOfRequest, ingest: TracingIngest): void {
  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/api/v1/runs",
      summary: "Create a run (createRun without batching)",
      tag,
      body: RunCreate,
      responses: Accepted,
    },
    async ({ body, request, reply }) => {
      await ingest.ingest(await scope(request), { creates: [body], updates: [], feedback: [] });
      return reply.status(202).send({});
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "PATCH",
      path: "/api/v1/runs/:run_id",
      summary: "Update a run (updateRun without batching)",
      tag,
      params: z.object({ run_id: Uuid }),
      body: RunUpdate,
      responses: Accepted,
    },
    async ({ params, body, request, reply }) => {
      await ingest.ingest(await scope(request), {
        creates: [],
        updates: [{ ...body, id: params.run_id }],
        feedback: [],
      });
      return reply.status(202).send({});
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/api/v1/runs/batch",
      summary: "Create and update runs in one request (batchIngestRuns)",
      tag,
      body: RunBatch,
      responses: Accepted,
    },
    async ({ body, request, reply }) => {
      const requestScope = await scope(request);
      await ingest.ingest(requestScope, { creates: body.post ?? [], updates: body.patch ?? [], feedback: [] });
      return reply.status(202).send({});
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/api/v1/runs/multipart",
      summary:
        "Create and update runs, and add feedback, in one multipart/form-data request (multipartIngestRuns; gzip accepted)",
      tag,
      responses: Accepted,
    },
    async ({ request, reply }) => {
      const requestScope = await scope(request);
      if (!(request.body instanceof MultipartBody)) {
        throw new RequestValidationError([
          { loc: ["body"], msg: "expected a multipart/form-data body", type: "multipart_invalid" },
        ]);
      }
      await ingest.ingest(requestScope, multipartBatch(request.body));
      return reply.status(202).send({});
    },
  );
}
