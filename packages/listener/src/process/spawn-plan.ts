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
  /** The kernel's limits the process runs under (see sandbox/limits.ts); none where the listener has no cgroups. */
  limits?: PlanLimits;
  /** Frees what the plan holds for the process (its network namespace): called once the process has exited. */
  release?: () => Promise<void>;
}

/** Resource limits (setrlimit) a process starts with, as `ulimit` (of /bin/sh) sets them: soft and hard, lowered only. */
export interface Rlimits {
  /** Open files (RLIMIT_NOFILE). */
  openFiles: number;
  /** Processes and threads of the process's user (RLIMIT_NPROC): the deployment's, since each has a uid of its own. */
  userProcesses?: number;
  /** Core dump size in KiB (RLIMIT_CORE): 0, so a crash writes nothing outside the deployment's disks. */
  coreKb: number;
}

/** What a process's limits did to it, read once it is gone. */
export interface LimitHits {
  /** The kernel killed it (or one of its children) for using more memory than this many MiB. */
  outOfMemoryMb?: number;
  /** Forks and new threads the process limit refused (EAGAIN), and that limit. */
  refusedForks?: { count: number; limit: number };
  /** Its disks that are full, as `/data (512 MiB)`. */
  fullDisks?: string[];
}

/** A process's own cgroup (one per v1 hierarchy) and rlimits. */
export interface PlanLimits {
  /** The `cgroup.procs` files the process writes its pid to before it runs anything of the deployment's. */
  cgroupProcs: string[];
  rlimits: Rlimits;
  /** Once the process is gone: what its limits did, then its cgroup is removed. Never rejects. */
  finish(): Promise<LimitHits>;
  /** Frees the cgroup of a process that never started. */
  discard(): void;
}

/** Plans `argv` run in `cwd` with `env` (paths as the listener sees them). */
export type SpawnPlanner = (argv: string[], cwd: string, env: Record<string, string>) => SpawnPlan | Promise<SpawnPlan>;

/** Runs `argv` as is: the listener's own user, its file system. */
export const unsandboxed: SpawnPlanner = ([file, ...args], cwd, env) => ({ file: file!, args, env, cwd, sandboxed: false });

/** Exit code of the wrapper when it cannot join its cgroup or lower its rlimits: the plan's program is then not run at all. */
export const LIMITS_NOT_APPLIED = 125;

/** Lowers a limit (`ulimit` flag, value) to the value, soft and hard; a lower hard limit stays (raising it would fail). */
const LOWER = 'lower() { h=$(ulimit -H "$1"); if [ "$h" = unlimited ] || [ "$h" -gt "$2" ]; then ulimit "$1" "$2"; fi; }';

/**
 * The program and arguments that start `plan`: as planned, or with limits,
 * through /bin/sh, which joins the process's cgroups, lowers its rlimits and
 * then execs the plan (same pid): the plan's program, and all it starts, run
 * inside the limits from their first instruction. The paths are the
 * listener's own (no user input reaches the script); the plan's arguments
 * stay arguments.
 */
export function commandOf(plan: SpawnPlan): { file: string; args: string[] } {
  const limits = plan.limits;
  if (!limits) return { file: plan.file, args: plan.args };
  const joins = limits.cgroupProcs.map(
    (procs) => `echo $$ > ${shellQuote(procs)} || { echo "berth: could not join its cgroup" >&2; exit ${LIMITS_NOT_APPLIED}; }`,
  );
  const { openFiles, userProcesses, coreKb } = limits.rlimits;
  const lowered = [`lower -n ${openFiles}`, `lower -c ${coreKb}`];
  // dash names RLIMIT_NPROC -p.
  if (userProcesses !== undefined) lowered.push(`lower -p ${userProcesses}`);
  const rlimits = `${lowered.join(" && ")} || { echo "berth: could not lower the rlimits" >&2; exit ${LIMITS_NOT_APPLIED}; }`;
  const script = [...joins, LOWER, rlimits, 'exec "$@"'].join("\n");
  return { file: "/bin/sh", args: ["-c", script, "sh", plan.file, ...plan.args] };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** How an out-of-memory kill is named in a revision's events and a build's error. */
export function outOfMemory(limitMb: number): string {
  return `killed: out of memory (limit ${limitMb} MiB)`;
}

/** What the limits did besides killing for memory (a full disk, refused forks), or "" when nothing. */
export function limitNotes(hits: LimitHits | undefined): string {
  if (!hits) return "";
  const notes: string[] = [];
  if (hits.fullDisks?.length) notes.push(`disk full: ${hits.fullDisks.join(", ")}`);
  if (hits.refusedForks)
    notes.push(
      `its process limit (${hits.refusedForks.limit}) refused ${hits.refusedForks.count} new processes or threads while it ran`,
    );
  return notes.join("; ");
}
