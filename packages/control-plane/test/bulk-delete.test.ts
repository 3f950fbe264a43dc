import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  assertValidationError,
  type BulkDeleteBody,
  type ControlPlane,
  createDeployment,
  type Deployment,
  externalImageBody,
  type Page,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

describe("bulk delete", () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  const make = async (n: number) =>
    Promise.all(Array.from({ length: n }, () => createDeployment(cp.admin, externalImageBody(uniqueName("bulk")))));
  const exists = async (id: string) => (await cp.admin.get(`/v2/deployments/${id}`)).status === 200;
  const resultOf = (body: BulkDeleteBody, id: string) => body.results.find((r) => r.deployment_id === id);

  test("all exist: 200, one result per id, all gone", async () => {
    const deployments = await make(3);
    const ids = deployments.map((d) => d.id);
    const response = await cp.admin.delete<BulkDeleteBody>(`/v2/deployments?deployment_ids=${ids.join(",")}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body.results.map((r) => r.deployment_id).sort(), [...ids].sort());
    for (const result of response.body.results) assert.ok("status" in result && "detail" in result);
    const statuses = new Set(response.body.results.map((r) => JSON.stringify(r.status)));
    assert.equal(statuses.size, 1, "every id has the same outcome");
    for (const id of ids) assert.equal(await exists(id), false);
    const listed = await cp.admin.get<Page<Deployment>>(`/v2/deployments?deployment_ids=${ids.join(",")}`);
    assert.deepEqual(listed.body.resources, []);
  });

  test("ids repeated as query parameters work the same", async () => {
    const ids = (await make(2)).map((d) => d.id);
    const response = await cp.admin.delete<BulkDeleteBody>(
      `/v2/deployments?${ids.map((id) => `deployment_ids=${id}`).join("&")}`,
    );
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body.results.map((r) => r.deployment_id).sort(), [...ids].sort());
    for (const id of ids) assert.equal(await exists(id), false);
  });

  test("some exist: 207 with per-id results; only the existing ones are deleted", async () => {
    const [kept, doomed] = await make(2);
    const missing = randomUUID();
    const response = await cp.admin.delete<BulkDeleteBody>(`/v2/deployments?deployment_ids=${doomed.id},${missing}`);
    assert.equal(response.status, 207, JSON.stringify(response.body));
    assert.equal(response.body.results.length, 2);
    const deleted = resultOf(response.body, doomed.id);
    const notFound = resultOf(response.body, missing);
    assert.ok(deleted && notFound, JSON.stringify(response.body));
    assert.notDeepEqual(deleted.status, notFound.status, "the results tell deleted from missing");
    assert.match(String(notFound.detail), new RegExp(missing));
    assert.equal(await exists(doomed.id), false);
    assert.equal(await exists(kept.id), true, "an id not listed is untouched");
  });

  test("an already deleted id counts as missing", async () => {
    const [gone, live] = await make(2);
    assert.equal((await cp.admin.delete(`/v2/deployments/${gone.id}`)).status, 204);
    const response = await cp.admin.delete<BulkDeleteBody>(`/v2/deployments?deployment_ids=${gone.id},${live.id}`);
    assert.equal(response.status, 207, JSON.stringify(response.body));
    assert.equal(await exists(live.id), false);
  });

  test("none exist: 404, and nothing is deleted", async () => {
    const [bystander] = await make(1);
    const missing = [randomUUID(), randomUUID()];
    const response = await cp.admin.delete<BulkDeleteBody>(`/v2/deployments?deployment_ids=${missing.join(",")}`);
    assert.equal(response.status, 404, JSON.stringify(response.body));
    assert.deepEqual(response.body.results.map((r) => r.deployment_id).sort(), [...missing].sort());
    assert.equal(await exists(bystander.id), true);
  });

  test("exactly 100 ids are accepted; more than 100: 422 and nothing is deleted", async () => {
    const [victim] = await make(1);
    const hundred = [victim.id, ...Array.from({ length: 99 }, () => randomUUID())];
    const tooMany = [...hundred, randomUUID()];
    const refused = await cp.admin.delete(`/v2/deployments?deployment_ids=${tooMany.join(",")}`);
    assertValidationError(refused, ["query", "deployment_ids"], true);
    assert.equal(await exists(victim.id), true);
    const accepted = await cp.admin.delete<BulkDeleteBody>(`/v2/deployments?deployment_ids=${hundred.join(",")}`);
    assert.equal(accepted.status, 207, JSON.stringify(accepted.body).slice(0, 300));
    assert.equal(accepted.body.results.length, 100);
    assert.equal(await exists(victim.id), false);
  });

  test("a deleted deployment's name can be reused", async () => {
    const [first] = await make(1);
    const response = await cp.admin.delete<BulkDeleteBody>(`/v2/deployments?deployment_ids=${first.id}`);
    assert.equal(response.status, 200);
    const again = await cp.admin.post<Deployment>("/v2/deployments", externalImageBody(first.name));
    assert.equal(again.status, 201, JSON.stringify(again.body));
  });

  test("?delete_tracing_project=true is accepted on a single delete", async () => {
    const [deployment] = await make(1);
    const response = await cp.admin.delete(`/v2/deployments/${deployment.id}?delete_tracing_project=true`);
    assert.equal(response.status, 204);
    assert.equal(await exists(deployment.id), false);
  });
});
