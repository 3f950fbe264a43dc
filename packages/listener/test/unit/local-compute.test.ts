import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { LocalCompute } from "../../src/compute/local-compute.js";
import { type ComputeEvent, DeployError, type LogSink, type ServerSpec } from "../../src/compute/types.js";

// Real agent-server processes (`berth serve`) under LocalCompute.

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const ECHO_CHAT = join(REPO_ROOT, "examples", "echo-chat", "langgraph.json");
const ENV_GRAPH = join(FIXTURES, "env-graph", "langgraph.json");
const BROKEN_GRAPH = join(FIXTURES, "env-graph", "broken.json");

const dataDirs: string[] = [];
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function specOf(configFile: string, extra: Partial<ServerSpec> = {}): ServerSpec {
  const dataDir = mkdtempSync(join(tmpdir(), "berth-compute-"));
  dataDirs.push(dataDir);
  return { deploymentId: "dep-1", revisionId: randomUUID(), configFile, dataDir, env: {}, ...extra };
}

type LogEntry = Parameters<LogSink>[0];

/** A LocalCompute that records its log lines and events, and lets a test await an event. */
function harness(options: { healthTimeoutMs?: number; log?: LogSink } = {}) {
  const lines: LogEntry[] = [];
  const events: ComputeEvent[] = [];
  const waiting: Array<{ kind: ComputeEvent["kind"]; resolve: (event: ComputeEvent) => void }> = [];
  const compute = new LocalCompute({
    healthTimeoutMs: options.healthTimeoutMs,
    log: (entry) => {
      lines.push(entry);
      options.log?.(entry);
    },
    onEvent: (event) => {
      events.push(event);
      for (const waiter of waiting.splice(0)) {
        if (waiter.kind === event.kind) waiter.resolve(event);
        else waiting.push(waiter);
      }
    },
  });
  const next = (kind: ComputeEvent["kind"]) => new Promise<ComputeEvent>((resolve) => waiting.push({ kind, resolve }));
  return { compute, lines, events, next };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ok(url: string): Promise<unknown> {
  const response = await fetch(`${url}/ok`);
  assert.equal(response.status, 200);
  return response.json();
}

describe("LocalCompute", () => {
  test("starts echo-chat healthy, serves runs, logs at pino's levels, and stop() ends it", { timeout: 90_000 }, async () => {
    const { compute, lines, events } = harness();
    const spec = specOf(ECHO_CHAT);
    const instance = await compute.start(spec);
    try {
      assert.equal(instance.deploymentId, "dep-1");
      assert.equal(instance.revisionId, spec.revisionId);
      assert.match(instance.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(instance.healthy());
      assert.ok(alive(instance.pid));
      assert.deepEqual(compute.instances(), [instance]);
      assert.deepEqual(await ok(instance.url), { ok: true });
      const run = await fetch(`${instance.url}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "agent", input: { messages: [{ type: "human", content: "hi" }] } }),
      });
      const output = (await run.json()) as { messages: Array<{ content: string }> };
      assert.equal(output.messages.at(-1)?.content, "You said: hi");
      const listening = lines.find((line) => line.message.startsWith("agent server listening"));
      assert.ok(listening, "the pino line reaches the log sink");
      assert.equal(listening.level, "info");
      assert.equal(listening.revisionId, spec.revisionId);
      assert.match(listening.message, new RegExp(`"url":"${instance.url}"`));
    } finally {
      const pid = instance.pid;
      await instance.stop();
      assert.equal(alive(pid), false);
    }
    assert.equal(instance.healthy(), false);
    assert.deepEqual(compute.instances(), []);
    await assert.rejects(fetch(`${instance.url}/ok`));
    assert.deepEqual(events, [], "a stop is not a crash");
  });

  test("the process sees the spec's env and platform vars, not the listener's; resources map to flags", {
    timeout: 90_000,
  }, async () => {
    const saved = { DATABASE_URL: process.env.DATABASE_URL, LISTENER_ONLY: process.env.LISTENER_ONLY };
    // Were these passed on, the graph would see them (and DATABASE_URL would even switch the server to PostgreSQL).
    process.env.DATABASE_URL = "postgres://listener@db.invalid/berth";
    process.env.LISTENER_ONLY = "listener-secret";
    const { compute } = harness();
    const spec = specOf(ENV_GRAPH, {
      env: { MY_SECRET: "s3cret", LOG_LEVEL: "error" },
      resources: { memoryLimitMb: 512, workers: 3, cpu: 2 },
    });
    try {
      const instance = await compute.start(spec);
      const names = [
        "MY_SECRET",
        "DATABASE_URL",
        "LISTENER_ONLY",
        "BERTH_SQLITE_SHARED",
        "BERTH_WORKERS",
        "BERTH_REVISION_ID",
        "LOG_LEVEL",
        "PATH",
      ];
      const run = await fetch(`${instance.url}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "env", input: { names } }),
      });
      assert.equal(run.status, 200);
      const output = (await run.json()) as { values: Record<string, string | null>; exec_argv: string[] };
      assert.equal(output.values.MY_SECRET, "s3cret");
      assert.equal(output.values.DATABASE_URL, null);
      assert.equal(output.values.LISTENER_ONLY, null);
      assert.equal(output.values.BERTH_SQLITE_SHARED, "1");
      assert.equal(output.values.BERTH_WORKERS, "3");
      assert.equal(output.values.BERTH_REVISION_ID, spec.revisionId);
      assert.equal(output.values.LOG_LEVEL, "info", "a quieter level would hide the line the URL is read from");
      assert.equal(output.values.PATH, process.env.PATH);
      assert.ok(output.exec_argv.includes("--max-old-space-size=384"), `execArgv: ${output.exec_argv.join(" ")}`);
    } finally {
      await compute.stopAll();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test("a killed process is restarted (kill -9 → crashed → restarted) and serves again", { timeout: 90_000 }, async () => {
    const { compute, next, events } = harness();
    const instance = await compute.start(specOf(ECHO_CHAT));
    try {
      const moves: string[] = [];
      instance.onUrlChange((url) => moves.push(url));
      const firstPid = instance.pid;
      const firstUrl = instance.url;
      const crashed = next("crashed");
      const restarted = next("restarted");
      process.kill(firstPid, "SIGKILL");
      const crash = await crashed;
      assert.match(crash.message, /killed by SIGKILL; restarting in 1 s/);
      assert.equal(crash.revisionId, instance.revisionId);
      const back = await restarted;
      assert.match(back.message, /Restarted the agent server/);
      assert.ok(instance.healthy());
      assert.notEqual(instance.pid, firstPid);
      assert.deepEqual(await ok(instance.url), { ok: true });
      assert.deepEqual(moves, instance.url === firstUrl ? [] : [instance.url]);
      assert.deepEqual(
        events.map((event) => event.kind),
        ["crashed", "restarted"],
      );
    } finally {
      await instance.stop();
    }
  });

  test("a graph that fails to load: start() rejects with a DeployError carrying the reason", { timeout: 90_000 }, async () => {
    const { compute } = harness();
    const error = await compute.start(specOf(BROKEN_GRAPH)).then(
      () => assert.fail("start() resolved"),
      (reason: unknown) => reason,
    );
    assert.ok(error instanceof DeployError, String(error));
    assert.match(error.message, /^The agent server exited with code 1 before it was healthy: /);
    assert.match(error.message, /graph setup failed: MY_REQUIRED_SETTING is not set/);
    assert.equal(error.message.split("MY_REQUIRED_SETTING").length, 2, "the reason once (the tail adds nothing here)");
    assert.deepEqual(compute.instances(), []);
  });

  test("not healthy in time: DeployError; an aborted start rejects with the abort reason", { timeout: 90_000 }, async () => {
    const slow = harness({ healthTimeoutMs: 50 });
    await assert.rejects(slow.compute.start(specOf(ECHO_CHAT)), (error: unknown) => {
      assert.ok(error instanceof DeployError);
      assert.match(error.message, /not healthy within 0.1 s/);
      return true;
    });

    const abort = new AbortController();
    const reason = new Error("superseded by a newer revision");
    // Abandoned as soon as the process prints its first line: it is running, not yet healthy.
    const aborted = harness({ log: () => abort.abort(reason) });
    await assert.rejects(aborted.compute.start(specOf(ECHO_CHAT), abort.signal), (error: unknown) => error === reason);
    assert.deepEqual(aborted.compute.instances(), []);
  });

  test("stopAll() stops every instance", { timeout: 90_000 }, async () => {
    const { compute } = harness();
    const instances = await Promise.all([
      compute.start(specOf(ECHO_CHAT)),
      compute.start(specOf(ECHO_CHAT, { deploymentId: "dep-2" })),
    ]);
    const pids = instances.map((instance) => instance.pid);
    assert.equal(compute.instances().length, 2);
    await compute.stopAll();
    assert.deepEqual(compute.instances(), []);
    assert.deepEqual(
      pids.map((pid) => alive(pid)),
      [false, false],
    );
    await assert.rejects(compute.start(specOf(ECHO_CHAT)), DeployError);
  });
});
