import { defineRoute } from "@berth/service-kit";
import { z } from "zod";
import type { UploadService } from "../../services/uploads.js";
import { Detail, Uuid } from "../schemas/common.js";
import { DeploymentIdParams, UploadUrl } from "../schemas/deployments.js";
import { baseUrl } from "./base-url.js";
import type { RouteContext } from "./context.js";

const tag = "Uploads";

export async function registerUploadRoutes(
  { app, catalog, caller }: RouteContext,
  uploads: UploadService,
  publicUrl: string | undefined,
): Promise<void> {
  for (const path of ["/v2/deployments/:deployment_id/upload-url", "/deployments/:deployment_id/upload-url"]) {
    defineRoute(
      app,
      catalog,
      {
        method: "POST",
        path,
        summary: "A signed URL to PUT the source tarball of an internal_source deployment to",
        tag,
        params: DeploymentIdParams,
        body: z.object({}).describe("No fields; an empty body is fine"),
        bodyOptional: true,
        responses: {
          200: { description: "upload_url and the object_path for source_tarball_path", schema: UploadUrl },
          400: { description: "Not an internal_source deployment", schema: Detail },
        },
      },
      async ({ params, request }) =>
        uploads.issue((await caller(request)).tenantId, params.deployment_id, baseUrl(request, publicUrl)),
    );
  }

  // The tarball arrives raw (application/gzip, octet-stream or anything else): the handler streams it to disk.
  await app.register(async (scope) => {
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
    defineRoute(
      scope,
      catalog,
      {
        method: "PUT",
        path: "/v2/uploads/:upload_id",
        summary: "Upload a source tarball to a signed URL (no API key: the signature is the credential)",
        tag,
        params: z.object({ upload_id: Uuid }),
        query: z.object({ expires: z.string(), signature: z.string() }),
        responses: {
          200: { description: "Stored", schema: z.object({ object_path: z.string(), size_bytes: z.int(), sha256: z.string() }) },
          403: { description: "Wrong signature, or expired", schema: Detail },
          413: { description: "Over the size limit", schema: Detail },
        },
      },
      async ({ params, query, request }) => {
        const length = request.headers["content-length"];
        return uploads.receive(
          params.upload_id,
          query.expires,
          query.signature,
          request.raw,
          length === undefined ? undefined : Number(length),
        );
      },
    );
  });
}
