import { backendEnv, type BerthOptions, type BerthProcess, FIXTURES, newDataDir, startBerth } from "@berth/test-support";
import { Client } from "@langchain/langgraph-sdk";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ENTRY = fileURLToPath(new URL("./serve-with-faults.ts", import.meta.url));
const READY =
  /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"agent server listening"|(?:"health":"(http:\/\/[^"]+)"[^\n]*)?"msg":"worker ready"/;

/**
 * startBerth, but when `options.env` sets BERTH_TEST_FAULTS the process is serve-with-faults.ts, which passes those
 * faults to startServer (the `berth` command injects none).
 */
export async function startBerthWithFaults(options: BerthOptions): Promise<BerthProcess> {
  if (!options.env?.BERTH_TEST_FAULTS) return startBerth(options);
  const dataDir = options.dataDir ?? newDataDir();
  const project = options.project?.startsWith("/") ? options.project : join(FIXTURES, options.project ?? "graphs");
  const role = options.role ? ["--role", options.role] : [];
  const env = { ...process.env, LOG_LEVEL: "info", ...(await backendEnv(dataDir)), ...options.env };
  const child = spawn(process.execPath, ["--import", "tsx", ENTRY, project, "--port", "0", "--data-dir", dataDir, ...role], {
    env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const exited = once(child, "exit");
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      text += chunk.toString();
      const match = READY.exec(text);
      if (match) resolve(match[1] ?? match[2] ?? "");
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    void exited.then(([code]) => reject(new Error(`serve-with-faults exited (${code}) before listening:\n${text}`)));
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const signal = async (name: NodeJS.Signals) => {
    if (alive()) child.kill(name);
    await exited;
  };
  return {
    url,
    client: new Client({ apiUrl: url }),
    dataDir,
    output: () => text,
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
    alive,
  };
}
