#!/usr/bin/env node
// `node bench/deploy.mjs`: seconds from PATCH to DEPLOYED on the embedded listener (local compute), for
//   - a first deploy (unpack, npm ci from the registry with a cold cache, berth check, start, health),
//   - a new deployment whose dependencies are in the install cache, timed from its creation (create, upload, PATCH),
//   - a re-deploy of changed code with unchanged dependencies (the install comes from the lockfile cache),
//   - a PATCH of secrets only (the build is reused; a new process starts and takes over).
// With BENCH_COMPUTE=docker (and DOCKER_HOST, the Node base image: docs/containers.md) the listener runs containers instead:
// the first deploy is an image build with a cold dependency layer, the re-deploy one with the dependency layer cached, and
// the secrets-only PATCH a container start from the same image.
// Prints a table and writes bench/results/deploy-<time>.json. Not a test: figures depend on the machine and the network.
// BENCH_STEPS=1 also prints, for each timed PATCH, every status change and build and deploy log line in ms since the PATCH.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startBenchControlPlane } from "./control-plane.mjs";
import * as tar from "tar";

const benchDir = dirname(fileURLToPath(import.meta.url));
const project = join(benchDir, "projects", "deploy-chat");
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
/** BENCH_STEPS=1: after each timed PATCH, print where its seconds went (status timeline, build and deploy log lines). */
const STEPS = process.env.BENCH_STEPS === "1";
const COMPUTE = process.env.BENCH_COMPUTE ?? "local";

const { call, untilDeployed, stop } = await startBenchControlPlane({ BERTH_LISTENER_COMPUTE: COMPUTE });

/** The project as a tarball, with `marker` appended to the graph module (new code, same dependencies). */
async function pack(marker) {
  const staging = mkdtempSync(join(tmpdir(), "berth-bench-src-"));
  await tar.x({ cwd: staging, file: await writeTar(project) });
  const agent = join(staging, "src/agent.ts");
  writeFileSync(agent, `${readFileSync(agent, "utf8")}\n// ${marker}\n`);
  return Buffer.from(await new Response(tar.c({ gzip: true, cwd: staging }, ["."])).arrayBuffer());
}

async function writeTar(dir) {
  const file = join(mkdtempSync(join(tmpdir(), "berth-bench-tar-")), "src.tar");
  await tar.c({ file, cwd: dir, filter: (path) => !path.includes("node_modules") }, ["."]);
  return file;
}

/** Seconds from the PATCH to DEPLOYED. */
async function timedPatch(deploymentId, body) {
  const started = performance.now();
  const patched = await call("PATCH", `/v2/deployments/${deploymentId}`, body);
  await untilDeployed(deploymentId, patched.latest_revision_id);
  if (STEPS) await printSteps(deploymentId, patched.latest_revision_id, Date.now() - (performance.now() - started));
  return { seconds: (performance.now() - started) / 1000, revisionId: patched.latest_revision_id };
}

/** Every status change and log line of the revision, in milliseconds since the PATCH was sent. */
async function printSteps(deploymentId, revisionId, patchedAt) {
  const events = await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/events`);
  const logsOf = async (kind) =>
    (
      await call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`, { order: "asc", limit: 1000 })
    ).logs.map((line) => ({ at: line.timestamp, text: `${kind}: ${line.message}` }));
  const lines = [
    ...events.resources.map((event) => ({ at: event.at, text: `status ${event.status}: ${event.message}` })),
    ...(await logsOf("build")),
    ...(await logsOf("deploy")),
  ]
    .map((line) => ({ ms: Date.parse(line.at) - patchedAt, text: line.text.slice(0, 140) }))
    .sort((a, b) => a.ms - b.ms);
  console.log(`\nrevision ${revisionId}:`);
  for (const line of lines) console.log(`  ${String(Math.round(line.ms)).padStart(6)} ms  ${line.text}`);
}

async function upload(deploymentId, bytes) {
  const { upload_url, object_path } = await call("POST", `/v2/deployments/${deploymentId}/upload-url`);
  const put = await fetch(upload_url, { method: "PUT", body: bytes, headers: { "content-type": "application/gzip" } });
  if (!put.ok) throw new Error(`upload: ${put.status}`);
  return object_path;
}

async function installLine(deploymentId, revisionId) {
  const { logs } = await call("POST", `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, {
    order: "asc",
    limit: 1000,
  });
  return logs
    .map((line) => line.message)
    .filter(
      (message) => (/install|cache/i.test(message) && /\(\d/.test(message)) || /^(Built |Step \d|.*Using cache)/.test(message),
    )
    .join("; ");
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = { first: [], fresh: [], redeploy: [], secrets: [], notes: {} };
try {
  // Round 0 fills the install cache; every later round's first deploy is a new deployment whose dependencies are cached.
  for (let round = 0; round < REPEATS + 1; round++) {
    const created = performance.now();
    const deployment = await call("POST", "/v2/deployments", {
      name: `bench-${round}`,
      source: "internal_source",
      source_config: {},
      source_revision_config: { graph_config_path: "langgraph.json" },
      secrets: [{ name: "GREETING", value: "one" }],
    });
    // A fresh listener cache each round would need a fresh control plane; instead the first round is the cold one.
    const first = await timedPatch(deployment.id, {
      source_revision_config: { source_tarball_path: await upload(deployment.id, await pack(`round ${round}`)) },
    });
    if (round === 0) {
      results.first.push(first.seconds);
      results.notes.first = await installLine(deployment.id, first.revisionId);
    } else {
      results.fresh.push((performance.now() - created) / 1000);
      results.notes.fresh = await installLine(deployment.id, first.revisionId);
    }
    const again = await timedPatch(deployment.id, {
      source_revision_config: { source_tarball_path: await upload(deployment.id, await pack(`round ${round} again`)) },
    });
    results.redeploy.push(again.seconds);
    results.notes.redeploy = await installLine(deployment.id, again.revisionId);
    results.secrets.push((await timedPatch(deployment.id, { secrets: [{ name: "GREETING", value: `v${round}` }] })).seconds);
    await call("DELETE", `/v2/deployments/${deployment.id}`);
  }
} finally {
  stop();
}

const rows =
  COMPUTE === "docker"
    ? [
        ["first deploy (image build, dependency layer cold: npm ci from the registry)", results.first[0]],
        ["new deployment, dependency layer cached: create + upload + PATCH → DEPLOYED (median)", median(results.fresh)],
        ["re-deploy, changed code: image build with the dependency layer cached (median)", median(results.redeploy)],
        ["secrets-only PATCH, image reused: container start to DEPLOYED (median)", median(results.secrets)],
      ]
    : [
        ["first deploy (cold npm cache, npm ci from the registry)", results.first[0]],
        ["new deployment, dependencies cached: create + upload + PATCH → DEPLOYED (median)", median(results.fresh)],
        ["re-deploy, changed code, unchanged dependencies (median)", median(results.redeploy)],
        ["secrets-only PATCH, build reused (median)", median(results.secrets)],
      ];
console.log(`\n| PATCH → DEPLOYED (${COMPUTE} compute) | seconds |\n|---|---:|`);
for (const [label, seconds] of rows) console.log(`| ${label} | ${seconds.toFixed(1)} |`);
console.log(
  `\nfirst deploy install: ${results.notes.first}\nnew deployment install: ${results.notes.fresh}\nre-deploy install: ${results.notes.redeploy}`,
);
mkdirSync(join(benchDir, "results"), { recursive: true });
writeFileSync(
  join(benchDir, "results", `deploy-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
  JSON.stringify(results, null, 2),
);
