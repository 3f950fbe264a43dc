import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const BERTH_BIN = fileURLToPath(new URL("../../../cli/bin/berth.mjs", import.meta.url));

/** `berth listener <args>` as a process of its own, once it says it started (its router's URL with it). */
export async function startListenerProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ routerUrl: string; child: ChildProcess; output: () => string }> {
  const merged: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: "info", ...env };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const child = spawn(process.execPath, [BERTH_BIN, "listener", ...args], { stdio: ["ignore", "pipe", "pipe"], env: merged });
  let text = "";
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const routerUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /"router_url":"([^"]+)"[^\n]*"msg":"listener started"/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`berth listener exited (${code}) before starting:\n${text}`)));
  });
  return { routerUrl, child, output: () => text };
}

/** The arguments that connect a `berth listener` to a test control plane as the given listener. */
export function listenerArgsFor(
  cp: { url: string; adminKey: string; defaultTenantId: string },
  listenerId: string,
  dataDir: string,
): string[] {
  return [
    "--control-plane",
    cp.url,
    "--api-key",
    cp.adminKey,
    "--tenant",
    cp.defaultTenantId,
    "--listener-id",
    listenerId,
    "--data-dir",
    dataDir,
  ];
}

/** `berth listener <args>` to completion (`--render`), with no kubeconfig but the one it is given. */
export async function runListenerCommand(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BERTH_BIN, "listener", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LOG_LEVEL: "info", KUBECONFIG: undefined, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}
