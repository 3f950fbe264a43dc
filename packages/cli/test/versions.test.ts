import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT, runBerth, startBerth, startControlPlane } from "@berth/test-support";

/** Every package's version: Berth is released in lockstep, so they are one. */
function packageVersions(): Map<string, string> {
  const versions = new Map<string, string>();
  for (const dir of readdirSync(join(REPO_ROOT, "packages"))) {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "packages", dir, "package.json"), "utf8")) as {
      name: string;
      version: string;
    };
    versions.set(manifest.name, manifest.version);
  }
  return versions;
}

test("one version: every package, the CHANGELOG's newest entry, berth --version and both services' /info", async () => {
  const versions = new Set(packageVersions().values());
  assert.equal(versions.size, 1, `packages at several versions: ${JSON.stringify([...packageVersions()])}`);
  const [version] = [...versions] as [string];
  const changelog = readFileSync(join(REPO_ROOT, "CHANGELOG.md"), "utf8");
  assert.equal(/^## (\S+)/m.exec(changelog)?.[1], version, "the CHANGELOG starts with this version");

  const cli = await runBerth(["--version"]);
  assert.equal(cli.stdout.trim(), version);

  const server = await startBerth();
  try {
    const info = (await (await fetch(`${server.url}/info`)).json()) as { version: string };
    assert.equal(info.version, version);
  } finally {
    await server.stop();
  }
  const cp = await startControlPlane();
  try {
    for (const path of ["/info", "/api-host/info"]) {
      const answer = await fetch(`${cp.url}${path}`);
      assert.equal(answer.status, 200, "open without a key");
      assert.deepEqual(await answer.json(), { version, server: "berth", service: "control-plane" });
    }
  } finally {
    await cp.stop();
  }
});
