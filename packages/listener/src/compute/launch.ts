import { spawn } from "node:child_process";
import { commandOf } from "../process/spawn-plan.js";
import { untilServing } from "./health.js";
import type { OutputLine } from "./process-output.js";
import { plainServerPlan } from "./server-command.js";
import { ServerProcess } from "./server-process.js";
import type { ServerSandbox, ServerSpec } from "./types.js";

export interface LaunchOptions {
  berthBin: string;
  spec: ServerSpec;
  /** Without one, the server is a plain child process. */
  sandbox?: ServerSandbox;
  healthTimeoutMs: number;
  /** Grace given to a process whose start is abandoned (unhealthy, aborted): it may already have claimed runs. */
  killGraceMs: number;
  onLine: (line: OutputLine) => void;
  signal?: AbortSignal;
}

/**
 * Spawns an agent server and resolves once `GET /ok` answers 200. Rejects with
 * a DeployError when it exits first or is not healthy within the timeout, or
 * with the signal's reason when aborted; the process is gone by then.
 */
export async function launch(options: LaunchOptions): Promise<ServerProcess> {
  const { spec, signal } = options;
  signal?.throwIfAborted();
  const plan = options.sandbox ? await options.sandbox.plan(spec, options.berthBin) : plainServerPlan(spec, options.berthBin);
  if (signal?.aborted) {
    plan.limits?.discard();
    await plan.release?.();
    signal.throwIfAborted();
  }
  // With limits, through the wrapper that joins the process's cgroup before the plan runs (see spawn-plan.ts).
  const command = commandOf(plan);
  const child = spawn(command.file, command.args, { cwd: plan.cwd, env: plan.env, stdio: ["ignore", "pipe", "pipe"] });
  const server = new ServerProcess(child, options.onLine, plan.sandboxed, plan.limits);
  if (plan.release) void server.exited.then(plan.release);
  await untilServing(server, options);
  return server;
}
