import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type ControlPlane, newDataDir, REPO_ROOT, startControlPlane } from "@berth/test-support";

const run = promisify(execFile);

/** The body of the README's first code block of `language` that contains `marker`. */
function readmeBlock(language: string, marker: string): string {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  for (const match of readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)) {
    if (match[1] === language && match[2]?.includes(marker)) return match[2];
  }
  throw new Error(`README.md has no ${language} block containing ${marker}`);
}

/**
 * The quick start as a new user runs it: the README's deploy line in a shell, then its SDK snippet, word for word, from a
 * folder laid out like the checkout (examples/, node_modules/, and the admin key where `npm start` leaves it).
 */
describe("README quick start", () => {
  let cp: ControlPlane;
  let work: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    work = newDataDir("berth-readme-");
    for (const entry of ["examples", "node_modules", "packages"]) symlinkSync(join(REPO_ROOT, entry), join(work, entry));
    copyFileSync(join(REPO_ROOT, "package.json"), join(work, "package.json"));
    mkdirSync(join(work, ".berth", "control-plane"), { recursive: true });
    writeFileSync(join(work, ".berth", "control-plane", "admin.key"), `${cp.adminKey}\n`);
    // The control plane listens on a free port here, not the README's default 8000: BERTH_URL is the documented way to say so.
    env = { ...process.env, BERTH_URL: cp.url };
    for (const variable of ["BERTH_API_KEY", "BERTH_TENANT_ID", "DEPLOYMENT_URL"]) delete env[variable];
  });

  after(async () => {
    await cp?.stop();
  });

  test("the deploy line prints a URL and the SDK snippet streams the echo from it", { timeout: 300_000 }, async () => {
    const deployLine = readmeBlock("sh", "berth deploy").trim();
    const shell = await run("bash", ["-euo", "pipefail", "-c", `${deployLine}\necho "$DEPLOYMENT_URL"`], {
      cwd: work,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    const deploymentUrl = shell.stdout.trim().split("\n").at(-1) ?? "";
    assert.match(deploymentUrl, /^http:\/\/127\.0\.0\.1:\d+\/d\/[0-9a-f-]{36}$/);

    writeFileSync(join(work, "snippet.mts"), readmeBlock("ts", "@langchain/langgraph-sdk"));
    const snippet = await run(process.execPath, ["--import", "tsx", "snippet.mts"], {
      cwd: work,
      env: { ...env, DEPLOYMENT_URL: deploymentUrl },
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.match(snippet.stdout, /^metadata /m);
    assert.match(snippet.stdout, /You said: hello/);
  });
});
