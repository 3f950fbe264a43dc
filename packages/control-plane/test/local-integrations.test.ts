// Local git integrations read the listener's disk: only the platform's operator (a key valid for every workspace, or
// `berth control-plane integrations add`) may point one at a folder, and only under BERTH_LOCAL_GIT_ROOTS, with `..`
// and symlinks resolved. A workspace's own key gets a 403, whatever the folder.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Api, api, assertError, type ControlPlane, repoHostBody, startControlPlane, uniqueName } from "@berth/test-support";

interface LocalIntegration {
  id: string;
  kind: string;
  base_url: string | null;
}

/** A folder a listing takes for a bare repository: HEAD naming main, and an objects folder. */
function bareRepository(path: string): string {
  mkdirSync(join(path, "objects"), { recursive: true });
  writeFileSync(join(path, "HEAD"), "ref: refs/heads/main\n");
  return path;
}

describe("local git integrations: the operator's, under BERTH_LOCAL_GIT_ROOTS only", () => {
  let cp: ControlPlane;
  /** A key of one workspace only: the hostile tenant. */
  let tenant: Api;
  /** The admin key acting in that workspace: the operator. */
  let operator: Api;
  let tenantId: string;
  let allowed: string;
  /** Another workspace's private repository, outside the roots. */
  let victimRepository: string;

  before(async () => {
    // Resolved: the control plane answers folders with their symlinks resolved (tmpdir may be one).
    const disk = realpathSync(mkdtempSync(join(tmpdir(), "berth-local-git-")));
    allowed = join(disk, "allowed");
    bareRepository(join(allowed, "agent.git"));
    victimRepository = bareRepository(join(disk, "victim", "secret.git"));
    // Symlinks inside the root that lead out of it.
    symlinkSync(join(disk, "victim"), join(allowed, "escape"));
    symlinkSync(victimRepository, join(allowed, "link.git"));
    cp = await startControlPlane({ env: { BERTH_LOCAL_GIT_ROOTS: allowed } });
    tenantId = (await cp.createTenant(uniqueName("tenant"))).id;
    tenant = api(cp.url, (await cp.createKey({ tenants: [tenantId] })).key);
    operator = api(cp.url, cp.adminKey, tenantId);
  });
  after(() => cp?.stop());

  const localBody = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
    name: uniqueName("folder"),
    kind: "local",
    base_url: baseUrl,
    ...extra,
  });

  test("a workspace key cannot create a local integration: at /, at another workspace's repository, nor under a root", async () => {
    for (const folder of ["/", victimRepository, join(victimRepository, ".."), allowed]) {
      assertError(await tenant.post("/v1/integrations/repo_host", localBody(folder)), 403, /operator/);
    }
    assertError(
      await tenant.post("/v1/integrations/repo_host", { name: "sneaky", kind: "local", base_url: allowed, repos: ["/etc"] }),
      403,
      /operator/,
    );
    const listed = await tenant.get<LocalIntegration[]>("/v1/integrations/repo_host/install");
    assert.deepEqual(listed.body, [], "nothing was created");
  });

  test("the operator creates one under an allowed root for the workspace, which lists its repositories but no symlink out", async () => {
    const created = await operator.post<LocalIntegration>("/v1/integrations/repo_host", localBody(allowed));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.kind, "local");
    const repos = await tenant.get<{ name: string; url: string }[]>(`/v1/integrations/repo_host/${created.body.id}/repos`);
    assert.equal(repos.status, 200, JSON.stringify(repos.body));
    assert.deepEqual(
      repos.body.map((repo) => repo.url),
      [join(allowed, "agent.git")],
    );

    // The workspace deploys from it, but not through a symlink that leads out of the folder.
    const inside = await tenant.post(
      "/v2/deployments",
      repoHostBody(uniqueName("inside"), created.body.id, join(allowed, "agent.git")),
    );
    assert.equal(inside.status, 201, JSON.stringify(inside.body));
    for (const outside of [
      join(allowed, "link.git"),
      join(allowed, "escape", "secret.git"),
      join(allowed, "..", "victim", "secret.git"),
    ]) {
      const refused = await tenant.post("/v2/deployments", repoHostBody(uniqueName("outside"), created.body.id, outside));
      assertError(refused, 400, /is not a repository of integration/);
    }

    // Nor may the workspace move the folder or add repositories; it may rename it.
    const id = created.body.id;
    assertError(await tenant.patch(`/v1/integrations/repo_host/${id}`, { base_url: "/" }), 403, /operator/);
    assertError(await tenant.patch(`/v1/integrations/repo_host/${id}`, { repos: [victimRepository] }), 403, /operator/);
    assert.equal((await tenant.patch(`/v1/integrations/repo_host/${id}`, { name: "renamed" })).status, 200);
    assert.equal((await tenant.get<LocalIntegration>(`/v1/integrations/repo_host/${id}`)).body.base_url, allowed);
  });

  test("the operator is refused a folder outside the roots: /, another folder, `..` and symlinks out of a root", async () => {
    for (const folder of [
      "/",
      victimRepository,
      join(allowed, "..", "victim"),
      join(allowed, "escape"),
      join(allowed, "link.git"),
    ]) {
      assertError(await operator.post("/v1/integrations/repo_host", localBody(folder)), 400, /outside the folders open/);
    }
    assertError(
      await operator.post("/v1/integrations/repo_host", localBody(allowed, { repos: [victimRepository] })),
      400,
      /repos\[0\].*outside the folders open/,
    );
    assertError(await operator.post("/v1/integrations/repo_host", localBody(join(allowed, "missing"))), 400, /does not exist/);
    const created = await operator.post<LocalIntegration>("/v1/integrations/repo_host", localBody(allowed));
    assertError(await operator.patch(`/v1/integrations/repo_host/${created.body.id}`, { base_url: "/" }), 400, /outside/);
  });

  test("the admin command line is held to the roots too", async () => {
    const cli = (folder: string) =>
      cp.cli<LocalIntegration>([
        "integrations",
        "add",
        "--tenant",
        tenantId,
        "--name",
        "cli",
        "--kind",
        "local",
        "--base-url",
        folder,
      ]);
    await assert.rejects(cli(victimRepository), /outside the folders open/);
    const created = await cli(allowed);
    assert.equal(created.base_url, allowed);
  });
});

describe("local git integrations without BERTH_LOCAL_GIT_ROOTS", () => {
  let cp: ControlPlane;
  let folder: string;

  before(async () => {
    folder = realpathSync(mkdtempSync(join(tmpdir(), "berth-local-git-")));
    bareRepository(join(folder, "agent.git"));
    cp = await startControlPlane({ env: { BERTH_LOCAL_GIT_ROOTS: undefined } });
  });
  after(() => cp?.stop());

  test("no key may create one over HTTP, not even the operator's; the admin command line may", async () => {
    assertError(
      await cp.admin.post("/v1/integrations/repo_host", { name: "folder", kind: "local", base_url: folder }),
      400,
      /no folder is open to local integrations/,
    );
    const created = await cp.cli<LocalIntegration & { repos: { url: string }[] }>([
      "integrations",
      "add",
      "--tenant",
      cp.defaultTenantId,
      "--name",
      "cli",
      "--kind",
      "local",
      "--base-url",
      folder,
    ]);
    assert.deepEqual(
      created.repos.map((repo) => repo.url),
      [join(folder, "agent.git")],
    );
  });
});
