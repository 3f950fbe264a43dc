import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pino from "pino";
import { RETRY_TRACING_AFTER_MS, TracingHealth } from "../../src/tracing/health.js";

describe("tracing health", () => {
  it("is down right after a request could not reach the service, tries again after a while, is up at the first answer", () => {
    let now = 1_000_000;
    const health = new TracingHealth(pino({ level: "silent" }), "http://tracing/api/v1", () => now);
    assert.equal(health.up(), true, "up until told otherwise");
    health.answered();
    assert.equal(health.up(), true);

    health.unreachable();
    assert.equal(health.up(), false, "down right after a failure");
    now += RETRY_TRACING_AFTER_MS - 1;
    assert.equal(health.up(), false);
    now += 1;
    assert.equal(health.up(), true, "up again after the pause: the next request is the probe");

    health.unreachable();
    assert.equal(health.up(), false, "the probe failed: paused again");
    health.answered();
    assert.equal(health.up(), true, "any answer ends the pause at once");
  });
});
