import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { poolRandomValues } from "../../src/graphs/pooled-random-values.js";

describe("crypto.getRandomValues served from a pool", () => {
  poolRandomValues();

  test("hands out fresh bytes on every call, across refills of the pool", () => {
    const seen = new Set<string>();
    // 16 bytes a call, as the UUID generators ask: 2,000 calls go through the pool several times.
    for (let i = 0; i < 2000; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array(16));
      seen.add(Buffer.from(bytes).toString("hex"));
    }
    assert.equal(seen.size, 2000, "no 16 bytes handed out twice");
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 1000; i++) for (const byte of crypto.getRandomValues(new Uint8Array(64))) counts[byte]++;
    // 64,000 bytes, 250 expected per value: a pool handing out zeros or a repeating block would be far off.
    assert.ok(
      Math.min(...counts) > 150 && Math.max(...counts) < 350,
      `byte counts ${Math.min(...counts)}..${Math.max(...counts)}`,
    );
  });

  test("returns the array it filled, and fills other arrays as before", () => {
    const bytes = new Uint8Array(16);
    assert.equal(crypto.getRandomValues(bytes), bytes);
    const large = crypto.getRandomValues(new Uint8Array(4096));
    assert.ok(large.some((byte) => byte !== 0));
    const words = crypto.getRandomValues(new Uint32Array(8));
    assert.ok(words.some((word) => word !== 0));
    assert.throws(() => crypto.getRandomValues(new Float64Array(4) as unknown as Uint8Array<ArrayBuffer>), {
      name: "TypeMismatchError",
    });
    assert.throws(() => crypto.getRandomValues(new Uint8Array(65_537)), { name: "QuotaExceededError" });
  });
});
