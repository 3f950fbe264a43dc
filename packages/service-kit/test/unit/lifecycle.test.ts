import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Lifecycle } from "../../src/lifecycle.js";

/** A part that notes its close in `log`, and fails it when asked. */
function part(name: string, log: string[], failure?: Error) {
  return {
    name,
    close: async () => {
      log.push(name);
      if (failure) throw failure;
    },
  };
}

describe("Lifecycle: one owner of a service's shutdown", () => {
  test("close stops the parts in reverse of their start, deferred stops among them, once", async () => {
    const log: string[] = [];
    const parts = new Lifecycle();
    assert.equal(parts.own(part("storage", log)).name, "storage");
    parts.defer(() => void log.push("subscription"));
    parts.own(part("app", log));
    await Promise.all([parts.close(), parts.close()]);
    await parts.close();
    assert.deepEqual(log, ["app", "subscription", "storage"]);
  });

  test("a stop that fails does not keep the others from stopping; its error is thrown after", async () => {
    const log: string[] = [];
    const parts = new Lifecycle();
    parts.own(part("first", log));
    parts.own(part("broken", log, new Error("stuck")));
    parts.own(part("last", log, new Error("later")));
    await assert.rejects(parts.close(), /later/);
    assert.deepEqual(log, ["last", "broken", "first"]);
  });

  test("run: what a failed start started is stopped, and the start's error goes on", async () => {
    const log: string[] = [];
    const parts = new Lifecycle();
    await assert.rejects(
      parts.run(async (lifecycle) => {
        lifecycle.own(part("storage", log));
        lifecycle.own(part("feed", log, new Error("a stop failing too is not what the caller hears")));
        throw new Error("port in use");
      }),
      /port in use/,
    );
    assert.deepEqual(log, ["feed", "storage"]);
  });

  test("run: a start that succeeds leaves every part running until close", async () => {
    const log: string[] = [];
    const parts = new Lifecycle();
    const started = await parts.run(async (lifecycle) => lifecycle.own(part("app", log)).name);
    assert.equal(started, "app");
    assert.deepEqual(log, []);
    await parts.close();
    assert.deepEqual(log, ["app"]);
  });
});
