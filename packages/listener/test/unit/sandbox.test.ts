import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { LocalCompute } from "../../src/compute/local-compute.js";
import type { ComputeEvent, ServerSpec } from "../../src/compute/types.js";
import { killOrphans, recordPid } from "../../src/listener/orphans.js";
import { type Isolation, startIsolation } from "../../src/sandbox/isolation.js";

// Real agent servers under LocalCompute in the listener's bubblewrap sandbox:
// how they are stopped. Needs root (as the listener does); CI runs as root.

// The project the control plane's deploy tests upload.
const DEPLOY_APP = fileURLToPath(new URL("../../../control-plane/test/fixtures/deploy-app/", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "berth-sandbox-unit-"));
const dirs = { artifacts: join(root, "artifacts"), deployments: join(root, "deployments") };
after(() => rmSync(root, { recursive: true, force: true }));

/** A deployment's build, laid out as the listener's artifact store does. */
function specOf(deploymentId: string): ServerSpec {
  const artifact = join(dirs.artifacts, deploymentId, "build");
  cpSync(DEPLOY_APP, artifact, { recursive: true });
  const dataDir = join(dirs.deployments, deploymentId, "data");
  mkdirSync(dataDir, { recursive: true });
  return { deploymentId, revisionId: randomUUID(), configFile: join(artifact, "langgraph.json"), dataDir, env: {} };
}

/** The processes a process started, from /proc. */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
}

/** Whether the process ended within `boundMs`. */
async function gone(pid: number, boundMs: number): Promise<boolean> {
  const until = Date.now() + boundMs;
  while (running(pid)) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("sandboxed agent servers", { skip: process.getuid?.() !== 0 && "the listener sandboxes only as root" }, () => {
  let isolation: Isolation;
  const events: ComputeEvent[] = [];
  const waiting: Array<(event: ComputeEvent) => void> = [];
  let compute: LocalCompute;

  before(async () => {
    isolation = await startIsolation({
      dataDir: root,
      ...dirs,
      trustAllCode: false,
      tenantOf: () => "workspace",
      logger: pino({ level: "silent" }),
    });
    assert.equal(isolation.sandboxed, true, "root with bubblewrap installed: the sandbox is on");
    compute = new LocalCompute({
      sandbox: isolation.server,
      log: () => {},
      onEvent: (event) => {
        events.push(event);
        for (const resolve of waiting.splice(0)) resolve(event);
      },
    });
  });
  after(() => compute?.stopAll());

  test("stop() sends SIGTERM to the server inside: a run streaming then finishes (graceful shutdown)", {
    timeout: 120_000,
  }, async () => {
    const instance = await compute.start(specOf(randomUUID()));
    const client = new Client({ apiUrl: instance.url });
    let stopping: Promise<void> | undefined;
    let updates = 0;
    for await (const part of client.runs.stream(null, "slow", { input: { steps: 8 }, streamMode: "updates" })) {
      if (part.event !== "updates") continue;
      updates += 1;
      stopping ??= instance.stop();
    }
    assert.equal(updates, 8, "every step of the run streamed after the stop began");
    await stopping;
    assert.equal(instance.healthy(), false);
    assert.equal(running(instance.pid), false);
    assert.deepEqual(events, [], "a stop is not a crash");
  });

  test("SIGKILL to the recorded pid (orphan cleanup) ends the whole sandbox, the server inside too", {
    timeout: 120_000,
  }, async () => {
    const spec = specOf(randomUUID());
    const instance = await compute.start(spec);
    try {
      const bwrap = instance.pid;
      const inside = childrenOf(bwrap).flatMap(childrenOf);
      assert.equal(inside.length, 1, "bwrap → its pid 1 → the server");
      // /proc/<pid>/cmdline separates arguments with NUL characters.
      assert.match(readFileSync(`/proc/${inside[0]}/cmdline`, "utf8").replaceAll("\u0000", " "), /berth\.mjs serve /);
      await recordPid(join(dirs.deployments, spec.deploymentId), bwrap);
      const crashed = new Promise<ComputeEvent>((resolve) => waiting.push(resolve));
      assert.equal(killOrphans(dirs.deployments), 1);
      assert.equal((await crashed).kind, "crashed");
      // The kernel ends the rest of a pid namespace after its init, asynchronously: no event to await for a process
      // that is not ours, so poll (10 s is a bound for a stuck process, not a speed check).
      assert.equal(await gone(inside[0]!, 10_000), true, "the server died with its sandbox");
    } finally {
      await instance.stop();
      events.length = 0;
    }
  });
});
