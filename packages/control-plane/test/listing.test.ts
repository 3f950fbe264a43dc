import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  api,
  type ControlPlane,
  createDeployment,
  type Deployment,
  externalImageBody,
  type Page,
  repoHostBody,
  type Revision,
  startControlPlane,
} from "@berth/test-support";

describe("listing deployments", () => {
  let cp: ControlPlane;
  const marker = `mk${randomBytes(3).toString("hex")}`;
  let created: Deployment[]; // oldest first
  let repo: Deployment;

  before(async () => {
    cp = await startControlPlane();
    created = [];
    for (let i = 0; i < 5; i += 1) created.push(await createDeployment(cp.admin, externalImageBody(`${marker}-${i}`)));
    const integration = await cp.addIntegration(cp.defaultTenantId, "gh", ["https://github.com/acme/agent"]);
    repo = await createDeployment(
      cp.admin,
      repoHostBody("other-repo", integration.id, "https://github.com/acme/agent", { deployment_type: "dev" }),
    );
  });
  after(() => cp.stop());

  const list = async (query: string) => {
    const response = await cp.admin.get<Page<Deployment>>(`/v2/deployments?${query}`);
    assert.equal(response.status, 200, `${query}: ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const names = (page: Page<Deployment>) => page.resources.map((d) => d.name);
  const newestFirst = () => [...created].reverse().map((d) => d.name);

  test("defaults: newest first, every deployment, offset for the next page", async () => {
    const page = await list("");
    assert.deepEqual(names(page), ["other-repo", ...newestFirst()]);
    assert.deepEqual(page.resources[1], (await cp.admin.get<Deployment>(`/v2/deployments/${created[4].id}`)).body);
  });

  test("name_contains is a case-insensitive substring", async () => {
    assert.deepEqual(names(await list(`name_contains=${marker}`)), newestFirst());
    assert.deepEqual(names(await list(`name_contains=${marker.toUpperCase()}`)), newestFirst());
    assert.deepEqual(names(await list(`name_contains=${marker}-3`)), [`${marker}-3`]);
    assert.deepEqual(names(await list("name_contains=no-such-name")), []);
  });

  test("limit and offset page through; offset in the answer is the next page's", async () => {
    const first = await list(`name_contains=${marker}&limit=2`);
    assert.deepEqual(names(first), newestFirst().slice(0, 2));
    assert.equal(first.offset, 2);
    const second = await list(`name_contains=${marker}&limit=2&offset=${first.offset}`);
    assert.deepEqual(names(second), newestFirst().slice(2, 4));
    assert.equal(second.offset, 4);
    const third = await list(`name_contains=${marker}&limit=2&offset=${second.offset}`);
    assert.deepEqual(names(third), newestFirst().slice(4));
    const past = await list(`name_contains=${marker}&limit=2&offset=10`);
    assert.deepEqual(past.resources, []);
    const hundred = await list(`name_contains=${marker}&limit=100`);
    assert.equal(hundred.resources.length, 5);
  });

  test("status filter, one value or CSV", async () => {
    assert.deepEqual(names(await list(`name_contains=${marker}&status=AWAITING_DATABASE`)), newestFirst());
    assert.deepEqual(names(await list(`name_contains=${marker}&status=READY`)), []);
    assert.deepEqual(names(await list(`name_contains=${marker}&status=READY,AWAITING_DATABASE`)), newestFirst());
    assert.deepEqual(names(await list(`name_contains=${marker}&status=UNUSED,UNKNOWN`)), []);
  });

  test("deployment_ids filter, CSV or repeated", async () => {
    const ids = [created[1].id, created[3].id];
    assert.deepEqual(names(await list(`deployment_ids=${ids.join(",")}`)), [`${marker}-3`, `${marker}-1`]);
    assert.deepEqual(names(await list(ids.map((id) => `deployment_ids=${id}`).join("&"))), [`${marker}-3`, `${marker}-1`]);
    assert.deepEqual(names(await list(`deployment_ids=${created[0].id}&name_contains=${marker}-4`)), []);
  });

  test("deployment_type filter", async () => {
    assert.deepEqual(names(await list("deployment_type=dev")), [repo.name]);
    assert.deepEqual(names(await list("deployment_type=prod")), []);
  });

  test("AWAITING_DELETE deployments leave every listing, even a status filter for them", async () => {
    const doomed = await createDeployment(cp.admin, externalImageBody(`${marker}-doomed`));
    assert.equal((await cp.admin.delete(`/v2/deployments/${doomed.id}`)).status, 204);
    assert.ok(!names(await list(`name_contains=${marker}`)).includes(doomed.name));
    assert.deepEqual(names(await list(`deployment_ids=${doomed.id}`)), []);
    assert.deepEqual(names(await list(`name_contains=${marker}&status=AWAITING_DELETE`)), []);
  });

  test("limit defaults to 20", async () => {
    const tenant = await cp.createTenant("many");
    const client = api(cp.url, cp.adminKey, tenant.id);
    for (let i = 0; i < 21; i += 1) await createDeployment(client, externalImageBody(`many-${i}`));
    const page = await client.get<Page<Deployment>>("/v2/deployments");
    assert.equal(page.status, 200);
    assert.equal(page.body.resources.length, 20);
    assert.equal(page.body.offset, 20);
    assert.equal(page.body.resources[0].name, "many-20");
    const rest = await client.get<Page<Deployment>>(`/v2/deployments?offset=${page.body.offset}`);
    assert.deepEqual(names(rest.body), ["many-0"]);
  });

  test("the same listing under /api-host", async () => {
    const response = await fetch(`${cp.url}/api-host/v2/deployments?name_contains=${marker}&limit=3`, {
      headers: { "X-Api-Key": cp.adminKey, "X-Tenant-Id": cp.defaultTenantId },
    });
    assert.equal(response.status, 200);
    const page = (await response.json()) as Page<Deployment>;
    assert.deepEqual(names(page), newestFirst().slice(0, 3));
    assert.equal(page.offset, 3);
  });
});

describe("listing revisions", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let ids: string[]; // newest first

  before(async () => {
    cp = await startControlPlane();
    deployment = await createDeployment(cp.admin, externalImageBody("revised"));
    ids = [deployment.latest_revision_id!];
    for (const tag of ["2", "3"]) {
      const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
        source_revision_config: { image_uri: `registry.local/agent:${tag}` },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      ids.unshift(patched.body.latest_revision_id!);
    }
  });
  after(() => cp.stop());

  const list = async (query: string) => {
    const response = await cp.admin.get<Page<Revision>>(`/v2/deployments/${deployment.id}/revisions?${query}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };

  test("newest first, each carrying its own image", async () => {
    const page = await list("");
    assert.deepEqual(
      page.resources.map((r) => r.id),
      ids,
    );
    assert.deepEqual(
      page.resources.map((r) => r.source_revision_config.image_uri),
      ["registry.local/agent:3", "registry.local/agent:2", "registry.local/agent:1"],
    );
    assert.ok(page.resources.every((r) => r.deployment_id === deployment.id && r.source === "external_image"));
  });

  test("limit and offset", async () => {
    const first = await list("limit=1");
    assert.deepEqual(
      first.resources.map((r) => r.id),
      [ids[0]],
    );
    assert.equal(first.offset, 1);
    const rest = await list(`limit=5&offset=${first.offset}`);
    assert.deepEqual(
      rest.resources.map((r) => r.id),
      ids.slice(1),
    );
  });

  test("status filter, one value or CSV", async () => {
    assert.deepEqual(
      (await list("status=QUEUED")).resources.map((r) => r.id),
      [ids[0]],
    );
    assert.deepEqual(
      (await list("status=SKIPPED")).resources.map((r) => r.id),
      ids.slice(1),
    );
    assert.deepEqual(
      (await list("status=SKIPPED,QUEUED")).resources.map((r) => r.id),
      ids,
    );
    assert.deepEqual((await list("status=DEPLOYED")).resources, []);
  });
});
