import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  assertError,
  type ControlPlane,
  createDeployment,
  type Deployment,
  type ErrorBody,
  externalImageBody,
  type Integration,
  type Listener,
  type Page,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

const LISTENER_FIELDS = [
  "id",
  "tenant_id",
  "compute_type",
  "compute_id",
  "compute_config",
  "version",
  "created_at",
  "updated_at",
];

describe("listeners", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  async function createListener(body: Record<string, unknown>): Promise<Listener> {
    const response = await cp.admin.post<Listener>("/v2/listeners", body);
    assert.equal(response.status, 201, JSON.stringify(response.body));
    return response.body;
  }

  test("create a cluster listener: 201 with every field; GET answers the same", async () => {
    const listener = await createListener({
      compute_type: "cluster",
      compute_id: "eks-prod",
      compute_config: { cluster_namespaces: ["agents", "staging"] },
      version: "0.1.0",
    });
    for (const field of LISTENER_FIELDS) assert.ok(field in listener, `Listener has no ${field}`);
    assert.equal(listener.tenant_id, cp.defaultTenantId);
    assert.equal(listener.compute_type, "cluster");
    assert.equal(listener.compute_id, "eks-prod");
    assert.deepEqual(listener.compute_config, { cluster_namespaces: ["agents", "staging"] });
    assert.equal(listener.version, "0.1.0");
    assert.ok(!Number.isNaN(Date.parse(listener.created_at)));
    const got = await cp.admin.get<Listener>(`/v2/listeners/${listener.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, listener);
  });

  test("local and docker listeners need no compute_config", async () => {
    for (const computeType of ["local", "docker"]) {
      const listener = await createListener({ compute_type: computeType, compute_id: `${computeType}-box` });
      assert.equal(listener.compute_type, computeType);
      assert.equal(listener.compute_id, `${computeType}-box`);
    }
  });

  test("list: {resources, offset}, paged with limit/offset", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await createListener({ compute_type: "docker", compute_id: `page-${i}` })).id);
    const all = await cp.admin.get<Page<Listener>>("/v2/listeners?limit=100");
    assert.equal(all.status, 200);
    assert.ok(Array.isArray(all.body.resources));
    assert.ok("offset" in all.body);
    for (const id of ids) assert.ok(all.body.resources.some((l) => l.id === id));
    const first = await cp.admin.get<Page<Listener>>("/v2/listeners?limit=2");
    assert.equal(first.body.resources.length, 2);
    assert.equal(first.body.offset, 2);
    const second = await cp.admin.get<Page<Listener>>(`/v2/listeners?limit=2&offset=${first.body.offset}`);
    assert.equal(second.status, 200);
    const seen = [...first.body.resources, ...second.body.resources].map((l) => l.id);
    assert.equal(new Set(seen).size, seen.length, "pages do not overlap");
    assert.deepEqual(
      seen,
      all.body.resources.slice(0, seen.length).map((l) => l.id),
    );
  });

  test("PATCH compute_config and version: 200; compute_type or compute_id: 400", async () => {
    const listener = await createListener({
      compute_type: "cluster",
      compute_id: "gke-1",
      compute_config: { cluster_namespaces: ["a"] },
    });
    const patched = await cp.admin.patch<Listener>(`/v2/listeners/${listener.id}`, {
      compute_config: { cluster_namespaces: ["a", "b"] },
      version: "0.2.0",
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.compute_config, { cluster_namespaces: ["a", "b"] });
    assert.equal(patched.body.version, "0.2.0");
    assert.equal(patched.body.compute_id, "gke-1");
    assert.equal(patched.body.created_at, listener.created_at);
    assert.ok(patched.body.updated_at >= listener.updated_at);
    assert.deepEqual((await cp.admin.get(`/v2/listeners/${listener.id}`)).body, patched.body);

    assertError(await cp.admin.patch(`/v2/listeners/${listener.id}`, { compute_type: "docker" }), 400, [/compute_type/]);
    assertError(await cp.admin.patch(`/v2/listeners/${listener.id}`, { compute_id: "gke-2" }), 400, [/compute_id/]);
    const sameValues = await cp.admin.patch<Listener>(`/v2/listeners/${listener.id}`, { version: "0.2.1" });
    assert.equal(sameValues.status, 200);
    assert.equal(sameValues.body.compute_type, "cluster");
    assert.deepEqual(sameValues.body.compute_config, { cluster_namespaces: ["a", "b"] });
  });

  test("a compute_id is unique per workspace: 409", async () => {
    await createListener({ compute_type: "local", compute_id: "taken" });
    const again = await cp.admin.post<ErrorBody>("/v2/listeners", { compute_type: "docker", compute_id: "taken" });
    assertError(again, 409, [/taken/]);
  });

  test("a namespace the cluster listener gains by PATCH can be deployed to", async () => {
    const listener = await createListener({
      compute_type: "cluster",
      compute_id: "aks-1",
      compute_config: { cluster_namespaces: ["one"] },
    });
    const body = externalImageBody(uniqueName("ns"), {
      source_config: { listener_id: listener.id, listener_config: { cluster_namespace: "two" } },
    });
    assertError(await cp.admin.post("/v2/deployments", body), 400, [/two/]);
    await cp.admin.patch(`/v2/listeners/${listener.id}`, { compute_config: { cluster_namespaces: ["one", "two"] } });
    const created = await cp.admin.post<Deployment>("/v2/deployments", body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.source_config.listener_id, listener.id);
    assert.deepEqual(created.body.source_config.listener_config, { cluster_namespace: "two" });
    const same = await cp.admin.patch<Deployment>(`/v2/deployments/${created.body.id}`, {
      source_config: { listener_id: listener.id, listener_config: { cluster_namespace: "two" } },
    });
    assert.equal(same.status, 200, `the current listener values are accepted: ${JSON.stringify(same.body)}`);
  });

  test("DELETE: 409 while a live deployment uses it, 204 once it is deleted, then 404", async () => {
    const listener = await createListener({ compute_type: "docker", compute_id: "busy" });
    const deployment = await createDeployment(
      cp.admin,
      externalImageBody(uniqueName("uses"), { source_config: { listener_id: listener.id } }),
    );
    assertError(await cp.admin.delete(`/v2/listeners/${listener.id}`), 409, [/listener/i]);
    assert.equal((await cp.admin.get(`/v2/listeners/${listener.id}`)).status, 200);
    assert.equal((await cp.admin.delete(`/v2/deployments/${deployment.id}`)).status, 204);
    const deleted = await cp.admin.delete(`/v2/listeners/${listener.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, null);
    const gone = await cp.admin.get<ErrorBody>(`/v2/listeners/${listener.id}`);
    assert.equal(gone.status, 404);
    assert.equal(typeof gone.body.detail, "string");
    assert.equal((await cp.admin.delete(`/v2/listeners/${listener.id}`)).status, 404);
    const listed = await cp.admin.get<Page<Listener>>("/v2/listeners?limit=100");
    assert.ok(!listed.body.resources.some((l) => l.id === listener.id));
  });

  test("the /api-host prefix serves listeners too", async () => {
    const response = await fetch(`${cp.url}/api-host/v2/listeners`, {
      headers: { "X-Api-Key": cp.adminKey, "X-Tenant-Id": cp.defaultTenantId },
    });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(((await response.json()) as Page<Listener>).resources));
  });
});

describe("integrations", () => {
  let cp: ControlPlane;
  let integration: Integration;
  before(async () => {
    cp = await startControlPlane();
    integration = await cp.addIntegration(cp.defaultTenantId, "github-acme", [
      "https://github.com/acme/agent#main",
      "https://github.com/acme/tools#develop",
      "https://github.com/acme/docs",
    ]);
  });
  after(() => cp.stop());

  test("the CLI prints the integration with its repositories (default branch main)", () => {
    assert.equal(integration.tenant_id, cp.defaultTenantId);
    assert.equal(integration.name, "github-acme");
    assert.equal(integration.provider, "repo_host");
    assert.ok(integration.installation_id);
    assert.deepEqual(
      integration.repos.map((r) => [r.owner, r.name, r.url, r.default_branch]),
      [
        ["acme", "agent", "https://github.com/acme/agent", "main"],
        ["acme", "tools", "https://github.com/acme/tools", "develop"],
        ["acme", "docs", "https://github.com/acme/docs", "main"],
      ],
    );
  });

  test("GET /v1/integrations/repo_host/install lists the workspace's integrations", async () => {
    const response = await cp.admin.get<Record<string, unknown>[]>("/v1/integrations/repo_host/install");
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, [
      {
        id: integration.id,
        name: "github-acme",
        provider: "repo_host",
        installation_id: integration.installation_id,
        kind: "git",
        base_url: null,
        credentials: null,
        webhook_url: `/v1/integrations/repo_host/${integration.id}/webhook`,
        created_at: integration.created_at,
      },
    ]);
  });

  test("GET /v1/integrations/repo_host/{id}/repos lists its repositories", async () => {
    const response = await cp.admin.get<Record<string, unknown>[]>(`/v1/integrations/repo_host/${integration.id}/repos`);
    assert.equal(response.status, 200);
    assert.deepEqual(
      response.body,
      integration.repos.map((repo) => ({ host_integration_id: integration.id, ...repo })),
    );
  });

  test("a repo_host deployment from a listed repository: 201; a revision without build_on_push PATCHes the ref", async () => {
    const created = await cp.admin.post<Deployment>("/v2/deployments", {
      name: uniqueName("from-repo"),
      source: "repo_host",
      source_config: {
        integration_id: integration.id,
        repo_url: "https://github.com/acme/tools",
        deployment_type: "dev",
        build_on_push: true,
      },
      source_revision_config: { repo_ref: "develop", graph_config_path: "agents/langgraph.json" },
      secrets: [],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.source_config.integration_id, integration.id);
    assert.equal(created.body.source_config.repo_url, "https://github.com/acme/tools");
    assert.equal(created.body.source_config.deployment_type, "dev");
    assert.equal(created.body.source_config.build_on_push, true);
    assert.equal(created.body.source_revision_config.repo_ref, "develop");
    assert.equal(created.body.source_revision_config.graph_config_path, "agents/langgraph.json");
    // The spec's rule 3: build_on_push with repo_ref and graph_config_path updates the deployment and makes a revision.
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${created.body.id}`, {
      source_config: { build_on_push: false },
      source_revision_config: { repo_ref: "refs/tags/v1.0.0", graph_config_path: "langgraph.json" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.source_config.build_on_push, false);
    assert.equal(patched.body.source_revision_config.repo_ref, "refs/tags/v1.0.0");
    assert.equal(patched.body.source_revision_config.repo_commit_sha ?? null, null, "a new ref is not resolved yet");
    assert.notEqual(patched.body.latest_revision_id, created.body.latest_revision_id);
  });

  test("an integration of another workspace is not listed here", async () => {
    const other = await cp.createTenant("elsewhere");
    const foreign = await cp.addIntegration(other.id, "gh-elsewhere", ["https://github.com/else/agent"]);
    const listed = await cp.admin.get<{ id: string }[]>("/v1/integrations/repo_host/install");
    assert.deepEqual(
      listed.body.map((i) => i.id),
      [integration.id],
    );
    assert.equal((await cp.admin.get(`/v1/integrations/repo_host/${foreign.id}/repos`)).status, 404);
  });
});
