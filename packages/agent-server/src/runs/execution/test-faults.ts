import type { RunRepository } from "../../storage/types.js";

/**
 * TEST-ONLY fault injection, for the black-box tests of failures a client
 * cannot provoke. Off unless the environment variable BERTH_TEST_FAULTS is
 * set, which nothing but the test suite does; never set it in production.
 *
 * BERTH_TEST_FAULTS is a comma-separated list of `<point>:<times>`:
 * - `finish:<n>`: the first n times this process's worker ends a run in the
 *   database (`finish`), the call fails as a database error would;
 * - `append:<n>`: the same for writing a batch of a run's event log;
 * - `pid-check:off`: this process judges no lease owner by its pid, as if every
 *   other process ran on another host (only lapsed leases are requeued).
 * `<n>` is a count, `once` or `always`.
 */
class TestFaults {
  private readonly remaining = new Map<string, number>();

  constructor(spec: string | undefined) {
    for (const item of (spec ?? "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean)) {
      const [point, times = "once"] = item.split(":");
      const count = times === "always" || times === "off" ? Infinity : times === "once" ? 1 : Number(times);
      if (!Number.isFinite(count) && count !== Infinity) throw new Error(`BERTH_TEST_FAULTS: bad count in "${item}"`);
      this.remaining.set(point, count);
    }
  }

  has(point: string): boolean {
    return (this.remaining.get(point) ?? 0) > 0;
  }

  /** Throws when the fault `point` is due (and counts it). */
  hit(point: string): void {
    const left = this.remaining.get(point) ?? 0;
    if (left <= 0) return;
    this.remaining.set(point, left - 1);
    throw Object.assign(new Error(`test fault injected at ${point} (BERTH_TEST_FAULTS)`), { name: "TestFaultError" });
  }

  /** The repository a worker uses, with `finish` and `append` faults applied; the repository itself when none is set. */
  wrapRuns(runs: RunRepository): RunRepository {
    if (!this.has("finish") && !this.has("append")) return runs;
    return new Proxy(runs, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        const point = property === "finish" ? "finish" : property === "appendEvents" ? "append" : undefined;
        if (!point || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          this.hit(point);
          return (value as (...params: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}

export const testFaults = new TestFaults(process.env.BERTH_TEST_FAULTS);
