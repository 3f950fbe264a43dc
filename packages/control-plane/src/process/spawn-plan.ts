/**
 * How a build command or an agent server is started: the program, its
 * arguments, its complete environment (nothing is inherited from the
 * listener) and the directory it is spawned in.
 */
export interface SpawnPlan {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /**
   * The program is bubblewrap around the real command: a graceful stop must
   * signal the command inside (see process-tree.ts), since bwrap itself
   * dies on SIGTERM and takes the sandbox down with SIGKILL.
   */
  sandboxed: boolean;
}

/** Plans `argv` run in `cwd` with `env` (paths as the listener sees them). */
export type SpawnPlanner = (argv: string[], cwd: string, env: Record<string, string>) => SpawnPlan;

/** Runs `argv` as is: the listener's own user, its file system. */
export const unsandboxed: SpawnPlanner = ([file, ...args], cwd, env) => ({ file: file!, args, env, cwd, sandboxed: false });
