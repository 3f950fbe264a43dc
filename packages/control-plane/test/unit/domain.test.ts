import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { checkCommand, checkGraphConfigPath } from "../../src/domain/deployment-rules.js";
import { RESERVED_RESOURCE_FIELDS, ResourceSpec as ResourceSpecSchema } from "../../src/domain/inputs/resource-spec.js";
import { normalizeResourceSpec, RESOURCE_SPEC_FIELDS } from "../../src/domain/resource-spec.js";
import { revisionSpecOf } from "../../src/domain/revision-spec.js";
import { SecretBox } from "../../src/domain/secret-box.js";
import { MASKED_VALUE, resolveSecrets } from "../../src/domain/secrets.js";

test("resource spec: CPU rounded to one decimal, limits doubled, queue from the API values, cache memory limit 1x", () => {
  const spec = normalizeResourceSpec(
    { min_scale: 1, max_scale: 3, cpu: 1.26, memory_mb: 512, cache_cpu: 0.5, cache_memory_mb: 256 },
    "resource_spec",
  );
  assert.equal(spec.cpu, 1.3);
  assert.equal(spec.cpu_limit, 2.6);
  assert.equal(spec.memory_limit_mb, 1024);
  assert.equal(spec.queue_min_scale, 1);
  assert.equal(spec.queue_max_scale, 3);
  assert.equal(spec.queue_cpu, 1.3);
  assert.equal(spec.queue_cpu_limit, 2.6);
  assert.equal(spec.queue_memory_mb, 512);
  assert.equal(spec.queue_memory_limit_mb, 1024);
  assert.equal(spec.cache_cpu_limit, 1);
  assert.equal(spec.cache_memory_limit_mb, 256);
  assert.equal(spec.labels, null);
});

test("resource spec: given limits are kept; a limit below its request and min above max are refused", () => {
  assert.equal(normalizeResourceSpec({ cpu: 1, cpu_limit: 1.04 }, "resource_spec").cpu_limit, 1);
  assert.throws(
    () => normalizeResourceSpec({ cpu: 2, cpu_limit: 1 }, "resource_spec"),
    /cpu_limit \(1\) must not be below cpu \(2\)/,
  );
  assert.throws(
    () => normalizeResourceSpec({ min_scale: 3, max_scale: 1 }, "resource_spec"),
    /min_scale \(3\) must not be above max_scale \(1\)/,
  );
  assert.throws(
    () => normalizeResourceSpec({ executor_cpu: 1 } as never, "resource_spec"),
    /resource_spec.executor_cpu is reserved/,
  );
});

test("resource spec: the request schema's fields, reserved ones excepted, are the protocol's, in the spec's order", () => {
  const reserved: readonly string[] = RESERVED_RESOURCE_FIELDS;
  const requestFields = Object.keys(ResourceSpecSchema.shape).filter((key) => !reserved.includes(key));
  assert.deepEqual(requestFields, [...RESOURCE_SPEC_FIELDS]);
});

test("revision spec: typed from the stored snapshot, every resource field present, replica counts whole and ordered", () => {
  const resources = normalizeResourceSpec({ min_scale: 2, labels: { team: "a" } }, "resource_spec");
  const spec = revisionSpecOf(
    {
      source: "external_image",
      source_config: {
        deployment_type: "dev",
        custom_url: "",
        build_on_push: null,
        resource_spec: resources,
        listener_config: null,
      },
      source_revision_config: { image_uri: "example.com/agent:1", graph_config_path: null, repo_commit_sha: null },
      secret_references: null,
    },
    null,
  );
  assert.equal(spec.deployment_type, "dev");
  assert.equal(spec.image_uri, "example.com/agent:1");
  assert.deepEqual(spec.build, { graph_config_path: null, install_command: null, build_command: null });
  assert.equal(spec.custom_url, null);
  assert.equal(spec.build_on_push, false);
  assert.deepEqual(spec.secret_references, []);
  assert.equal(spec.cluster_namespace, null);
  assert.deepEqual(Object.keys(spec.resources), [...RESOURCE_SPEC_FIELDS]);
  assert.deepEqual(spec.resources.labels, { team: "a" });
  assert.deepEqual(spec.scale, { replicas: 2, max_replicas: 2, workers: 2, max_workers: 2 });

  const bare = revisionSpecOf(
    {
      source: "repo_host",
      source_config: { deployment_type: "unknown", build_on_push: true, listener_config: { cluster_namespace: "agents" } },
      source_revision_config: { graph_config_path: "langgraph.json", repo_commit_sha: "c".repeat(40) },
      secret_references: [{ name: "KEY", secret_name: "s", secret_key: "k" }],
    },
    { url: "https://example.com/a.git", ref: "main", credentials: null, allow_local: false },
  );
  assert.equal(bare.deployment_type, null);
  assert.equal(bare.build_on_push, true);
  assert.equal(bare.cluster_namespace, "agents");
  assert.equal(bare.repo_commit_sha, "c".repeat(40));
  assert.equal(bare.repository?.ref, "main");
  assert.ok(Object.values(bare.resources).every((value) => value === null));
  assert.deepEqual(bare.scale, { replicas: 1, max_replicas: 1, workers: 1, max_workers: 1 });
});

test("commands: && is allowed, shell metacharacters and a lone & are not", () => {
  checkCommand("install_command", "npm ci && npm run build");
  for (const bad of ["npm ci; rm -rf /", "echo $HOME", "a | b", "a > b", "a & b", 'echo "x"', "a\nb", "echo `id`"]) {
    assert.throws(() => checkCommand("install_command", bad), /shell would interpret/, bad);
  }
});

test("graph config path: relative .json inside the source", () => {
  for (const good of ["langgraph.json", "./langgraph.json", "apps/agent/langgraph.json"]) checkGraphConfigPath(good);
  for (const bad of ["/etc/langgraph.json", "../langgraph.json", "a/../../langgraph.json", "langgraph.yaml"]) {
    assert.throws(() => checkGraphConfigPath(bad), /relative path/, bad);
  }
});

test("secrets: masked values keep the stored value; names are checked", () => {
  const kept = resolveSecrets(
    [
      { name: "A", value: MASKED_VALUE },
      { name: "B", value: "new" },
    ],
    [{ name: "A", value: "old" }],
  );
  assert.deepEqual(kept, [
    { name: "A", value: "old" },
    { name: "B", value: "new" },
  ]);
  assert.throws(() => resolveSecrets([{ name: "C", value: MASKED_VALUE }], []), /no stored value/);
  assert.throws(() => resolveSecrets([{ name: "1A", value: "x" }], []), /not a valid environment variable name/);
  assert.throws(() => resolveSecrets([{ name: "PORT", value: "x" }], []), /reserved/);
  assert.throws(
    () =>
      resolveSecrets(
        [
          { name: "A", value: "x" },
          { name: "A", value: "y" },
        ],
        [],
      ),
    /more than once/,
  );
});

test("secret box: round trip, tamper detection, keyed signatures", () => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.encrypt("sk-secret");
  assert.notEqual(sealed.includes("sk-secret"), true);
  assert.equal(box.decrypt(sealed), "sk-secret");
  const parts = sealed.split(".");
  parts[3] = Buffer.from("tampered").toString("base64url");
  assert.throws(() => box.decrypt(parts.join(".")));
  assert.notEqual(new SecretBox(randomBytes(32)).sign("x"), box.sign("x"));
  assert.equal(box.sign("x"), box.sign("x"));
});
