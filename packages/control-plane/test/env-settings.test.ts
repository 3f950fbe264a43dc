import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const BERTH_BIN = fileURLToPath(new URL("../../cli/bin/berth.mjs", import.meta.url));

test("a setting with a value its variable does not accept stops the control plane with the variable named", async () => {
  const cases: [string, string, RegExp][] = [
    ["BERTH_TRUST_ALL_CODE", "maybe", /BERTH_TRUST_ALL_CODE must be one of 1, true, yes, on, 0, false, no, off, got "maybe"/],
    ["BERTH_EMBEDDED_LISTENER", "nope", /BERTH_EMBEDDED_LISTENER must be one of .*got "nope"/],
    ["BERTH_ROUTER_PORT", "70000", /BERTH_ROUTER_PORT must be an integer >= 0 and <= 65535, got "70000"/],
    ["BERTH_LOCAL_GIT_ROOTS", "/srv/git,repos", /BERTH_LOCAL_GIT_ROOTS: repos is not an absolute path/],
    ["BERTH_OUTBOUND_ALLOW_PRIVATE", "10.0.0.0/", /BERTH_OUTBOUND_ALLOW_PRIVATE: 10\.0\.0\.0\/ is not a valid address or CIDR/],
    [
      "BERTH_OUTBOUND_ALLOW_PRIVATE",
      "idp/internal",
      /BERTH_OUTBOUND_ALLOW_PRIVATE: idp\/internal is not a valid address or CIDR/,
    ],
  ];
  for (const [name, value, message] of cases) {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-env-"));
    const child = spawn(process.execPath, [BERTH_BIN, "control-plane", "--port", "0", "--data-dir", dataDir], {
      env: { ...process.env, [name]: value },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.resume();
    const [code] = (await once(child, "exit")) as [number];
    assert.equal(code, 2, stderr);
    assert.match(stderr, message);
    assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  }
});
