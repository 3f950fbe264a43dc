import assert from "node:assert/strict";
import { test } from "node:test";
import { newDataDir, runBerth } from "@berth/test-support";

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
    const dataDir = newDataDir("berth-env-");
    const { code, stderr } = await runBerth(["control-plane", "--port", "0", "--data-dir", dataDir], {
      env: { ...process.env, [name]: value },
    });
    assert.equal(code, 2, stderr);
    assert.match(stderr, message);
    assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  }
});
