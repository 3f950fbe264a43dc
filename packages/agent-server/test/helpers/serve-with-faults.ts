// TEST-ONLY entry: `berth dev --no-reload <project>` (or `berth serve --role <role> <project>`) with the faults that
// BERTH_TEST_FAULTS names (runs/execution/test-faults.ts) passed to startServer. Production code reads no test hook
// from the environment: only this script does. Started by faulty-berth.ts.
import { startServer, TestFaults } from "@berth/agent-server";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { port: { type: "string" }, "data-dir": { type: "string" }, role: { type: "string" } },
});
const role = values.role as "api" | "worker" | "all" | undefined;
const server = await startServer({
  config: positionals[0] ?? ".",
  host: "127.0.0.1",
  port: Number(values.port ?? 0),
  role,
  workerHealth: role === "worker",
  dataDir: values["data-dir"],
  dev: role === undefined,
  faults: new TestFaults(process.env.BERTH_TEST_FAULTS ?? ""),
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
