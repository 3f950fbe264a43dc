import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { describe, test } from "node:test";
import { BERTH_BIN, FIXTURES, newDataDir, REPO_ROOT, runBerth } from "@berth/test-support";

const PROJECT = join(REPO_ROOT, "examples", "echo-chat");

interface DevRun {
  stdout: string;
  stderr: string;
  /** The API's address, from the banner. */
  url: string;
  /** How `<url>/docs/` answered. */
  docsStatus: number;
}

/** `berth dev <args>` on echo-chat or `project` (stdout and stderr pipes: not a terminal) until its banner, then stopped. */
async function devUntilBanner(args: string[], project = PROJECT): Promise<DevRun> {
  const child = spawn(
    process.execPath,
    [BERTH_BIN, "dev", project, "--port", "0", "--data-dir", newDataDir("berth-dev-output-"), ...args],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LOG_LEVEL: "info" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = once(child, "exit");
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        const banner = /^ {2}API: +(http:\/\/\S+)\n {2}Docs: .*\n {2}Studio: .*\n/m.exec(stderr);
        if (banner) resolve(banner[1]!);
      });
      void exited.then(() => reject(new Error(`berth dev exited before its banner:\n${stderr}`)));
    });
    assert.equal((await fetch(`${url}/ok`)).status, 200);
    const docs = await fetch(`${url}/docs/`);
    await docs.body?.cancel();
    return { stdout, stderr, url, docsStatus: docs.status };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

describe("berth dev's output", () => {
  test("not on a terminal: JSON log lines on stdout, and the banner with the API, docs and Studio on stderr", async () => {
    const run = await devUntilBanner([]);
    const lines = run.stdout.trim().split("\n");
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
    assert.ok(
      lines.some((line) => (JSON.parse(line) as { msg?: string }).msg === "agent server listening"),
      run.stdout,
    );
    assert.match(run.stderr, new RegExp(`^ {2}Docs: +${run.url}/docs$`, "m"));
    assert.match(
      run.stderr,
      new RegExp(`^ {2}Studio: +https://smith\\.langchain\\.com/studio/\\?baseUrl=${encodeURIComponent(run.url)}$`, "m"),
    );
    assert.equal(run.docsStatus, 200);
  });

  test("the banner's URLs carry langgraph.json's http.mount_prefix", async () => {
    const run = await devUntilBanner([], join(FIXTURES, "http-settings"));
    assert.match(run.url, /^http:\/\/127\.0\.0\.1:\d+\/api$/);
    assert.match(run.stderr, new RegExp(`^ {2}Docs: +${run.url}/docs$`, "m"));
    assert.match(run.stderr, new RegExp(`baseUrl=${encodeURIComponent(run.url)}$`, "m"));
    assert.equal(run.docsStatus, 200, "the docs answer where the banner says");
  });

  test("--pretty-logs (what a terminal gets): lines to read, no JSON; --no-reload prints the banner itself", async () => {
    const run = await devUntilBanner(["--pretty-logs", "--no-reload"]);
    assert.match(
      run.stdout,
      /^\d\d:\d\d:\d\d INFO {2}agent server listening url=http:\/\/127\.0\.0\.1:\d+ .*graphs=\["agent"\]/m,
    );
    assert.doesNotMatch(run.stdout, /^\{/m);
    assert.ok(!run.stdout.includes("\u001b["), "no colours when stdout is not a terminal");
    assert.match(run.stderr, /^berth dev: ready$/m);
  });

  test("--json-logs forces JSON; with --pretty-logs it is a usage error", async () => {
    const run = await devUntilBanner(["--json-logs", "--no-reload"]);
    assert.match(run.stdout, /^\{.*"msg":"agent server listening"/m);
    const both = await runBerth(["dev", PROJECT, "--json-logs", "--pretty-logs"]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--json-logs and --pretty-logs: one or the other/);
  });
});
