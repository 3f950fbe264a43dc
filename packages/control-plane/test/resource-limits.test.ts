// Runs in the SQLite pass only: its subject is deployments' resource limits,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, createDeployment, type Deployment, startControlPlane, uploadSource } from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "@berth/test-support";

// A hostile project (fixtures/resource-hog), deployed as dev_free (512 MiB, 128
// processes, /data 512 MiB, /tmp 256 MiB), forks, allocates and writes as much
// as it can, in loops bounded well below what the machine could take, while a
// neighbour deployment serves runs. The limits need root, bubblewrap and a
// writable cgroup hierarchy, as the sandbox does.

const MiB = 1024 * 1024;

/** Why the kernel's limits cannot be tested here, or undefined when they can. */
function unsupported(): string | undefined {
  if (process.getuid?.() !== 0) return "resource limits need root (the listener sandboxes and makes cgroups only as root)";
  if (!["/usr/bin/bwrap", "/bin/bwrap"].some((path) => existsSync(path))) return "resource limits need bubblewrap";
  const v1 = existsSync("/sys/fs/cgroup/memory/memory.limit_in_bytes") && existsSync("/sys/fs/cgroup/pids");
  const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
  if (!v1 && !v2) return "resource limits need cgroups (v1 memory and pids, or v2)";
  return undefined;
}

const skip = unsupported();
if (skip) console.warn(`SKIPPED resource-limits.test.ts: ${skip}`);

interface RunResult {
  status: number;
  report?: Record<string, unknown>;
  error?: string;
}

describe("each deployment on the local compute runs under the kernel's limits", { skip }, () => {
  let cp: ControlPlane;
  let hog: Deployment;
  let neighbour: Deployment;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const [sized, neighboured] = await Promise.all([
      deploySized("hog", packFixture("resource-hog"), { deployment_type: "dev_free" }),
      deployTarball(cp.admin, "neighbour", packFixture("deploy-app")),
    ]);
    for (const deployment of [sized, neighboured.deployment]) {
      const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
      assert.equal(revision.status, "DEPLOYED", `${revision.status_message}\n${cp.output()}`);
    }
    hog = (await cp.admin.get<Deployment>(`/v2/deployments/${sized.id}`)).body;
    neighbour = (await cp.admin.get<Deployment>(`/v2/deployments/${neighboured.deployment.id}`)).body;
  });
  after(() => cp?.stop());

  /**
   * A deployment of `tarball` created as the hosted platform's remote build does (deployment_type is its name),
   * then PATCHed with the source: its latest revision is the one to watch.
   */
  async function deploySized(name: string, tarball: Buffer, sourceConfig: Record<string, unknown>): Promise<Deployment> {
    const created = await createDeployment(cp.admin, {
      name,
      source: "internal_source",
      source_config: sourceConfig,
      source_revision_config: {},
      secrets: [],
    });
    const objectPath = await uploadSource(cp.admin, created.id, tarball);
    const patched = await cp.admin.patch<Deployment>(`/v2/deployments/${created.id}`, {
      source_revision_config: { source_tarball_path: objectPath, graph_config_path: "langgraph.json" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    return patched.body;
  }

  /** A run of `assistant` on `deployment`, waited for; a server killed meanwhile is an error, not a throw. */
  async function run(deployment: Deployment, assistant: string, input: Record<string, unknown>): Promise<RunResult> {
    try {
      const response = await fetch(`${deployment.source_config.custom_url}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": cp.adminKey },
        body: JSON.stringify({ assistant_id: assistant, input }),
      });
      const text = await response.text();
      if (response.status !== 200) return { status: response.status, error: text };
      const body = JSON.parse(text) as { report?: Record<string, unknown>; __error__?: { message: string } };
      return { status: 200, report: body.report, error: body.__error__?.message };
    } catch (error) {
      return { status: 0, error: String(error) };
    }
  }

  /** The neighbour serves a run and the control plane answers. */
  async function othersAnswer(): Promise<void> {
    const served = await run(neighbour, "agent", { messages: [{ role: "user", content: "still there?" }] });
    assert.equal(served.status, 200, `the neighbour deployment does not answer: ${served.error}`);
    const listed = await cp.admin.get(`/v2/deployments/${neighbour.id}`);
    assert.equal(listed.status, 200, "the control plane does not answer");
  }

  /** Runs the hostile request while the neighbour serves runs beside it, then checks both still answer. */
  async function hostile(input: Record<string, unknown>): Promise<RunResult> {
    const [result] = await Promise.all([run(hog, "hog", { request: input }), othersAnswer()]);
    await othersAnswer();
    return result;
  }

  const listenerDir = () => join(cp.dataDir, "listener");
  const deploymentDir = (deployment: Deployment) => join(listenerDir(), "deployments", deployment.id);

  test("the listener says at start that deployments run under limits", () => {
    assert.match(cp.output(), /resource limits: each deployment's processes in cgroups of their own/);
    assert.doesNotMatch(cp.output(), /NO RESOURCE LIMITS|WITHOUT A SIZE LIMIT/);
  });

  test("a fork loop gets EAGAIN at the deployment's process limit (128), and the others keep answering", async () => {
    const result = await hostile({ action: "fork", count: 500 });
    assert.equal(result.status, 200, result.error);
    const report = result.report as { spawned: number; error?: string };
    assert.equal(report.error, "EAGAIN", JSON.stringify(report));
    assert.ok(report.spawned > 0 && report.spawned < 128, `it started ${report.spawned} processes`);
    // The deployment itself survives its refused forks.
    const again = await run(hog, "hog", { request: { action: "fork", count: 3 } });
    assert.deepEqual(again.report, { spawned: 3 });
  });

  test("writing /tmp and /data stops with ENOSPC at their sizes (256 and 512 MiB), on disks that are not the host's", async () => {
    for (const [dir, sizeMb] of [
      ["/tmp", 256],
      ["/data", 512],
    ] as const) {
      const result = await hostile({ action: "fill", dir, maxMb: 1024 });
      assert.equal(result.status, 200, result.error);
      const report = result.report as { writtenMb: number; error?: string };
      assert.equal(report.error, "ENOSPC", `${dir}: ${JSON.stringify(report)}`);
      assert.ok(report.writtenMb > sizeMb / 2 && report.writtenMb <= sizeMb, `${dir}: wrote ${report.writtenMb} MiB`);
      // What the listener sees: a file system of that size, not the host's disk.
      const stats = statfsSync(join(deploymentDir(hog), dir.slice(1)));
      assert.ok(stats.blocks * stats.bsize <= sizeMb * MiB, `${dir} is ${(stats.blocks * stats.bsize) / MiB} MiB`);
    }
  });

  test("allocating past 512 MiB off the heap kills only that deployment, with the reason in its revision's events", async () => {
    const result = await hostile({ action: "alloc", maxMb: 2048 });
    assert.notEqual(result.status, 200, `the allocation went through: ${JSON.stringify(result.report)}`);
    const revisionId = hog.latest_revision_id!;
    const oom = /killed: out of memory \(limit 512 MiB\)/;
    const messages = await eventually(async () => {
      const events = await cp.admin.get<{ resources: { message: string }[] }>(
        `/v2/deployments/${hog.id}/revisions/${revisionId}/events`,
      );
      const texts = events.body.resources.map((event) => event.message);
      return texts.some((text) => oom.test(text)) ? texts : undefined;
    });
    assert.ok(messages.some((text) => oom.test(text)));
    await othersAnswer();
    // The supervisor restarts it, in a fresh cgroup of the same size.
    const back = await eventually(async () => {
      const served = await run(hog, "hog", { request: { action: "fork", count: 1 } });
      return served.status === 200 ? served : undefined;
    });
    assert.deepEqual(back.report, { spawned: 1 });
  });

  test("a build command past its memory (2 GiB for a dev_free deployment) fails the build with the reason", async () => {
    // Off-heap buffers of 64 MiB, written, up to 3 GiB: bounded should the limit not hold.
    const allocate = "const held = [];\nfor (let i = 0; i < 48; i++) held.push(Buffer.alloc(64 * 1024 * 1024, 1));\n";
    const deployment = await deploySized("build-hog", packFixture("deploy-app", { "allocate.mjs": allocate }), {
      deployment_type: "dev_free",
      install_command: "node allocate.mjs",
    });
    const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
    assert.equal(revision.status, "BUILD_FAILED", revision.status_message ?? undefined);
    assert.match(
      revision.status_message ?? "",
      /install_command `node allocate\.mjs` was killed: out of memory \(limit 2048 MiB\)/,
    );
    await othersAnswer();
  });

  test("deleting a deployment removes its cgroups and unmounts its disks", async () => {
    const dir = deploymentDir(hog);
    assert.ok(mountsUnder(dir).length === 2, `mounted: ${mountsUnder(dir).join(" ")}`);
    assert.ok(cgroupsNamed(hog.id).length > 0, "its cgroups exist while it runs");
    const deleted = await cp.admin.delete(`/v2/deployments/${hog.id}`);
    assert.equal(deleted.status, 204);
    await eventually(async () => ((await cp.admin.get(`/v2/deployments/${hog.id}`)).status === 404 ? true : undefined));
    await eventually(async () => (existsSync(dir) ? undefined : true));
    assert.deepEqual(mountsUnder(dir), []);
    assert.deepEqual(cgroupsNamed(hog.id), []);
    await othersAnswer();
  });
});

/** Polls `check` (a few times a second) until it gives a value; fails after a minute. */
async function eventually<T>(check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail("gave up waiting after 60 s");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((point) => point.startsWith(`${dir}/`));
}

/** The cgroup directories named after the deployment, in any hierarchy (the listener's lie two or three levels down). */
function cgroupsNamed(deploymentId: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 5) return;
    let entries: string[];
    try {
      entries = readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
    } catch {
      return;
    }
    for (const name of entries) {
      if (name === deploymentId) found.push(join(dir, name));
      else if (name.startsWith("berth-") || depth < 3) walk(join(dir, name), depth + 1);
    }
  };
  walk("/sys/fs/cgroup", 0);
  return found;
}
