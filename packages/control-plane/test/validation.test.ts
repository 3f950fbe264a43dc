import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  assertError,
  assertValidationError,
  type ControlPlane,
  createDeployment,
  type Deployment,
  type DetailMatcher,
  externalImageBody,
  IMAGE,
  type Integration,
  internalImageBody,
  internalSourceBody,
  type Listener,
  type Page,
  repoHostBody,
  revisionsOf,
  startControlPlane,
  uniqueName,
  type UploadUrl,
  uploadSource,
} from "@berth/test-support";

// What the valid setup creates; the rows refer to it lazily (ids are known once `before` ran).
interface Setup {
  tenant: string;
  integration: Integration;
  integration2: Integration;
  foreignIntegration: Integration;
  cluster: Listener;
  local: Listener;
  ext: Deployment;
  extL: Deployment;
  img: Deployment;
  src: Deployment;
  src2: Deployment;
  repo: Deployment;
  repoBop: Deployment;
  repoTag: Deployment;
  uploadedPath: string;
  issuedPath: string;
}

type Lazy<T> = T | ((s: Setup) => T);
interface Row {
  name: string;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: Lazy<string>;
  body?: Lazy<unknown>;
  status: 400 | 404 | 409 | 422;
  /** 400/404/409: the exact detail, or RegExps it must all match. */
  detail?: Lazy<DetailMatcher>;
  /** 422: the `loc` of the first detail entry (a prefix of it when `prefix`). */
  loc?: (string | number)[];
  prefix?: boolean;
}

const REPO_URL = "https://github.com/acme/agent";
const SOURCES = ["repo_host", "external_image", "internal_image", "internal_source"] as const;
type Source = (typeof SOURCES)[number];
const rows: Row[] = [];
const lazy = <T>(value: Lazy<T>, s: Setup): T => (typeof value === "function" ? (value as (s: Setup) => T)(s) : value);
const uuid = randomUUID;
const words = (...patterns: (string | RegExp)[]): RegExp[] =>
  patterns.map((p) => (typeof p === "string" ? new RegExp(p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")) : p));

/** A valid create body for a source, with fields merged into source_config / source_revision_config / the top level. */
function createBody(
  s: Setup,
  source: Source,
  merge: { sc?: Record<string, unknown>; src?: Record<string, unknown>; top?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const name = uniqueName("v");
  const base: Record<string, unknown> =
    source === "external_image"
      ? externalImageBody(name, { secrets: [] })
      : source === "internal_image"
        ? internalImageBody(name)
        : source === "internal_source"
          ? internalSourceBody(name)
          : repoHostBody(name, s.integration.id, REPO_URL);
  return {
    ...base,
    source_config: { ...(base.source_config as object), ...merge.sc },
    source_revision_config: { ...(base.source_revision_config as object), ...merge.src },
    ...merge.top,
  };
}
const create = (source: Source, merge: Parameters<typeof createBody>[2]) => (s: Setup) => createBody(s, source, merge);
const dep =
  (pick: (s: Setup) => Deployment, suffix = "") =>
  (s: Setup) =>
    `/v2/deployments/${pick(s).id}${suffix}`;

// ---- 422: shape and types ---------------------------------------------------------------------------------------------
const C = "/v2/deployments";
// biome-ignore format: a table, one case per line
const spec422: [string, Lazy<unknown>, (string | number)[], boolean?][] = [
  ["unknown top-level field", create("external_image", { top: { colour: "red" } }), ["body"], true],
  ["unknown source_config field", create("external_image", { sc: { colour: "red" } }), ["body", "source_config"], true],
  ["unknown source_revision_config field", create("external_image", { src: { colour: "red" } }), ["body", "source_revision_config"], true],
  ["unknown resource_spec field", create("external_image", { sc: { resource_spec: { colour: 1 } } }), ["body", "source_config", "resource_spec"], true],
  ["name is a number", create("external_image", { top: { name: 42 } }), ["body", "name"]],
  ["source not in the enum", create("external_image", { top: { source: "ftp" } }), ["body", "source"]],
  ["secrets is an object", create("external_image", { top: { secrets: { A: "b" } } }), ["body", "secrets"]],
  ["secret value is a number", create("external_image", { top: { secrets: [{ name: "A", value: 1 }] } }), ["body", "secrets", 0, "value"]],
  ["secret without value", create("external_image", { top: { secrets: [{ name: "A" }] } }), ["body", "secrets", 0, "value"]],
  ["missing name", (s: Setup) => ({ ...createBody(s, "external_image"), name: undefined }), ["body", "name"]],
  ["missing source", (s: Setup) => ({ ...createBody(s, "external_image"), source: undefined }), ["body", "source"]],
  ["missing source_config", (s: Setup) => ({ ...createBody(s, "external_image"), source_config: undefined }), ["body", "source_config"]],
  ["missing source_revision_config", (s: Setup) => ({ ...createBody(s, "external_image"), source_revision_config: undefined }), ["body", "source_revision_config"]],
  ["missing secrets", (s: Setup) => ({ ...createBody(s, "external_image"), secrets: undefined }), ["body", "secrets"]],
  ["build_on_push is a string", create("repo_host", { sc: { build_on_push: "yes" } }), ["body", "source_config", "build_on_push"]],
  ["deployment_type not in the enum", create("repo_host", { sc: { deployment_type: "huge" } }), ["body", "source_config", "deployment_type"]],
  ["integration_id not a uuid", create("repo_host", { sc: { integration_id: "abc" } }), ["body", "source_config", "integration_id"]],
  ["image_uri is a number", create("external_image", { src: { image_uri: 42 } }), ["body", "source_revision_config", "image_uri"]],
  ["image_uri not a reference", create("external_image", { src: { image_uri: "Not A Valid::Image" } }), ["body", "source_revision_config", "image_uri"]],
  ["image_uri tag with a space", create("external_image", { src: { image_uri: "registry.local/agent:my tag" } }), ["body", "source_revision_config", "image_uri"]],
  ["secret_reference without secret_key", create("external_image", { top: { secret_references: [{ name: "A", secret_name: "s" }] } }), ["body", "secret_references", 0, "secret_key"]],
  ["body is an array", [], ["body"], true],
  ["invalid JSON", '{"name": "x",', ["body"], true],
  ["name is empty", create("external_image", { top: { name: "" } }), ["body", "name"]],
  ["name of 64 characters", create("external_image", { top: { name: "a".repeat(64) } }), ["body", "name"]],
  ["name with a space", create("external_image", { top: { name: "my agent" } }), ["body", "name"]],
  ["name starting with -", create("external_image", { top: { name: "-agent" } }), ["body", "name"]],
];
for (const [name, body, loc, prefix] of spec422)
  rows.push({ name: `create: ${name}`, method: "POST", path: C, body, status: 422, loc, prefix });

// biome-ignore format: a table, one case per line
const bounds: [string, unknown][] = [
  ["cpu", 0.05], ["cpu", 8.5], ["cpu", "1"], ["cpu_limit", 16.5], ["cpu_limit", 0.05],
  ["queue_cpu", 0.05], ["queue_cpu", 9], ["queue_cpu_limit", 17], ["cache_cpu", 8.5], ["cache_cpu", 0.01],
  ["cache_cpu_limit", 20], ["min_scale", -1], ["max_scale", -1], ["min_scale", 1.5], ["memory_mb", 0], ["queue_memory_mb", 0],
];
for (const [field, value] of bounds) {
  rows.push({
    name: `create: resource_spec.${field} = ${JSON.stringify(value)}`,
    method: "POST",
    path: C,
    body: create("external_image", { sc: { resource_spec: { [field]: value } } }),
    status: 422,
    loc: ["body", "source_config", "resource_spec", field],
  });
}
const ext = (s: Setup) => s.ext;
rows.push(
  {
    name: "patch: top-level resource_spec.cpu = 9",
    method: "PATCH",
    path: dep(ext),
    body: { resource_spec: { cpu: 9 } },
    status: 422,
    loc: ["body", "resource_spec", "cpu"],
  },
  {
    name: "patch: unknown top-level field",
    method: "PATCH",
    path: dep(ext),
    body: { colour: "red" },
    status: 422,
    loc: ["body"],
    prefix: true,
  },
  {
    name: "patch: secrets is a string",
    method: "PATCH",
    path: dep(ext),
    body: { secrets: "x" },
    status: 422,
    loc: ["body", "secrets"],
  },
  { name: "patch: invalid JSON", method: "PATCH", path: dep(ext), body: "{not json", status: 422, loc: ["body"], prefix: true },
  {
    name: "patch: image_uri is a list",
    method: "PATCH",
    path: dep(ext),
    body: { source_revision_config: { image_uri: ["a"] } },
    status: 422,
    loc: ["body", "source_revision_config", "image_uri"],
  },
  {
    name: "patch: image_uri not a reference",
    method: "PATCH",
    path: dep(ext),
    body: { source_revision_config: { image_uri: "Not A Valid::Image" } },
    status: 422,
    loc: ["body", "source_revision_config", "image_uri"],
  },
);
// biome-ignore format: a table, one case per line
const badPaths: [string, "GET" | "POST" | "PATCH" | "DELETE", Lazy<string>, (string | number)[], boolean?][] = [
  ["get deployment", "GET", "/v2/deployments/not-a-uuid", ["path", "deployment_id"]],
  ["patch deployment", "PATCH", "/v2/deployments/not-a-uuid", ["path", "deployment_id"]],
  ["delete deployment", "DELETE", "/v2/deployments/not-a-uuid", ["path", "deployment_id"]],
  ["list revisions", "GET", "/v2/deployments/not-a-uuid/revisions", ["path", "deployment_id"]],
  ["get revision (deployment id)", "GET", `/v2/deployments/not-a-uuid/revisions/${uuid()}`, ["path", "deployment_id"]],
  ["get revision (revision id)", "GET", dep(ext, "/revisions/not-a-uuid"), ["path", "revision_id"]],
  ["upload-url", "POST", "/v2/deployments/not-a-uuid/upload-url", ["path", "deployment_id"]],
  ["spec upload-url", "POST", "/deployments/not-a-uuid/upload-url", ["path", "deployment_id"]],
  ["get listener", "GET", "/v2/listeners/not-a-uuid", ["path"], true],
  ["patch listener", "PATCH", "/v2/listeners/not-a-uuid", ["path"], true],
  ["delete listener", "DELETE", "/v2/listeners/not-a-uuid", ["path"], true],
  ["integration repos", "GET", "/v1/integrations/repo_host/not-a-uuid/repos", ["path"], true],
];
for (const [name, method, path, loc, prefix] of badPaths) {
  rows.push({
    name: `${name}: path id not a uuid`,
    method,
    path,
    body: method === "PATCH" ? {} : undefined,
    status: 422,
    loc,
    prefix,
  });
}
// biome-ignore format: a table, one case per line
const badQueries: [string, (string | number)[], boolean?][] = [
  ["/v2/deployments?limit=0", ["query", "limit"]],
  ["/v2/deployments?limit=101", ["query", "limit"]],
  ["/v2/deployments?limit=abc", ["query", "limit"]],
  ["/v2/deployments?offset=-1", ["query", "offset"]],
  ["/v2/deployments?status=BOGUS", ["query", "status"], true],
  ["/v2/deployments?status=READY,BOGUS", ["query", "status"], true],
  ["/v2/deployments?deployment_ids=nope", ["query", "deployment_ids"], true],
  ["/v2/deployments?deployment_type=huge", ["query", "deployment_type"], true],
  ["/v2/listeners?limit=0", ["query", "limit"]],
  ["/v2/listeners?limit=101", ["query", "limit"]],
];
for (const [path, loc, prefix] of badQueries) rows.push({ name: `GET ${path}`, method: "GET", path, status: 422, loc, prefix });
rows.push(
  { name: "GET revisions?limit=0", method: "GET", path: dep(ext, "/revisions?limit=0"), status: 422, loc: ["query", "limit"] },
  {
    name: "GET revisions?limit=101",
    method: "GET",
    path: dep(ext, "/revisions?limit=101"),
    status: 422,
    loc: ["query", "limit"],
  },
  {
    name: "GET revisions?status=BOGUS",
    method: "GET",
    path: dep(ext, "/revisions?status=BOGUS"),
    status: 422,
    loc: ["query", "status"],
    prefix: true,
  },
  {
    name: "bulk delete of 101 ids",
    method: "DELETE",
    path: () => `/v2/deployments?deployment_ids=${Array.from({ length: 101 }, uuid).join(",")}`,
    status: 422,
    loc: ["query", "deployment_ids"],
    prefix: true,
  },
  {
    name: "bulk delete of a non-uuid",
    method: "DELETE",
    path: "/v2/deployments?deployment_ids=nope",
    status: 422,
    loc: ["query", "deployment_ids"],
    prefix: true,
  },
  {
    name: "listener create: compute_type not in the enum",
    method: "POST",
    path: "/v2/listeners",
    body: { compute_type: "vm", compute_id: "vm-1" },
    status: 422,
    loc: ["body", "compute_type"],
  },
  {
    name: "listener create: no compute_id",
    method: "POST",
    path: "/v2/listeners",
    body: { compute_type: "local" },
    status: 422,
    loc: ["body", "compute_id"],
  },
);

// ---- 400: read-only fields ----------------------------------------------------------------------------------------------
// biome-ignore format: a table, one case per line
const readOnly: [string, unknown][] = [
  ["id", uuid()], ["tenant_id", uuid()], ["created_at", "2024-01-01T00:00:00Z"], ["updated_at", "2024-01-01T00:00:00Z"],
  ["status", "READY"], ["latest_revision_id", uuid()], ["active_revision_id", uuid()], ["image_version", "1.2.3"],
];
for (const [field, value] of readOnly) {
  rows.push({
    name: `create: read-only ${field}`,
    method: "POST",
    path: C,
    body: create("external_image", { top: { [field]: value } }),
    status: 400,
    detail: words(field),
  });
  rows.push({
    name: `patch: read-only ${field}`,
    method: "PATCH",
    path: dep(ext),
    body: { [field]: value },
    status: 400,
    detail: words(field),
  });
}
rows.push(
  {
    name: "create: read-only repo_commit_sha",
    method: "POST",
    path: C,
    body: create("repo_host", { src: { repo_commit_sha: "abc123" } }),
    status: 400,
    detail: words("repo_commit_sha"),
  },
  {
    name: "patch: read-only repo_commit_sha",
    method: "PATCH",
    path: dep((s) => s.repo),
    body: { source_revision_config: { repo_commit_sha: "abc123" } },
    status: 400,
    detail: words("repo_commit_sha"),
  },
);

// ---- 400: a field for a source it does not apply to -------------------------------------------------------------------
// biome-ignore format: a table, one case per line
const perSource: [string, "sc" | "src" | "top", (s: Setup) => unknown, Source[]][] = [
  ["integration_id", "sc", (s) => s.integration.id, ["repo_host"]],
  ["repo_url", "sc", () => REPO_URL, ["repo_host"]],
  ["deployment_type", "sc", () => "dev", ["repo_host"]],
  ["build_on_push", "sc", () => false, ["repo_host"]],
  ["repo_ref", "src", () => "main", ["repo_host"]],
  ["custom_url", "sc", () => "https://agent.example.com", ["external_image"]],
  ["resource_spec", "sc", () => ({ cpu: 1 }), ["external_image"]],
  ["listener_id", "sc", (s) => s.cluster.id, ["external_image"]],
  ["listener_config", "sc", () => ({ cluster_namespace: "team-a" }), ["external_image"]],
  ["secret_references", "top", () => [{ name: "DB_PASSWORD", secret_name: "db", secret_key: "password" }], ["external_image"]],
  ["image_uri", "src", () => IMAGE, ["external_image", "internal_image"]],
  ["source_tarball_path", "src", () => `deployments/${uuid()}/sources/${uuid()}.tar.gz`, ["internal_source"]],
  ["install_command", "sc", () => "npm ci", ["repo_host", "internal_source"]],
  ["build_command", "sc", () => "npm run build", ["repo_host", "internal_source"]],
];
for (const [field, where, value, allowed] of perSource) {
  for (const source of SOURCES.filter((s) => !allowed.includes(s))) {
    rows.push({
      name: `create ${source}: ${field} applies only to ${allowed.join(", ")}`,
      method: "POST",
      path: C,
      body: (s: Setup) => createBody(s, source, { [where]: { [field]: value(s) } }),
      status: 400,
      detail: [...words(field), new RegExp([source, ...allowed].join("|"))],
    });
  }
}
// biome-ignore format: a table, one case per line
const patchWrongSource: [string, (s: Setup) => Deployment, string, Record<string, unknown>][] = [
  ["external_image", ext, "source_tarball_path", { source_revision_config: { source_tarball_path: "deployments/x/sources/y.tar.gz" } }],
  ["external_image", ext, "install_command", { source_config: { install_command: "npm ci" } }],
  ["external_image", ext, "build_on_push", { source_config: { build_on_push: true } }],
  ["external_image", ext, "repo_ref", { source_revision_config: { repo_ref: "main" } }],
  ["internal_source", (s) => s.src, "resource_spec", { resource_spec: { cpu: 1 } }],
  ["internal_source", (s) => s.src, "custom_url", { source_config: { custom_url: "https://x.example.com" } }],
  ["internal_source", (s) => s.src, "image_uri", { source_revision_config: { image_uri: IMAGE } }],
  ["internal_image", (s) => s.img, "secret_references", { secret_references: [{ name: "A", secret_name: "s", secret_key: "k" }] }],
];
for (const [source, pick, field, body] of patchWrongSource) {
  rows.push({
    name: `patch ${source}: ${field} does not apply`,
    method: "PATCH",
    path: dep(pick),
    body,
    status: 400,
    detail: words(field),
  });
}

// ---- 400: create rules --------------------------------------------------------------------------------------------------
rows.push(
  {
    name: "create repo_host: graph_config_path missing",
    method: "POST",
    path: C,
    body: create("repo_host", { src: { graph_config_path: null } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create internal_source: graph_config_path missing",
    method: "POST",
    path: C,
    body: create("internal_source", { src: { graph_config_path: null } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create external_image: graph_config_path given",
    method: "POST",
    path: C,
    body: create("external_image", { src: { graph_config_path: "langgraph.json" } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create internal_image: graph_config_path given",
    method: "POST",
    path: C,
    body: create("internal_image", { src: { graph_config_path: "langgraph.json" } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create: graph_config_path leaves the source (..)",
    method: "POST",
    path: C,
    body: create("internal_source", { src: { graph_config_path: "../langgraph.json" } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create: graph_config_path leaves the source (a/../../)",
    method: "POST",
    path: C,
    body: create("internal_source", { src: { graph_config_path: "a/../../langgraph.json" } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create: graph_config_path absolute",
    method: "POST",
    path: C,
    body: create("repo_host", { src: { graph_config_path: "/etc/langgraph.json" } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create: graph_config_path not .json",
    method: "POST",
    path: C,
    body: create("internal_source", { src: { graph_config_path: "langgraph.yaml" } }),
    status: 400,
    detail: words("graph_config_path"),
  },
  {
    name: "create repo_host: without integration_id",
    method: "POST",
    path: C,
    body: create("repo_host", { sc: { integration_id: null } }),
    status: 400,
    detail: words("integration_id"),
  },
  {
    name: "create repo_host: without repo_url",
    method: "POST",
    path: C,
    body: create("repo_host", { sc: { repo_url: null } }),
    status: 400,
    detail: words("repo_url"),
  },
  {
    name: "create repo_host: without repo_ref",
    method: "POST",
    path: C,
    body: create("repo_host", { src: { repo_ref: null } }),
    status: 400,
    detail: words("repo_ref"),
  },
  {
    name: "create repo_host: integration of another workspace",
    method: "POST",
    path: C,
    body: (s: Setup) => createBody(s, "repo_host", { sc: { integration_id: s.foreignIntegration.id } }),
    status: 400,
    detail: [/integration/i],
  },
  {
    name: "create repo_host: repository the integration does not list",
    method: "POST",
    path: C,
    body: create("repo_host", { sc: { repo_url: "https://github.com/acme/secret" } }),
    status: 400,
    detail: words("https://github.com/acme/secret"),
  },
  {
    name: "create external_image: without image_uri",
    method: "POST",
    path: C,
    body: create("external_image", { src: { image_uri: null } }),
    status: 400,
    detail: words("image_uri"),
  },
  {
    name: "create internal_source: source_tarball_path can never be valid",
    method: "POST",
    path: C,
    body: (s: Setup) => createBody(s, "internal_source", { src: { source_tarball_path: s.uploadedPath } }),
    status: 400,
    detail: words("source_tarball_path"),
  },
);

// ---- 400: build_on_push with a tag ----------------------------------------------------------------------------------------
const tagged = [/build_on_push/, /tag/i];
rows.push(
  {
    name: "create repo_host: build_on_push with refs/tags/",
    method: "POST",
    path: C,
    body: create("repo_host", { sc: { build_on_push: true }, src: { repo_ref: "refs/tags/v1" } }),
    status: 400,
    detail: tagged,
  },
  {
    name: "patch: build_on_push on and a tag ref together",
    method: "PATCH",
    path: dep((s) => s.repo),
    body: { source_config: { build_on_push: true }, source_revision_config: { repo_ref: "refs/tags/v1" } },
    status: 400,
    detail: tagged,
  },
  {
    name: "patch: a tag ref while build_on_push is on",
    method: "PATCH",
    path: dep((s) => s.repoBop),
    body: { source_revision_config: { repo_ref: "refs/tags/v2" } },
    status: 400,
    detail: tagged,
  },
  {
    name: "patch: build_on_push on while the ref is a tag",
    method: "PATCH",
    path: dep((s) => s.repoTag),
    body: { source_config: { build_on_push: true } },
    status: 400,
    detail: tagged,
  },
);

// ---- 400: immutable fields on PATCH -----------------------------------------------------------------------------------------
const extL = (s: Setup) => s.extL;
const repo = (s: Setup) => s.repo;
rows.push(
  { name: "patch: name changes", method: "PATCH", path: dep(ext), body: { name: "renamed" }, status: 400, detail: words("name") },
  {
    name: "patch: source changes",
    method: "PATCH",
    path: dep(ext),
    body: { source: "internal_image" },
    status: 400,
    detail: words("source"),
  },
  {
    name: "patch: integration_id changes",
    method: "PATCH",
    path: dep(repo),
    body: (s: Setup) => ({ source_config: { integration_id: s.integration2.id } }),
    status: 400,
    detail: words("integration_id"),
  },
  {
    name: "patch: repo_url changes",
    method: "PATCH",
    path: dep(repo),
    body: { source_config: { repo_url: "https://github.com/acme/tools" } },
    status: 400,
    detail: words("repo_url"),
  },
  {
    name: "patch: deployment_type changes",
    method: "PATCH",
    path: dep(repo),
    body: { source_config: { deployment_type: "prod" } },
    status: 400,
    detail: words("deployment_type"),
  },
  {
    name: "patch: listener_id changes",
    method: "PATCH",
    path: dep(extL),
    body: (s: Setup) => ({ source_config: { listener_id: s.local.id } }),
    status: 400,
    detail: words("listener_id"),
  },
  {
    name: "patch: listener_config changes",
    method: "PATCH",
    path: dep(extL),
    body: { source_config: { listener_config: { cluster_namespace: "team-b" } } },
    status: 400,
    detail: words("listener_config"),
  },
  {
    name: "patch: revision_source differs from the source",
    method: "PATCH",
    path: dep(ext),
    body: { revision_source: "internal_image" },
    status: 400,
    detail: words("revision_source"),
  },
  {
    name: "patch: resource_spec at both places",
    method: "PATCH",
    path: dep(ext),
    body: { resource_spec: { cpu: 1 }, source_config: { resource_spec: { cpu: 2 } } },
    status: 400,
    detail: words("resource_spec"),
  },
);

// ---- 400: source_tarball_path ------------------------------------------------------------------------------------------------
const src = (s: Setup) => s.src;
rows.push(
  {
    name: "patch: source_tarball_path arbitrary",
    method: "PATCH",
    path: dep(src),
    body: { source_revision_config: { source_tarball_path: "uploads/evil.tar.gz" } },
    status: 400,
    detail: words("source_tarball_path"),
  },
  {
    name: "patch: source_tarball_path traversal",
    method: "PATCH",
    path: dep(src),
    body: { source_revision_config: { source_tarball_path: "../../../etc/passwd" } },
    status: 400,
    detail: words("source_tarball_path"),
  },
  {
    name: "patch: source_tarball_path well-formed but never issued",
    method: "PATCH",
    path: dep(src),
    body: (s: Setup) => ({ source_revision_config: { source_tarball_path: `deployments/${s.src.id}/sources/${uuid()}.tar.gz` } }),
    status: 400,
    detail: words("source_tarball_path"),
  },
  {
    name: "patch: source_tarball_path of another deployment",
    method: "PATCH",
    path: dep((s) => s.src2),
    body: (s: Setup) => ({ source_revision_config: { source_tarball_path: s.uploadedPath } }),
    status: 400,
    detail: words("source_tarball_path"),
  },
  {
    name: "patch: source_tarball_path issued but not uploaded",
    method: "PATCH",
    path: dep(src),
    body: (s: Setup) => ({ source_revision_config: { source_tarball_path: s.issuedPath } }),
    status: 400,
    detail: words("source_tarball_path"),
  },
  {
    name: "upload-url on an external_image deployment",
    method: "POST",
    path: dep(ext, "/upload-url"),
    status: 400,
    detail: words("internal_source"),
  },
);

// ---- 400: listeners -----------------------------------------------------------------------------------------------------------
rows.push(
  {
    name: "create: listener_id of an unknown listener",
    method: "POST",
    path: C,
    body: create("external_image", { sc: { listener_id: uuid() } }),
    status: 400,
    detail: [/listener/i],
  },
  {
    name: "create: listener_config for a local listener",
    method: "POST",
    path: C,
    body: (s: Setup) =>
      createBody(s, "external_image", { sc: { listener_id: s.local.id, listener_config: { cluster_namespace: "team-a" } } }),
    status: 400,
    detail: [/listener_config|cluster/],
  },
  {
    name: "create: cluster listener without cluster_namespace",
    method: "POST",
    path: C,
    body: (s: Setup) => createBody(s, "external_image", { sc: { listener_id: s.cluster.id } }),
    status: 400,
    detail: words("cluster_namespace"),
  },
  {
    name: "create: cluster namespace the listener may not deploy to",
    method: "POST",
    path: C,
    body: (s: Setup) =>
      createBody(s, "external_image", { sc: { listener_id: s.cluster.id, listener_config: { cluster_namespace: "team-z" } } }),
    status: 400,
    detail: words("team-z"),
  },
  {
    name: "listener create: cluster_namespaces for a local listener",
    method: "POST",
    path: "/v2/listeners",
    body: { compute_type: "local", compute_id: "laptop-9", compute_config: { cluster_namespaces: ["x"] } },
    status: 400,
    detail: words("cluster_namespaces"),
  },
  {
    name: "listener patch: compute_type",
    method: "PATCH",
    path: (s: Setup) => `/v2/listeners/${s.local.id}`,
    body: { compute_type: "docker" },
    status: 400,
    detail: words("compute_type"),
  },
  {
    name: "listener patch: compute_id",
    method: "PATCH",
    path: (s: Setup) => `/v2/listeners/${s.local.id}`,
    body: { compute_id: "other" },
    status: 400,
    detail: words("compute_id"),
  },
);

// ---- 400: ResourceSpec rules ------------------------------------------------------------------------------------------------------
const reserved = [
  "orchestrator_cpu",
  "orchestrator_cpu_limit",
  "orchestrator_memory_mb",
  "orchestrator_memory_limit_mb",
  "orchestrator_min_scale",
  "orchestrator_max_scale",
  "executor_cpu",
  "executor_cpu_limit",
  "executor_memory_mb",
  "executor_memory_limit_mb",
];
for (const field of reserved) {
  rows.push({
    name: `create: reserved resource_spec.${field}`,
    method: "POST",
    path: C,
    body: create("external_image", { sc: { resource_spec: { [field]: 1 } } }),
    status: 400,
    detail: words(field),
  });
}
rows.push({
  name: "patch: reserved resource_spec.executor_cpu",
  method: "PATCH",
  path: dep(ext),
  body: { resource_spec: { executor_cpu: 1 } },
  status: 400,
  detail: words("executor_cpu"),
});
// biome-ignore format: a table, one case per line
const belowRequest: [string, number, string, number][] = [
  ["cpu", 2, "cpu_limit", 1], ["memory_mb", 1024, "memory_limit_mb", 512], ["queue_cpu", 2, "queue_cpu_limit", 1],
  ["queue_memory_mb", 1024, "queue_memory_limit_mb", 512], ["cache_cpu", 2, "cache_cpu_limit", 1], ["cache_memory_mb", 1024, "cache_memory_limit_mb", 512],
];
for (const [request, requested, limit, limited] of belowRequest) {
  rows.push({
    name: `create: ${limit} below ${request}`,
    method: "POST",
    path: C,
    body: create("external_image", { sc: { resource_spec: { [request]: requested, [limit]: limited } } }),
    status: 400,
    detail: words(limit),
  });
}
rows.push(
  {
    name: "create: min_scale above max_scale",
    method: "POST",
    path: C,
    body: create("external_image", { sc: { resource_spec: { min_scale: 3, max_scale: 1 } } }),
    status: 400,
    detail: words("min_scale", "max_scale"),
  },
  {
    name: "patch: min_scale above max_scale",
    method: "PATCH",
    path: dep(ext),
    body: { resource_spec: { min_scale: 5, max_scale: 2 } },
    status: 400,
    detail: words("min_scale", "max_scale"),
  },
);

// ---- 400: secrets ---------------------------------------------------------------------------------------------------------------------
for (const bad of ["1ABC", "MY-VAR", "MY VAR", "É"]) {
  rows.push({
    name: `create: secret name ${JSON.stringify(bad)}`,
    method: "POST",
    path: C,
    body: create("external_image", { top: { secrets: [{ name: bad, value: "v" }] } }),
    status: 400,
    detail: words(bad),
  });
}
rows.push({
  name: "create: duplicate secret names",
  method: "POST",
  path: C,
  body: create("external_image", {
    top: {
      secrets: [
        { name: "TOKEN", value: "a" },
        { name: "TOKEN", value: "b" },
      ],
    },
  }),
  status: 400,
  detail: words("TOKEN"),
});
rows.push({
  name: "patch: duplicate secret names",
  method: "PATCH",
  path: dep(ext),
  body: {
    secrets: [
      { name: "TOKEN", value: "a" },
      { name: "TOKEN", value: "b" },
    ],
  },
  status: 400,
  detail: words("TOKEN"),
});
for (const reservedName of [
  "PORT",
  "HOST",
  "DATABASE_URL",
  "REDIS_URL",
  "BERTH_ANYTHING",
  "LANGSMITH_API_KEY",
  "LANGCHAIN_TRACING_V2",
  "NODE_OPTIONS",
  "PATH",
]) {
  rows.push({
    name: `create: reserved secret name ${reservedName}`,
    method: "POST",
    path: C,
    body: create("external_image", { top: { secrets: [{ name: reservedName, value: "v" }] } }),
    status: 400,
    detail: words(reservedName),
  });
}
rows.push({
  name: "create: masked value (nothing is stored yet)",
  method: "POST",
  path: C,
  body: create("external_image", { top: { secrets: [{ name: "FRESH", value: "********" }] } }),
  status: 400,
  detail: words("FRESH"),
});
rows.push({
  name: "patch: masked value for a secret with no stored value",
  method: "PATCH",
  path: dep(ext),
  body: {
    secrets: [
      { name: "OPENAI_API_KEY", value: "********" },
      { name: "NEVER_STORED", value: "********" },
    ],
  },
  status: 400,
  detail: words("NEVER_STORED"),
});

// ---- 400: shell characters in commands ----------------------------------------------------------------------------------------------
// biome-ignore format: a table, one case per line
const shell: [string, string][] = [
  ["double quote", 'npm ci "x"'], ["backtick", "npm ci `id`"], ["backslash", "npm ci \\x"], ["newline", "npm ci\nrm -rf /"],
  ["tab", "npm\tci"], ["pipe", "npm ci | tee log"], ["semicolon", "npm ci; rm -rf /"], ["dollar", "npm ci $HOME"],
  ["less-than", "npm ci < in"], ["greater-than", "npm ci > out"], ["lone ampersand", "npm ci & rm -rf /"],
];
for (const [what, command] of shell) {
  rows.push({
    name: `create: install_command with a ${what}`,
    method: "POST",
    path: C,
    body: create("internal_source", { sc: { install_command: command } }),
    status: 400,
    detail: words("install_command"),
  });
}
rows.push(
  {
    name: "create: build_command with a semicolon",
    method: "POST",
    path: C,
    body: create("repo_host", { sc: { build_command: "npm run build; curl x" } }),
    status: 400,
    detail: words("build_command"),
  },
  {
    name: "create: build_command with $()",
    method: "POST",
    path: C,
    body: create("internal_source", { sc: { build_command: "npm run $(whoami)" } }),
    status: 400,
    detail: words("build_command"),
  },
  {
    name: "patch: install_command with a pipe",
    method: "PATCH",
    path: dep(src),
    body: { source_config: { install_command: "npm ci | sh" } },
    status: 400,
    detail: words("install_command"),
  },
);

// ---- 404: unknown ids ---------------------------------------------------------------------------------------------------------------------
const unknown = uuid();
const mentions = new RegExp(unknown);
// biome-ignore format: a table, one case per line
const notFound: [string, "GET" | "POST" | "PATCH" | "DELETE", Lazy<string>, Lazy<DetailMatcher>][] = [
  ["get deployment", "GET", `/v2/deployments/${unknown}`, [mentions]],
  ["patch deployment", "PATCH", `/v2/deployments/${unknown}`, [mentions]],
  ["delete deployment", "DELETE", `/v2/deployments/${unknown}`, [mentions]],
  ["list revisions", "GET", `/v2/deployments/${unknown}/revisions`, [mentions]],
  ["get revision of an unknown deployment", "GET", `/v2/deployments/${unknown}/revisions/${uuid()}`, [mentions]],
  ["get unknown revision", "GET", dep(ext, `/revisions/${unknown}`), [mentions]],
  ["get revision of another deployment", "GET", (s) => `/v2/deployments/${s.ext.id}/revisions/${s.src.latest_revision_id}`, (s) => [new RegExp(s.src.latest_revision_id!)]],
  ["upload-url", "POST", `/v2/deployments/${unknown}/upload-url`, [mentions]],
  ["spec upload-url", "POST", `/deployments/${unknown}/upload-url`, [mentions]],
  ["get listener", "GET", `/v2/listeners/${unknown}`, [mentions]],
  ["patch listener", "PATCH", `/v2/listeners/${unknown}`, [mentions]],
  ["delete listener", "DELETE", `/v2/listeners/${unknown}`, [mentions]],
  ["integration repos", "GET", `/v1/integrations/repo_host/${unknown}/repos`, [mentions]],
];
for (const [name, method, path, detail] of notFound) {
  rows.push({
    name: `${name}: unknown id`,
    method,
    path,
    body: method === "PATCH" ? (path.toString().includes("listeners") ? { version: "1" } : { secrets: [] }) : undefined,
    status: 404,
    detail,
  });
}

// ---- 409 ------------------------------------------------------------------------------------------------------------------------------------
rows.push(
  {
    name: "create: name taken",
    method: "POST",
    path: C,
    body: (s: Setup) => ({ ...createBody(s, "external_image"), name: s.ext.name }),
    status: 409,
    detail: (s: Setup) => `A deployment named "${s.ext.name}" already exists`,
  },
  {
    name: "create internal_image: name taken by an external_image",
    method: "POST",
    path: C,
    body: (s: Setup) => ({ ...createBody(s, "internal_image"), name: s.ext.name }),
    status: 409,
    detail: (s: Setup) => `A deployment named "${s.ext.name}" already exists`,
  },
  {
    name: "listener create: compute_id taken",
    method: "POST",
    path: "/v2/listeners",
    body: { compute_type: "cluster", compute_id: "cluster-1", compute_config: { cluster_namespaces: ["x"] } },
    status: 409,
    detail: words("cluster-1"),
  },
  {
    name: "listener delete: in use by a live deployment",
    method: "DELETE",
    path: (s: Setup) => `/v2/listeners/${s.cluster.id}`,
    status: 409,
    detail: [/listener/i],
  },
);

describe("validation", () => {
  let cp: ControlPlane;
  let s: Setup;
  let snapshot: unknown;

  /** Everything the API shows of the setup's records. */
  async function readBack() {
    const deployments = await cp.admin.get<Page<Deployment>>("/v2/deployments?limit=100");
    const revisions = await Promise.all(deployments.body.resources.map((d) => revisionsOf(cp.admin, d.id)));
    const listeners = await cp.admin.get<Page<Listener>>("/v2/listeners?limit=100");
    return { deployments: deployments.body.resources, revisions, listeners: listeners.body.resources };
  }

  before(async () => {
    cp = await startControlPlane();
    const tenant = cp.defaultTenantId;
    const other = await cp.createTenant("other");
    const [integration, integration2, foreignIntegration] = await Promise.all([
      cp.addIntegration(tenant, "gh", [`${REPO_URL}#main`, "https://github.com/acme/tools"]),
      cp.addIntegration(tenant, "gh2", [`${REPO_URL}#main`]),
      cp.addIntegration(other.id, "gh-other", [`${REPO_URL}#main`]),
    ]);
    const listener = async (body: unknown) => {
      const response = await cp.admin.post<Listener>("/v2/listeners", body);
      assert.equal(response.status, 201, JSON.stringify(response.body));
      return response.body;
    };
    const cluster = await listener({
      compute_type: "cluster",
      compute_id: "cluster-1",
      compute_config: { cluster_namespaces: ["team-a", "team-b"] },
    });
    const local = await listener({ compute_type: "local", compute_id: "machine-1" });
    const partial = { tenant, integration, integration2, foreignIntegration, cluster, local } as Setup;
    const make = (source: Source, merge: Parameters<typeof createBody>[2] = {}) =>
      createDeployment(cp.admin, createBody(partial, source, merge));
    const srcDeployment = await make("internal_source");
    s = {
      ...partial,
      ext: await createDeployment(cp.admin, externalImageBody(uniqueName("ext"))),
      extL: await make("external_image", { sc: { listener_id: cluster.id, listener_config: { cluster_namespace: "team-a" } } }),
      img: await make("internal_image"),
      src: srcDeployment,
      src2: await make("internal_source"),
      repo: await make("repo_host", { sc: { deployment_type: "dev", build_on_push: false } }),
      repoBop: await make("repo_host", { sc: { build_on_push: true } }),
      repoTag: await make("repo_host", { sc: { build_on_push: false }, src: { repo_ref: "refs/tags/v1" } }),
      uploadedPath: await uploadSource(cp.admin, srcDeployment.id),
      issuedPath: (await cp.admin.post<UploadUrl>(`/v2/deployments/${srcDeployment.id}/upload-url`)).body.object_path,
    };
    snapshot = await readBack();
  });
  after(() => cp.stop());

  test(`the table has at least 70 rows (${rows.length})`, () => {
    assert.ok(rows.length >= 70);
  });

  for (const row of rows) {
    test(`${row.status} ${row.method} ${row.name}`, async () => {
      const response = await cp.admin.call(row.method, lazy(row.path, s), row.body === undefined ? undefined : lazy(row.body, s));
      if (row.status === 422) assertValidationError(response, row.loc!, row.prefix);
      else assertError(response, row.status, lazy(row.detail!, s));
    });
  }

  test("no refused request left anything behind: deployments, revisions and listeners are as set up", async () => {
    const now = (await readBack()) as Awaited<ReturnType<typeof readBack>>;
    assert.deepEqual(
      now.deployments.map((d) => d.name).sort(),
      [s.ext, s.extL, s.img, s.src, s.src2, s.repo, s.repoBop, s.repoTag].map((d) => d.name).sort(),
    );
    assert.ok(
      now.revisions.every((list) => list.length === 1),
      "every deployment still has its one revision",
    );
    assert.deepEqual(now, snapshot);
  });
});
