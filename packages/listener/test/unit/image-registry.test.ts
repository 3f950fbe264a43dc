import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { RegistryApi, registryBaseUrl } from "../../src/build/image/registry-api.js";
import { buildKeyOf } from "../../src/listener/artifacts.js";
import { parseImageRegistry, plannedRefOf, pushedRefOf, registryRepositoryOf } from "../../src/listener/image-registry.js";
import type { AssignedRevision, Assignment } from "@berth/listener-protocol";
import { startGitHost } from "@berth/test-support/git-host";
import { specWith } from "../helpers/revision-specs.js";

const DEPLOYMENT = "0b7c4f7e-3d52-4a8e-9c1e-6f1f0c2a9d11";

test("--image-registry is HOST[:PORT]/PATH, and a build is pushed as <registry>/deployment-<id>:<build key hash>", () => {
  assert.deepEqual(parseImageRegistry("registry.example.com/team/berth"), { host: "registry.example.com", path: "team/berth" });
  assert.deepEqual(parseImageRegistry("127.0.0.1:5000/agents/"), { host: "127.0.0.1:5000", path: "agents" });
  assert.deepEqual(parseImageRegistry("localhost"), { host: "localhost", path: "" });
  for (const wrong of ["agents/berth", "Registry.example.com/Team", "registry.example.com:port/x", "https://r.example/x", ""])
    assert.throws(
      () => parseImageRegistry(wrong),
      /--image-registry \(BERTH_CLUSTER_IMAGE_REGISTRY\) must be HOST\[:PORT\]\/PATH/,
      wrong,
    );

  const registry = parseImageRegistry("127.0.0.1:5000/agents");
  const key = `${DEPLOYMENT}/0123456789abcdef0123456789abcdef`;
  assert.equal(registryRepositoryOf(registry, DEPLOYMENT), `agents/deployment-${DEPLOYMENT}`);
  assert.equal(
    pushedRefOf(registry, DEPLOYMENT, key),
    `127.0.0.1:5000/agents/deployment-${DEPLOYMENT}:0123456789abcdef0123456789abcdef`,
  );
  assert.equal(registryBaseUrl("127.0.0.1:5000"), "http://127.0.0.1:5000");
  assert.equal(registryBaseUrl("registry.example.com"), "https://registry.example.com");
});

test("--render's reference is the build key's: the upload's hash, or a repo_host revision's recorded commit", async () => {
  const registry = parseImageRegistry("registry.example.com/berth");
  const assignment = { id: DEPLOYMENT, tenant_id: "tenant-1" } as Assignment;
  const build = { graph_config_path: "langgraph.json", install_command: null, build_command: "npm run build" };
  const base = { spec: specWith({ build }) };
  const owner = { tenantId: "tenant-1", deploymentId: DEPLOYMENT };
  const upload = { ...base, source: "internal_source", tarball_sha256: "ab".repeat(32) } as unknown as AssignedRevision;
  assert.equal(
    await plannedRefOf(registry, assignment, upload),
    pushedRefOf(registry, DEPLOYMENT, buildKeyOf(owner, upload, "ab".repeat(32))),
  );
  const commit = "c".repeat(40);
  const git = {
    ...base,
    source: "repo_host",
    tarball_sha256: null,
    spec: specWith({ source: "repo_host", build, repo_commit_sha: commit }),
  } as unknown as AssignedRevision;
  assert.equal(
    await plannedRefOf(registry, assignment, git),
    pushedRefOf(registry, DEPLOYMENT, buildKeyOf(owner, git, `git:${commit}`)),
  );
  // Not fetched yet: where the ref points now, asked with git ls-remote (the source is not fetched).
  const host = await startGitHost();
  try {
    const head = host.createRepository("agent.git", { "langgraph.json": "{}" });
    const unfetched = {
      ...base,
      source: "repo_host",
      tarball_sha256: null,
      spec: specWith({
        source: "repo_host",
        build,
        repository: { url: `${host.url}/agent.git`, ref: "main", credentials: null, allow_local: false },
      }),
    } as unknown as AssignedRevision;
    assert.equal(
      await plannedRefOf(registry, assignment, unfetched),
      pushedRefOf(registry, DEPLOYMENT, buildKeyOf(owner, unfetched, `git:${head}`)),
    );
  } finally {
    await host.close();
  }
  const never = { ...base, source: "internal_source", tarball_sha256: null, number: 1 } as unknown as AssignedRevision;
  await assert.rejects(plannedRefOf(registry, assignment, never), /has no uploaded source tarball/);
});

test("the registry API answers a bearer challenge with a token from its realm, and a registry without deletes is told apart", async () => {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url!, "http://registry");
    seen.push(`${req.method} ${url.pathname}${url.search} ${req.headers.authorization ?? "-"}`);
    if (url.pathname === "/token") {
      assert.equal(req.headers.authorization, `Basic ${Buffer.from("ci:secret").toString("base64")}`);
      return res.end(JSON.stringify({ token: `t-${url.searchParams.get("scope")}` }));
    }
    const scope = url.pathname.endsWith("/tags/list") || req.method === "GET" ? "repository:r/x:pull" : "repository:r/x:delete";
    if (req.headers.authorization !== `Bearer t-${scope}`) {
      const realm = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
      res.writeHead(401, { "WWW-Authenticate": `Bearer realm="${realm}",service="registry",scope="${scope}"` });
      return res.end();
    }
    if (url.pathname === "/v2/r/x/tags/list" && !url.searchParams.has("last")) {
      res.writeHead(200, { Link: '</v2/r/x/tags/list?n=1000&last=a>; rel="next"' });
      return res.end(JSON.stringify({ tags: ["a"] }));
    }
    if (url.pathname === "/v2/r/x/tags/list") return res.end(JSON.stringify({ tags: ["b"] }));
    if (url.pathname === "/v2/r/x/manifests/a" && req.method === "GET") {
      res.writeHead(200, { "Docker-Content-Digest": "sha256:m" });
      return res.end(JSON.stringify({ config: { digest: "sha256:c" } }));
    }
    if (req.method === "DELETE") return res.writeHead(405).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const api = new RegistryApi(`127.0.0.1:${(server.address() as AddressInfo).port}`, { username: "ci", password: "secret" });
    assert.deepEqual(await api.tags("r/x"), ["a", "b"]);
    assert.deepEqual(await api.manifest("r/x", "a"), { digest: "sha256:m", configDigest: "sha256:c" });
    assert.equal(await api.manifest("r/x", "gone"), undefined);
    assert.equal(await api.deleteManifest("r/x", "sha256:m"), false);
    // One token per scope, asked once: later requests of the same scope carry it at once.
    assert.equal(seen.filter((line) => line.startsWith("GET /token")).length, 2, seen.join("\n"));
  } finally {
    server.close();
  }
});
