import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  api,
  assertError,
  assertValidationError,
  type ControlPlane,
  createDeployment,
  type Deployment,
  IMAGE,
  type Integration,
  type Page,
  revisionsOf,
  startControlPlane,
  uniqueName,
  uploadSource,
} from "@berth/test-support";

/**
 * The hosted platform's dialect (docs/control-plane.md): the request bodies the
 * official deploy CLI sends, byte for byte, and where the dialect ends.
 */

const REPO_URL = "https://github.com/acme/agent";

/** What `langgraphjs deploy` sends to create a deployment: internal_source for --remote, internal_docker for a local build. */
const cliCreate = (name: string, source: "internal_source" | "internal_docker") => ({
  name,
  source,
  source_config: { deployment_type: "dev" },
  source_revision_config: {},
  secrets: [{ name: "GREETING", value: "hi" }],
});

describe("the hosted dialect", () => {
  let cp: ControlPlane;
  let integration: Integration;

  before(async () => {
    cp = await startControlPlane();
    integration = await cp.addIntegration(cp.defaultTenantId, "gh", [`${REPO_URL}#main`]);
  });
  after(() => cp.stop());

  test("the CLI's remote build: create without a config path, then the PATCH with the tarball and langgraph_config_path", async () => {
    const created = await createDeployment(cp.admin, cliCreate(uniqueName("remote"), "internal_source"));
    assert.equal(created.source, "internal_source");
    assert.equal(created.source_config.deployment_type, "dev", "deployment_type is stored and shown");
    assert.equal(created.source_revision_config.graph_config_path, null);
    const [first] = await revisionsOf(cp.admin, created.id);
    assert.equal(first!.status, "CREATING");
    assert.match(first!.status_message ?? "", /source_tarball_path and source_revision_config\.graph_config_path$/);

    const objectPath = await uploadSource(cp.admin, created.id);
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${created.id}`, {
      revision_source: "internal_source",
      source_revision_config: { source_tarball_path: objectPath, langgraph_config_path: "langgraph.json" },
      secrets: [{ name: "GREETING", value: "hi" }],
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.source_revision_config.graph_config_path, "langgraph.json", "answers keep the spec's names");
    assert.equal("langgraph_config_path" in patched.body.source_revision_config, false);
    const revisions = await revisionsOf(cp.admin, created.id);
    assert.deepEqual(
      revisions.map((revision) => revision.status),
      ["QUEUED", "SKIPPED"],
    );

    const listed = await cp.admin.get<Page<Deployment>>("/v2/deployments?deployment_type=dev");
    assert.ok(
      listed.body.resources.some((deployment) => deployment.id === created.id),
      "the list filters on it",
    );
  });

  test("a tarball without a config path, for a deployment created without one, is a 400", async () => {
    const created = await createDeployment(cp.admin, cliCreate(uniqueName("nopath"), "internal_source"));
    const objectPath = await uploadSource(cp.admin, created.id);
    const spec = await cp.admin.patch(`/v2/deployments/${created.id}`, {
      source_revision_config: { source_tarball_path: objectPath },
    });
    assertError(spec, 400, [/source_revision_config\.graph_config_path is required/]);
    const hosted = await cp.admin.patch(`/v2/deployments/${created.id}`, {
      revision_source: "internal_source",
      source_revision_config: { source_tarball_path: objectPath },
    });
    assertError(hosted, 400, [/graph_config_path is required/]);
    assert.equal((await revisionsOf(cp.admin, created.id)).length, 1);
  });

  test("the CLI's local build: an internal_docker deployment is internal_image, and its image PATCH makes a revision", async () => {
    const created = await createDeployment(cp.admin, cliCreate(uniqueName("local"), "internal_docker"));
    assert.equal(created.source, "internal_image");
    assert.equal(created.source_config.deployment_type, "dev");
    const [first] = await revisionsOf(cp.admin, created.id);
    assert.equal(first!.status, "CREATING");

    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${created.id}`, {
      revision_source: "internal_docker",
      source_revision_config: { image_uri: IMAGE },
      secrets: [{ name: "GREETING", value: "hi" }],
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.source_revision_config.image_uri, IMAGE);
    const revisions = await revisionsOf(cp.admin, created.id);
    assert.deepEqual(
      revisions.map((revision) => [revision.status, revision.source]),
      [
        ["QUEUED", "internal_image"],
        ["SKIPPED", "internal_image"],
      ],
    );
  });

  test("github and langgraph_config_path create a repo_host deployment", async () => {
    const created = await createDeployment(cp.admin, {
      name: uniqueName("gh"),
      source: "github",
      source_config: { integration_id: integration.id, repo_url: REPO_URL, deployment_type: "prod", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "agents/langgraph.json" },
      secrets: [],
    });
    assert.equal(created.source, "repo_host");
    assert.equal(created.source_revision_config.graph_config_path, "agents/langgraph.json");
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${created.id}`, {
      revision_source: "github",
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.source_revision_config.graph_config_path, "langgraph.json");
  });

  test("a dialect request's refusals name the fields as it sent them", async () => {
    const withPath = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("x"), "internal_docker"),
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    assertError(withPath, 400, "source_revision_config.langgraph_config_path must be null for source internal_docker");
    const outside = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("x"), "internal_source"),
      source_revision_config: { langgraph_config_path: "../langgraph.json" },
    });
    assertError(outside, 400, [/^source_revision_config\.langgraph_config_path must be a relative path/]);
    const docker = await createDeployment(cp.admin, cliCreate(uniqueName("docker"), "internal_docker"));
    const wrongSource = await cp.admin.patch(`/v2/deployments/${docker.id}`, { revision_source: "github" });
    assertError(wrongSource, 400, "revision_source github does not match the deployment's source internal_docker");
  });

  test("the spec's names and the hosted ones in one request: 400", async () => {
    const both = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("mix"), "internal_source"),
      source_revision_config: { graph_config_path: "langgraph.json", langgraph_config_path: "langgraph.json" },
    });
    assertError(both, 400, [
      /mixes the hosted platform's names \(source_revision_config\.langgraph_config_path\) with the spec's \(source_revision_config\.graph_config_path\)/,
    ]);
    const sourceAndPath = await cp.admin.post("/v2/deployments", {
      name: uniqueName("mix"),
      source: "github",
      source_config: { integration_id: integration.id, repo_url: REPO_URL },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });
    assertError(sourceAndPath, 400, [/mixes/, /source github/, /graph_config_path/]);
    const ext = await createDeployment(cp.admin, {
      name: uniqueName("ext"),
      source: "external_image",
      source_config: {},
      source_revision_config: { image_uri: IMAGE },
      secrets: [],
    });
    const patch = await cp.admin.patch(`/v2/deployments/${ext.id}`, {
      revision_source: "external_image",
      source_revision_config: { langgraph_config_path: "a.json" },
    });
    assertError(patch, 400, [/mixes/]);
  });

  test("requests in the spec's names keep the spec's rules", async () => {
    const specPathAndType = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("spec"), "internal_source"),
      source_revision_config: { graph_config_path: "langgraph.json" },
    });
    assertError(specPathAndType, 400, "source_config.deployment_type only applies to source repo_host, not internal_source");
    const noPath = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("spec"), "internal_source"),
      source_config: {},
    });
    assertError(noPath, 400, "source_revision_config.graph_config_path is required for source internal_source");
    const image = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("spec"), "internal_source"),
      source: "internal_image",
    });
    assertError(image, 400, "source_config.deployment_type only applies to source repo_host, not internal_image");
    const unknown = await cp.admin.post("/v2/deployments", {
      ...cliCreate(uniqueName("spec"), "internal_source"),
      source: "external_docker",
    });
    assertValidationError(unknown, ["body", "source"]);
  });

  describe("push-token (the CLI's local build)", () => {
    test("an internal_docker deployment on a control plane without a registry: 400 saying so", async () => {
      const created = await createDeployment(cp.admin, cliCreate(uniqueName("push"), "internal_docker"));
      for (const prefix of ["", "/api-host"]) {
        const response = await cp.admin.post(`${prefix}/v2/deployments/${created.id}/push-token`);
        assertError(response, 400, [
          /^Push tokens need an image registry, which this control plane is not configured with/,
          /langgraphjs deploy --remote/,
        ]);
      }
    });

    test("another source: the hosted platform's 400, which the CLI recognises", async () => {
      const created = await createDeployment(cp.admin, cliCreate(uniqueName("push"), "internal_source"));
      const response = await cp.admin.post(`/v2/deployments/${created.id}/push-token`);
      assertError(response, 400, [/only available for 'internal_docker' source deployments/, /not internal_source/]);
    });

    test("unknown id 404, malformed id 422, no key 401", async () => {
      const unknown = randomUUID();
      assertError(await cp.admin.post(`/v2/deployments/${unknown}/push-token`), 404, [new RegExp(unknown)]);
      assertValidationError(await cp.admin.post("/v2/deployments/nope/push-token"), ["path", "deployment_id"]);
      const anonymous = await api(cp.url).post(`/v2/deployments/${unknown}/push-token`);
      assert.equal(anonymous.status, 401);
    });
  });
});
