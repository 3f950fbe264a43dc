import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import {
  api,
  assertError,
  assertValidationError,
  type ControlPlane,
  createDeployment,
  type Deployment,
  type ErrorBody,
  externalImageBody,
  internalSourceBody,
  makeTarball,
  put,
  revisionsOf,
  startControlPlane,
  uniqueName,
  type Uploaded,
  type UploadUrl,
} from "@berth/test-support";

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("uploads", () => {
  let cp: ControlPlane;
  let expiring: ControlPlane;
  let small: ControlPlane;
  before(async () => {
    [cp, expiring, small] = await Promise.all([
      startControlPlane(),
      startControlPlane({ env: { BERTH_UPLOAD_URL_TTL_SECONDS: "0", BERTH_CONTROL_PLANE_URL: "http://cp.example.test:9999" } }),
      startControlPlane({ env: { BERTH_UPLOAD_MAX_BYTES: "1024" } }),
    ]);
  });
  after(() => Promise.all([cp.stop(), expiring.stop(), small.stop()]));

  async function issue(server: ControlPlane, deploymentId?: string): Promise<{ deployment: string; issued: UploadUrl }> {
    const id = deploymentId ?? (await createDeployment(server.admin, internalSourceBody(uniqueName("up")))).id;
    const response = await server.admin.post<UploadUrl>(`/v2/deployments/${id}/upload-url`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return { deployment: id, issued: response.body };
  }

  test("upload-url answers a signed URL, an object path of the deployment and an expiry", async () => {
    const before = Date.now();
    const { deployment, issued } = await issue(cp);
    assert.match(issued.object_path, new RegExp(`^deployments/${deployment}/sources/[A-Za-z0-9_-]+\\.tar\\.gz$`));
    const uploadId = issued.object_path
      .split("/")
      .pop()!
      .replace(/\.tar\.gz$/, "");
    const url = new URL(issued.upload_url);
    assert.equal(`${url.origin}${url.pathname}`, `${cp.url}/v2/uploads/${uploadId}`);
    assert.match(url.searchParams.get("expires") ?? "", /^\d+$/);
    assert.match(url.searchParams.get("signature") ?? "", /^[0-9a-fA-F]{64}$|^[A-Za-z0-9_-]{43}=?$/);
    const expires = Date.parse(issued.expires_at);
    assert.ok(Math.abs(expires - (before + 900_000)) < 60_000, `expires_at ${issued.expires_at} is about 900 s away`);
    assert.ok(Math.abs(Number(url.searchParams.get("expires")) * 1000 - expires) < 1000, "expires is expires_at in unix seconds");
  });

  test("PUT of a gzip tarball without API key: 200 with its path, size and sha256", async () => {
    const { issued } = await issue(cp);
    const tarball = makeTarball({ "langgraph.json": '{"graphs":{}}', "agent.ts": "export const graph = 1;\n" });
    const response = await put<Uploaded>(issued.upload_url, tarball);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body, { object_path: issued.object_path, size_bytes: tarball.length, sha256: sha256(tarball) });
    // Stored as a file under <data-dir>/uploads/.
    const stored = readdirSync(join(cp.dataDir, "uploads"), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name)));
    assert.ok(
      stored.some((bytes) => bytes.equals(tarball)),
      "the tarball is a file under <data-dir>/uploads/",
    );
  });

  test("a PUT may be repeated until the path is used, then the PATCH takes the last one", async () => {
    const { deployment, issued } = await issue(cp);
    const first = await put<Uploaded>(issued.upload_url, makeTarball({ "langgraph.json": "{}" }));
    assert.equal(first.status, 200);
    const secondBytes = makeTarball({ "langgraph.json": '{"graphs":{"a":"./a.ts:g"}}' });
    const second = await put<Uploaded>(issued.upload_url, secondBytes, "application/octet-stream");
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.sha256, sha256(secondBytes));
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment}`, {
      source_revision_config: { source_tarball_path: issued.object_path },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const third = await put(issued.upload_url, makeTarball());
    assert.ok(third.status >= 400 && third.status < 500, `a used path takes no more PUTs: ${third.status}`);
  });

  test("a tampered signature: 403", async () => {
    const { issued } = await issue(cp);
    const url = new URL(issued.upload_url);
    const signature = url.searchParams.get("signature")!;
    url.searchParams.set("signature", (signature[0] === "a" ? "b" : "a") + signature.slice(1));
    assert.equal((await put(url.toString(), makeTarball())).status, 403);
    // Without a signature at all the request is malformed: a 422 like every shape error.
    url.searchParams.delete("signature");
    assertValidationError(await put(url.toString(), makeTarball()), ["query", "signature"]);
  });

  test("a modified expires: 403", async () => {
    const { issued } = await issue(cp);
    const url = new URL(issued.upload_url);
    url.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600));
    assert.equal((await put(url.toString(), makeTarball())).status, 403);
  });

  test("a signature of another upload: 403", async () => {
    const [{ issued: one }, { issued: two }] = await Promise.all([issue(cp), issue(cp)]);
    const url = new URL(one.upload_url);
    const other = new URL(two.upload_url);
    url.searchParams.set("expires", other.searchParams.get("expires")!);
    url.searchParams.set("signature", other.searchParams.get("signature")!);
    assert.equal((await put(url.toString(), makeTarball())).status, 403);
  });

  test("an expired URL (TTL 0): 403; the URL is built on BERTH_CONTROL_PLANE_URL", async () => {
    const { issued } = await issue(expiring);
    assert.ok(issued.upload_url.startsWith("http://cp.example.test:9999/v2/uploads/"), issued.upload_url);
    const local = issued.upload_url.replace("http://cp.example.test:9999", expiring.url);
    const response = await put(local, makeTarball());
    assert.equal(response.status, 403, JSON.stringify(response.body));
  });

  test("over BERTH_UPLOAD_MAX_BYTES: 413; at the limit: 200", async () => {
    const { issued } = await issue(small);
    const big = Buffer.concat([gzipSync(Buffer.alloc(0)), randomBytes(2048)]);
    assert.ok(big.length > 2048);
    const response = await put<ErrorBody>(issued.upload_url, big);
    assertError(response, 413, [/./]);
    const fits = gzipSync(Buffer.from("small"));
    const ok = await put<Uploaded>(issued.upload_url, Buffer.concat([fits, Buffer.alloc(1024 - fits.length)]));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.size_bytes, 1024);
  });

  test("not gzip: 400", async () => {
    const { issued } = await issue(cp);
    const response = await put<ErrorBody>(issued.upload_url, Buffer.from("this is not a tarball"));
    assertError(response, 400, [/gzip/i]);
    const empty = await put<ErrorBody>(issued.upload_url, Buffer.alloc(0));
    assert.equal(empty.status, 400, JSON.stringify(empty.body));
  });

  test("any gzip stream is accepted (only the gzip magic is checked)", async () => {
    const { issued } = await issue(cp);
    const bytes = gzipSync(Buffer.from("any bytes"));
    const response = await put<Uploaded>(issued.upload_url, bytes);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.sha256, sha256(bytes));
  });

  test("upload-url on an external_image deployment: 400", async () => {
    const deployment = await createDeployment(cp.admin, externalImageBody(uniqueName("ext")));
    for (const prefix of ["/v2/deployments", "/deployments"]) {
      const response = await cp.admin.post<ErrorBody>(`${prefix}/${deployment.id}/upload-url`);
      assertError(response, 400, [/internal_source/]);
    }
  });

  test("the spec path /deployments/{id}/upload-url and the /api-host prefix work", async () => {
    const deployment = await createDeployment(cp.admin, internalSourceBody(uniqueName("spec-path")));
    const spec = await cp.admin.post<UploadUrl>(`/deployments/${deployment.id}/upload-url`);
    assert.equal(spec.status, 200, JSON.stringify(spec.body));
    assert.match(spec.body.object_path, new RegExp(`^deployments/${deployment.id}/sources/`));
    const hosted = await api(`${cp.url}/api-host`, cp.adminKey, cp.defaultTenantId).post<UploadUrl>(
      `/v2/deployments/${deployment.id}/upload-url`,
    );
    assert.equal(hosted.status, 200, JSON.stringify(hosted.body));
    assert.ok(hosted.body.upload_url.startsWith(`${cp.url}/api-host/v2/uploads/`), hosted.body.upload_url);
    const uploaded = await put<Uploaded>(hosted.body.upload_url, makeTarball());
    assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
    const viaSpec = await put<Uploaded>(spec.body.upload_url, makeTarball());
    assert.equal(viaSpec.status, 200, JSON.stringify(viaSpec.body));
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${deployment.id}`, {
      source_revision_config: { source_tarball_path: hosted.body.object_path },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
  });

  test("the object path of deployment X on deployment Y: 400; on X: 200", async () => {
    const { deployment: x, issued } = await issue(cp);
    assert.equal((await put(issued.upload_url, makeTarball())).status, 200);
    const y = await createDeployment(cp.admin, internalSourceBody(uniqueName("y")));
    const wrong = await cp.admin.patch<ErrorBody>(`/v2/deployments/${y.id}`, {
      source_revision_config: { source_tarball_path: issued.object_path },
    });
    assertError(wrong, 400, [/source_tarball_path/]);
    assert.equal((await revisionsOf(cp.admin, y.id)).length, 1);
    const right = await cp.admin.patch<Deployment>(`/v2/deployments/${x}`, {
      source_revision_config: { source_tarball_path: issued.object_path },
    });
    assert.equal(right.status, 200, JSON.stringify(right.body));
    assert.equal(right.body.source_revision_config.source_tarball_path, issued.object_path);
  });
});
