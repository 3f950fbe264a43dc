import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  externalImageBody,
  internalImageBody,
  internalSourceBody,
  type Integration,
  repoHostBody,
  type Revision,
  revisionsOf,
  startControlPlane,
  uniqueName,
  uploadSource,
} from "@berth/test-support";

describe("when a PATCH makes a revision", () => {
  let cp: ControlPlane;
  let integration: Integration;
  before(async () => {
    cp = await startControlPlane();
    integration = await cp.addIntegration(cp.defaultTenantId, "gh", ["https://github.com/acme/agent#main"]);
  });
  after(() => cp.stop());

  const patch = async (id: string, body: unknown) => {
    const response = await cp.admin.patch<Deployment>(`/v2/deployments/${id}`, body);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };

  test("source_config fields other than resource_spec change the deployment only", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("cfg")));
    const patched = await patch(deployment.id, { source_config: { custom_url: "https://agent.example.com" } });
    assert.equal(patched.source_config.custom_url, "https://agent.example.com");
    assert.equal(patched.latest_revision_id, deployment.latest_revision_id);
    assert.ok(patched.updated_at >= deployment.updated_at);
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 1);

    const repo = await createDeployment(
      cp.admin,
      repoHostBody(uniqueName("bop"), integration.id, "https://github.com/acme/agent", { build_on_push: false }),
    );
    const bop = await patch(repo.id, { source_config: { build_on_push: true } });
    assert.equal(bop.source_config.build_on_push, true);
    assert.equal(bop.latest_revision_id, repo.latest_revision_id);
    const commands = await patch(repo.id, {
      source_config: { install_command: "npm ci && npm run prepare", build_command: "npm run build" },
    });
    assert.equal(commands.source_config.install_command, "npm ci && npm run prepare", "&& is allowed");
    assert.equal(commands.source_config.build_command, "npm run build");
    assert.equal(commands.latest_revision_id, repo.latest_revision_id);
    assert.equal((await revisionsOf(cp.admin, repo.id)).length, 1);
  });

  test("an empty PATCH, null fields, or the current name and source change nothing", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("noop")));
    for (const body of [
      {},
      { secrets: null, resource_spec: null, secret_references: null },
      { source_revision_config: { image_uri: null } },
      { name: deployment.name, source: deployment.source },
    ]) {
      const patched = await patch(deployment.id, body);
      assert.equal(patched.latest_revision_id, deployment.latest_revision_id, JSON.stringify(body));
      assert.equal(patched.source_revision_config.image_uri, deployment.source_revision_config.image_uri);
      assert.deepEqual(patched.secrets, deployment.secrets);
    }
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 1);
  });

  test("secrets, resource_spec, secret_references and source_revision_config each make one", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("each")));
    const bodies = [
      {
        secrets: [
          { name: "OPENAI_API_KEY", value: "********" },
          { name: "B", value: "b" },
        ],
      },
      { resource_spec: { cpu: 1 } },
      { source_config: { resource_spec: { cpu: 2 } } },
      { secret_references: [{ name: "DB_PASSWORD", secret_name: "db", secret_key: "password" }] },
      { source_revision_config: { image_uri: "registry.local/agent:2" } },
    ];
    let previous = deployment.latest_revision_id;
    for (const body of bodies) {
      const patched = await patch(deployment.id, body);
      assert.notEqual(patched.latest_revision_id, previous, JSON.stringify(body));
      previous = patched.latest_revision_id;
    }
    const final = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body;
    assert.deepEqual(final.secrets, [
      { name: "OPENAI_API_KEY", value: "********" },
      { name: "B", value: "********" },
    ]);
    assert.equal(final.source_config.resource_spec?.cpu, 2);
    assert.deepEqual(final.secret_references, [{ name: "DB_PASSWORD", secret_name: "db", secret_key: "password" }]);
    assert.equal(final.source_revision_config.image_uri, "registry.local/agent:2");
    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.equal(revisions.length, 6);
    assert.equal(revisions[0].id, final.latest_revision_id);
  });

  test("an empty secret list removes every secret", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("nosecrets")));
    const patched = await patch(deployment.id, { secrets: [] });
    assert.deepEqual(patched.secrets, []);
    assert.notEqual(patched.latest_revision_id, deployment.latest_revision_id);
  });

  test("a revision in progress ends SKIPPED, superseded by the new one", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("skip")));
    const patched = await patch(deployment.id, { source_revision_config: { image_uri: "registry.local/agent:2" } });
    const old = await cp.admin.get<Revision>(`/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}`);
    assert.equal(old.status, 200);
    assert.equal(old.body.status, "SKIPPED");
    assert.match(old.body.status_message ?? "", /^Superseded by revision/);
    assert.ok(old.body.status_message?.includes(patched.latest_revision_id!), old.body.status_message ?? "");
    assert.equal(old.body.source_revision_config.image_uri, "registry.local/agent:1", "an old revision keeps its values");
    assert.ok(old.body.updated_at >= old.body.created_at);
  });

  test("internal_image without image_uri waits in CREATING until a PATCH brings it", async () => {
    const deployment = await createDeployment(cp.admin, internalImageBody(uniqueName("img"), null));
    const [first] = await revisionsOf(cp.admin, deployment.id);
    assert.equal(first.status, "CREATING");
    const patched = await patch(deployment.id, { source_revision_config: { image_uri: "registry.local/built:1" } });
    assert.equal(patched.source_revision_config.image_uri, "registry.local/built:1");
    const revisions = await revisionsOf(cp.admin, deployment.id);
    assert.deepEqual(
      revisions.map((r) => r.status),
      ["QUEUED", "SKIPPED"],
    );
  });

  test("a new revision copies what it does not set from the previous one", async () => {
    const deployment = await createDeployment(cp.admin, internalSourceBody(uniqueName("copy")));
    const path = await uploadSource(cp.admin, deployment.id);
    await patch(deployment.id, { source_revision_config: { source_tarball_path: path } });
    const moved = await patch(deployment.id, { source_revision_config: { graph_config_path: "agents/langgraph.json" } });
    assert.equal(moved.source_revision_config.graph_config_path, "agents/langgraph.json");
    assert.equal(moved.source_revision_config.source_tarball_path, path);
    const [newest] = await revisionsOf(cp.admin, deployment.id);
    assert.equal(newest.id, moved.latest_revision_id);
    assert.equal(newest.status, "QUEUED");
    assert.equal(newest.source_revision_config.source_tarball_path, path);
    assert.equal(newest.source_revision_config.graph_config_path, "agents/langgraph.json");
  });

  test("sending the current value of an immutable field is accepted", async () => {
    const repo = await createDeployment(
      cp.admin,
      repoHostBody(uniqueName("same"), integration.id, "https://github.com/acme/agent", { deployment_type: "prod" }),
    );
    const patched = await patch(repo.id, {
      name: repo.name,
      source: "repo_host",
      revision_source: "repo_host",
      source_config: { integration_id: integration.id, repo_url: "https://github.com/acme/agent", deployment_type: "prod" },
    });
    assert.equal(patched.source_config.integration_id, integration.id);
    assert.equal(patched.source_config.deployment_type, "prod");
    assert.equal(patched.latest_revision_id, repo.latest_revision_id, "no revision field was sent");
  });

  test("POST /revisions always makes one, with the latest one's configuration and secrets", async () => {
    const deployment = await createDeployment(cp.admin, {
      ...externalImageBody(uniqueName("again")),
      secrets: [{ name: "KEY", value: "v1" }],
    });
    const first = (await revisionsOf(cp.admin, deployment.id))[0]!;
    const created = await cp.admin.post<Revision>(`/v2/deployments/${deployment.id}/revisions`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.notEqual(created.body.id, first.id);
    assert.deepEqual(created.body.source_revision_config, first.source_revision_config);
    const again = await cp.admin.post<Revision>(`/v2/deployments/${deployment.id}/revisions`, {});
    assert.equal(again.status, 201);
    const current = await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    assert.equal(current.body.latest_revision_id, again.body.id);
    assert.deepEqual(current.body.secrets, [{ name: "KEY", value: "********" }]);
    assert.equal((await revisionsOf(cp.admin, deployment.id)).length, 3);
    const unknown = await cp.admin.post(`/v2/deployments/${crypto.randomUUID()}/revisions`);
    assert.equal(unknown.status, 404);
  });

  test("repo_host: a new ref makes a revision whose commit is not resolved yet", async () => {
    const repo = await createDeployment(
      cp.admin,
      repoHostBody(uniqueName("ref"), integration.id, "https://github.com/acme/agent"),
    );
    const patched = await patch(repo.id, { source_revision_config: { repo_ref: "feature/x" } });
    assert.equal(patched.source_revision_config.repo_ref, "feature/x");
    assert.equal(patched.source_revision_config.graph_config_path, "langgraph.json");
    assert.equal(patched.source_revision_config.repo_commit_sha ?? null, null);
    assert.notEqual(patched.latest_revision_id, repo.latest_revision_id);
  });
});

describe("names", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("63 characters of letters, digits, '.', '_', '-' starting with a letter or digit are accepted", async () => {
    for (const name of ["a".repeat(63), "A.b_c-d", "7agent", "x"]) {
      const response = await cp.admin.post<Deployment>("/v2/deployments", externalImageBody(name));
      assert.equal(response.status, 201, `${name}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.name, name);
    }
  });

  test("names are unique per workspace, case as given", async () => {
    await createDeployment(cp.admin, externalImageBody("Case-Name"));
    const again = await cp.admin.post("/v2/deployments", externalImageBody("Case-Name"));
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, { detail: 'A deployment named "Case-Name" already exists' });
  });
});

describe("resource_spec", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("defaults are filled in from the requests", async () => {
    const deployment = await createDeployment(
      cp.admin,
      externalImageBody(uniqueName("spec"), {
        source_config: {
          resource_spec: {
            min_scale: 1,
            max_scale: 3,
            cpu: 1,
            memory_mb: 512,
            cache_cpu: 0.5,
            cache_memory_mb: 256,
            db_cpu: 0.5,
            db_memory_mb: 1024,
          },
        },
      }),
    );
    const spec = deployment.source_config.resource_spec!;
    const expected: Record<string, number> = {
      min_scale: 1,
      max_scale: 3,
      cpu: 1,
      cpu_limit: 2,
      memory_mb: 512,
      memory_limit_mb: 1024,
      queue_min_scale: 1,
      queue_max_scale: 3,
      queue_cpu: 1,
      queue_cpu_limit: 2,
      queue_memory_mb: 512,
      queue_memory_limit_mb: 1024,
      cache_cpu: 0.5,
      cache_cpu_limit: 1,
      cache_memory_mb: 256,
      cache_memory_limit_mb: 256,
      db_cpu: 0.5,
      db_cpu_limit: 1,
      db_memory_mb: 1024,
      db_memory_limit_mb: 2048,
    };
    for (const [field, value] of Object.entries(expected)) assert.equal(spec[field], value, field);
    assert.deepEqual((await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.source_config.resource_spec, spec);
  });

  test("CPU values are rounded to one decimal; given limits are kept", async () => {
    const deployment = await createDeployment(
      cp.admin,
      externalImageBody(uniqueName("round"), {
        source_config: { resource_spec: { cpu: 1.04, cpu_limit: 2.26, queue_cpu: 0.71, queue_cpu_limit: 3 } },
      }),
    );
    const spec = deployment.source_config.resource_spec!;
    assert.equal(spec.cpu, 1);
    assert.equal(spec.cpu_limit, 2.3);
    assert.equal(spec.queue_cpu, 0.7);
    assert.equal(spec.queue_cpu_limit, 3);
  });

  test("a PATCH overwrites the resource_spec (no merge), through either field", async () => {
    const deployment = await createDeployment(
      cp.admin,
      externalImageBody(uniqueName("overwrite"), { source_config: { resource_spec: { cpu: 1, memory_mb: 512 } } }),
    );
    const top = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      resource_spec: { min_scale: 2, max_scale: 2 },
    });
    assert.equal(top.status, 200, JSON.stringify(top.body));
    const spec = top.body.source_config.resource_spec!;
    assert.equal(spec.min_scale, 2);
    assert.equal(spec.cpu ?? null, null, "cpu of the previous spec is gone");
    assert.equal(spec.memory_mb ?? null, null);
    const nested = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_config: { resource_spec: { cpu: 4 } },
    });
    assert.equal(nested.status, 200, JSON.stringify(nested.body));
    assert.equal(nested.body.source_config.resource_spec?.cpu, 4);
    assert.equal(nested.body.source_config.resource_spec?.cpu_limit, 8);
    assert.equal(nested.body.source_config.resource_spec?.min_scale ?? null, null);
  });

  test("bounds are inclusive: 0.1 and 8 for requests, 16 for limits", async () => {
    const response = await cp.admin.post<Deployment>(
      "/v2/deployments",
      externalImageBody(uniqueName("bounds"), {
        source_config: {
          resource_spec: {
            cpu: 8,
            cpu_limit: 16,
            queue_cpu: 0.1,
            queue_cpu_limit: 0.1,
            cache_cpu: 0.1,
            min_scale: 0,
            max_scale: 0,
          },
        },
      }),
    );
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const spec = response.body.source_config.resource_spec!;
    assert.equal(spec.cpu, 8);
    assert.equal(spec.cpu_limit, 16);
    assert.equal(spec.queue_cpu, 0.1);
    assert.equal(spec.min_scale, 0);
  });
});
