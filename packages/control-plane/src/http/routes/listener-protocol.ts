import { defineRoute, NotFoundError } from "@berth/service-kit";
import type { FastifyRequest } from "fastify";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { z } from "zod";
import { DEPLOYMENT_STATUSES, REVISION_STATUSES } from "@berth/listener-protocol";
import { MetricSamples } from "../schemas/metric-samples.js";
import type { ListenerApi, ListenerScope } from "../../services/listener-api.js";
import { Detail, Text, Uuid } from "../schemas/common.js";
import type { RouteContext } from "./context.js";

const tag = "Listener protocol";
const ListenerParams = z.object({ listener_id: Uuid });
const ListenerRevisionParams = z.object({ listener_id: Uuid, revision_id: Uuid });
const ListenerDeploymentParams = z.object({ listener_id: Uuid, deployment_id: Uuid });
const RevisionStatus = z.enum(REVISION_STATUSES);

/** CamelCase, as a condition's or event's reason is (ServerRestarted, HealthCheckFailed). */
const Reason = z
  .string()
  .regex(/^[A-Z][A-Za-z0-9]*$/, "a CamelCase word")
  .max(100);

const Observed = z.strictObject({
  serving_revision_id: Uuid.nullable(),
  healthy: z.boolean(),
  reason: Reason,
  message: Text.max(4000),
  sleeping: z.boolean().optional(),
});

const Report = z.strictObject({
  status: z.enum(DEPLOYMENT_STATUSES).optional(),
  active_revision_id: Uuid.nullable().optional(),
  custom_url: Text.nullable().optional(),
  image_version: Text.nullable().optional(),
  observed: Observed.optional().describe("What the listener sees running: the conditions are recomputed from it"),
});

const RevisionEvent = z.strictObject({
  type: z.enum(["Normal", "Warning"]),
  reason: Reason,
  message: Text.max(4000),
});

const LogEntries = z.strictObject({
  entries: z
    .array(
      z.strictObject({
        deployment_id: Uuid,
        revision_id: Uuid.nullable(),
        kind: z.enum(["build", "deploy"]),
        timestamp: z.iso.datetime({ offset: true }).transform((value) => new Date(value).toISOString()),
        level: Text.min(1).max(20),
        message: Text,
      }),
    )
    .max(5000),
});

/**
 * The pull protocol of listeners running elsewhere (`berth listener`): they
 * read their desired state and report status and logs; the control plane
 * never connects to them. Authenticated like the API, with a key of the
 * listener's workspace.
 */
export function registerListenerProtocolRoutes({ app, catalog, caller }: RouteContext, api: ListenerApi): void {
  const scopeOf = async (request: FastifyRequest, listenerId: string): Promise<ListenerScope> =>
    api.remoteScope((await caller(request)).tenantId, listenerId);
  const notFound = { 404: { description: "Not this listener's", schema: Detail } };

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/listeners/:listener_id/assignments",
      summary: "The deployments this listener runs, with the revisions to run",
      tag,
      params: ListenerParams,
      responses: { 200: { description: "Assignments" }, ...notFound },
    },
    async ({ params, request }) => ({ resources: await api.assignments(await scopeOf(request, params.listener_id)) }),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/revisions/:revision_id/transition",
      summary: "Move a revision to a status if it is in one of `from` (compare-and-set), with the reason",
      tag,
      params: ListenerRevisionParams,
      body: z.strictObject({
        from: z.array(RevisionStatus).min(1),
        to: RevisionStatus,
        message: Text.max(4000),
        report: Report.optional().describe("Applied to the deployment when the move happened"),
        facts: z
          .strictObject({
            image_digest: Text.max(200).optional(),
            repo_commit_sha: z
              .string()
              .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)
              .optional(),
          })
          .optional()
          .describe("Recorded on the revision when the move happened"),
      }),
      responses: {
        200: {
          description: "Whether it moved, and its status now",
          schema: z.object({ transitioned: z.boolean(), status: RevisionStatus.optional() }),
        },
        ...notFound,
      },
    },
    async ({ params, body, request }) =>
      api.transition(
        await scopeOf(request, params.listener_id),
        params.revision_id,
        body.from,
        body.to,
        body.message,
        body.report,
        body.facts,
      ),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/deployments/:deployment_id/report",
      summary: "Report a deployment's status, active revision, URL and server version",
      tag,
      params: ListenerDeploymentParams,
      body: Report,
      responses: { 204: { description: "Recorded" }, ...notFound },
    },
    async ({ params, body, request, reply }) => {
      await api.report(await scopeOf(request, params.listener_id), params.deployment_id, body);
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/revisions/:revision_id/events",
      summary: "Add an event to a revision's timeline (a server restarted, a health check failed); its status does not move",
      tag,
      params: ListenerRevisionParams,
      body: RevisionEvent,
      responses: { 204: { description: "Recorded" }, ...notFound },
    },
    async ({ params, body, request, reply }) => {
      await api.recordEvent(await scopeOf(request, params.listener_id), params.revision_id, body);
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/deployments/:deployment_id/branch-moved",
      summary: "The tracked branch of a build_on_push deployment has a new head (the listener polls it): a revision of it",
      tag,
      params: ListenerDeploymentParams,
      body: z.strictObject({ head: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/) }),
      responses: {
        200: {
          description: "The revision made, or null when it had that head",
          schema: z.object({ revision_id: z.string().nullable() }),
        },
        ...notFound,
      },
    },
    async ({ params, body, request }) => ({
      revision_id: (await api.branchMoved(await scopeOf(request, params.listener_id), params.deployment_id, body.head)) ?? null,
    }),
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/deployments/:deployment_id/purge",
      summary: "A deleted deployment's compute is gone: forget it",
      tag,
      params: ListenerDeploymentParams,
      responses: { 204: { description: "Purged" }, ...notFound },
    },
    async ({ params, request, reply }) => {
      await api.purge(await scopeOf(request, params.listener_id), params.deployment_id);
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "GET",
      path: "/v2/listeners/:listener_id/revisions/:revision_id/source",
      summary: "Download a revision's uploaded source tarball",
      tag,
      params: ListenerRevisionParams,
      responses: { 200: { description: "The .tar.gz" }, ...notFound },
    },
    async ({ params, request, reply }) => {
      const file = await api.sourceFile(await scopeOf(request, params.listener_id), params.revision_id);
      const { size } = await stat(file).catch(() => {
        throw new NotFoundError(`The source of revision ${params.revision_id} is missing`);
      });
      return reply.type("application/gzip").header("content-length", size).send(createReadStream(file));
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/logs",
      summary: "Append build and server log lines",
      tag,
      params: ListenerParams,
      body: LogEntries,
      responses: { 204: { description: "Appended" }, ...notFound },
    },
    async ({ params, body, request, reply }) => {
      await api.appendLogs(await scopeOf(request, params.listener_id), body.entries);
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/metrics",
      summary: "Samples of the deployments' agent servers' /metrics (those of a deployment that is gone are dropped)",
      tag,
      params: ListenerParams,
      body: MetricSamples,
      responses: { 204: { description: "Kept" }, ...notFound },
    },
    async ({ params, body, request, reply }) => {
      await api.pushMetrics(await scopeOf(request, params.listener_id), body.samples);
      return reply.status(204).send();
    },
  );

  defineRoute(
    app,
    catalog,
    {
      method: "POST",
      path: "/v2/listeners/:listener_id/authorize",
      summary: "May this API key call this deployment's URL? (asked by the listener's router)",
      tag,
      params: ListenerParams,
      body: z.strictObject({ deployment_id: Uuid, api_key: Text.min(1) }),
      responses: {
        200: {
          description: "allowed, denied or unknown_key",
          schema: z.object({ result: z.enum(["allowed", "denied", "unknown_key"]) }),
        },
        ...notFound,
      },
    },
    async ({ params, body, request }) => ({
      result: await api.authorize(await scopeOf(request, params.listener_id), body.deployment_id, body.api_key),
    }),
  );
}
