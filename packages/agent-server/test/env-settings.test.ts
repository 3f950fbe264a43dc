import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { test } from "node:test";
import { newDataDir, REPO_ROOT } from "@berth/test-support";

/** Runs `berth dev` on the graphs fixture with one variable set; resolves to its exit code and stderr. */
async function devWith(name: string, value: string): Promise<{ code: number; stderr: string }> {
  const fixture = join(REPO_ROOT, "packages/agent-server/test/fixtures/graphs");
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, "packages/cli/bin/berth.mjs"), "dev", fixture, "--port", "0", "--data-dir", newDataDir()],
    { env: { ...process.env, [name]: value }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.resume();
  const [code] = (await once(child, "exit")) as [number];
  return { code, stderr };
}

test("a setting with a value its variable does not accept stops berth dev with the variable named, not a stack trace", async () => {
  const cases: [string, string, RegExp][] = [
    ["BERTH_SQLITE_SHARED", "maybe", /BERTH_SQLITE_SHARED must be one of 1, true, yes, on, 0, false, no, off, got "maybe"/],
    ["BERTH_WORKERS", "1.5", /BERTH_WORKERS must be an integer >= 1, got "1\.5"/],
    ["BERTH_LEASE_SECONDS", "soon", /BERTH_LEASE_SECONDS must be a number >= 1, got "soon"/],
    ["BERTH_SQLITE_SYNCHRONOUS", "always", /BERTH_SQLITE_SYNCHRONOUS must be one of normal, full, got "always"/],
  ];
  for (const [name, value, message] of cases) {
    const { code, stderr } = await devWith(name, value);
    assert.equal(code, 2, stderr);
    assert.match(stderr, message);
    assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  }
});

test("booleans take on/off and yes/no in any case, as every variable does", async () => {
  // BERTH_INTERNAL_TRUNCATE=On is accepted: the server starts (and is stopped once it listens).
  const fixture = join(REPO_ROOT, "packages/agent-server/test/fixtures/graphs");
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, "packages/cli/bin/berth.mjs"), "dev", fixture, "--port", "0", "--data-dir", newDataDir()],
    { env: { ...process.env, BERTH_INTERNAL_TRUNCATE: "On", LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("agent server listening")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stdout}`)));
  });
  assert.match(stdout, /POST \/internal\/truncate is enabled/);
  child.kill("SIGTERM");
  await once(child, "exit");
});
