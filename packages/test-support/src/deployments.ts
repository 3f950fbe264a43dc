// Deploying a project to a control plane in a test: packing it, uploading it, and waiting on its revision.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { type Api, createDeployment, type Deployment, makeTarball, type Revision, uploadSource } from "./control-plane.js";
import { REPO_ROOT } from "./paths.js";

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

/** Long-polls the revision until it is final (DEPLOYED, *_FAILED, SKIPPED, INTERRUPTED). */
export async function finalRevision(api: Api, deploymentId: string, revisionId: string): Promise<Revision> {
  for (;;) {
    const response = await api.get<Revision>(`/v2/deployments/${deploymentId}/revisions/${revisionId}?wait_seconds=60`);
    if (response.status !== 200) throw new Error(`revision answered ${response.status}: ${JSON.stringify(response.body)}`);
    if (["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "SKIPPED", "INTERRUPTED"].includes(response.body.status)) {
      return response.body;
    }
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

export interface LogLine {
  id: string;
  timestamp: string;
  level: string;
  message: string;
}

export async function logsOf(api: Api, deploymentId: string, revisionId: string, kind: "build" | "deploy"): Promise<LogLine[]> {
  const response = await api.post<{ logs: LogLine[] }>(`/v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`, {
    order: "asc",
    limit: 1000,
  });
  if (response.status !== 200) throw new Error(`${kind} logs answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.logs;
}
