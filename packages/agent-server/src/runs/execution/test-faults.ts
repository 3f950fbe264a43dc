import type { RunEnd, RunRepository } from "../../storage/types.js";

/**
 * TEST-ONLY fault injection, for the black-box tests of failures a client
 * cannot provoke. Only the test suite makes one and passes it to
 * `startServer({ faults })` (test/helpers/serve-with-faults.ts); a production
 * server has none.
 *
 * The spec is a comma-separated list of `<point>:<times>`:
 * - `finish:<n>`: the first n times this process's worker ends a run in the
 *   database (`finish`), the call fails as a database error would;
 * - `append:<n>`: the same for writing a batch of a run's event log (a run's
 *   last batch is written by its `finish`, which then counts as one);
 * - `pid-check:off`: this process judges no lease owner by its pid, as if every
 *   other process ran on another host (only lapsed leases are requeued).
 * `<n>` is a count, `once` or `always`.
 */
export class TestFaults {
  private readonly remaining = new Map<string, number>();

  /** `spec` is kept for the execution thread, which makes its own (execution-thread.ts). */
  constructor(readonly spec: string) {
    for (const item of spec
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean)) {
      const [point, times = "once"] = item.split(":");
      const count = times === "always" || times === "off" ? Infinity : times === "once" ? 1 : Number(times);
      if (!Number.isFinite(count) && count !== Infinity) throw new Error(`test faults: bad count in "${item}"`);
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
    throw Object.assign(new Error(`test fault injected at ${point}`), { name: "TestFaultError" });
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
          if (point === "finish" && (args[1] as RunEnd | undefined)?.events?.length) this.hit("append");
          this.hit(point);
          return (value as (...params: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}
