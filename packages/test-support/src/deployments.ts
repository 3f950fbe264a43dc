// Deploying a project to a control plane in a test: packing it, uploading it, and waiting on its revision.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { FINAL_REVISION_STATUSES } from "@berth/listener-protocol";
import type { Api, Response } from "./api-client.js";
import type { Deployment, LogLine, Page, Revision, Uploaded, UploadUrl } from "./api-types.js";
import { readJsonResponse } from "./http.js";
import { REPO_ROOT } from "./paths.js";
import { makeTarball } from "./tarball.js";

/** The projects the control plane's tests deploy (`deploy-app` is the one the CLI and dashboard tests deploy too). */
export const CONTROL_PLANE_FIXTURES = join(REPO_ROOT, "packages", "control-plane", "test", "fixtures");

/** Every regular file under `dir` (node_modules and .berth left out), for makeTarball. */
export function projectFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      if (name === "node_modules" || name === ".berth") continue;
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(dir, path)] = readFileSync(path, "utf8");
    }
  };
  walk(dir);
  return files;
}

/** A tarball of the fixture project `name` (a folder of `fixtures`), with `extra` files added or replaced. */
export const packFixture = (name: string, extra: Record<string, string> = {}, fixtures = CONTROL_PLANE_FIXTURES) =>
  makeTarball({ ...projectFiles(join(fixtures, name)), ...extra });

/** PUT bytes to an upload URL (no API key). */
export async function put<T = unknown>(uploadUrl: string, bytes: Buffer, contentType = "application/gzip"): Promise<Response<T>> {
  return readJsonResponse<T>(
    await fetch(uploadUrl, { method: "PUT", body: new Uint8Array(bytes), headers: { "content-type": contentType } }),
  );
}

/** upload-url + PUT of a tarball for an internal_source deployment; resolves with the object path. */
export async function uploadSource(client: Api, deploymentId: string, bytes: Buffer = makeTarball()): Promise<string> {
  const issued = await client.post<UploadUrl>(`/v2/deployments/${deploymentId}/upload-url`);
  if (issued.status !== 200) throw new Error(`upload-url answered ${issued.status}: ${JSON.stringify(issued.body)}`);
  const uploaded = await put<Uploaded>(issued.body.upload_url, bytes);
  if (uploaded.status !== 200) throw new Error(`upload PUT answered ${uploaded.status}: ${JSON.stringify(uploaded.body)}`);
  return issued.body.object_path;
}

/** Creates a deployment and fails loudly unless it is a 201. */
export async function createDeployment(client: Api, body: unknown): Promise<Deployment> {
  const response = await client.post<Deployment>("/v2/deployments", body);
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Every revision of a deployment, newest first. */
export async function revisionsOf(client: Api, deploymentId: string): Promise<Revision[]> {
  const response = await client.get<Page<Revision>>(`/v2/deployments/${deploymentId}/revisions?limit=100`);
  if (response.status !== 200) throw new Error(`revisions answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.resources;
}

/** Creates an internal_source deployment, uploads `tarball` and PATCHes it in: revision 2 is the one to watch. */
export async function deployTarball(
  api: Api,
  name: string,
  tarball: Buffer,
  options: { secrets?: { name: string; value: string }[]; sourceConfig?: Record<string, unknown> } = {},
): Promise<{ deployment: Deployment; revisionId: string }> {
  const created = await createDeployment(api, {
    name,
    source: "internal_source",
    source_config: options.sourceConfig ?? {},
    source_revision_config: { graph_config_path: "langgraph.json" },
    secrets: options.secrets ?? [],
  });
  const objectPath = await uploadSource(api, created.id, tarball);
  const patched = await api.patch<Deployment>(`/v2/deployments/${created.id}`, {
    source_revision_config: { source_tarball_path: objectPath },
  });
  if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}: ${JSON.stringify(patched.body)}`);
  return { deployment: patched.body, revisionId: patched.body.latest_revision_id! };
}

/** Deploys `tarball` (deployTarball) and waits until it serves: the deployment as it reads then, with its URL. */
export async function deployedTarball(api: Api, name: string, tarball: Buffer): Promise<Deployment> {
  const deployed = await deployTarball(api, name, tarball);
  const revision = await finalRevision(api, deployed.deployment.id, deployed.revisionId);
  if (revision.status !== "DEPLOYED") throw new Error(`${name} ended ${revision.status}: ${revision.status_message ?? ""}`);
  return (await api.get<Deployment>(`/v2/deployments/${deployed.deployment.id}`)).body;
}

/** Long-polls the revision until it is final (DEPLOYED, *_FAILED, SKIPPED, INTERRUPTED). */
export async function finalRevision(api: Api, deploymentId: string, revisionId: string): Promise<Revision> {
  for (;;) {
    const response = await api.get<Revision>(`/v2/deployments/${deploymentId}/revisions/${revisionId}?wait_seconds=60`);
    if (response.status !== 200) throw new Error(`revision answered ${response.status}: ${JSON.stringify(response.body)}`);
    if (FINAL_REVISION_STATUSES.includes(response.body.status)) return response.body;
  }
}

/** Long-polls until the revision is in another status than `status`. */
export async function revisionLeaves(api: Api, deploymentId: string, revisionId: string, status: string): Promise<Revision> {
  for (;;) {
    const response = await api.get<Revision>(
      `/v2/deployments/${deploymentId}/revisions/${revisionId}?wait_seconds=60&while_status=${status}`,
    );
    if (response.status !== 200) throw new Error(`revision answered ${response.status}: ${JSON.stringify(response.body)}`);
    if (response.body.status !== status) return response.body;
  }
}

export async function logsOf(api: Api, deploymentId: string, revisionId: string, kind: "build" | "deploy"): Promise<LogLine[]> {
  const response = await api.post<{ logs: LogLine[] }>(`/v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`, {
    order: "asc",
    limit: 1000,
  });
  if (response.status !== 200) throw new Error(`${kind} logs answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.logs;
}
