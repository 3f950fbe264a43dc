import { type Env, envNumber } from "@berth/service-kit";

/*
 * The environment variables the berth command reads itself. The programs it
 * starts read theirs in their own settings modules: the agent server's
 * (config/settings.ts), the control plane's (config/settings.ts) and the
 * listener's (settings.ts).
 */

const given = (value: string | undefined) => (value === undefined || value.trim() === "" ? undefined : value.trim());

/** Where the client commands (deploy, deployments, revisions, logs, login) talk, and as whom; flags win over these. */
export function connectionFromEnv(env: Env = process.env): { url?: string; apiKey?: string; tenantId?: string } {
  return { url: given(env.BERTH_URL), apiKey: given(env.BERTH_API_KEY), tenantId: given(env.BERTH_TENANT_ID) };
}

/** `berth serve`'s port and role from the environment, as container platforms set them (flags win). */
export function serveFromEnv(env: Env = process.env): { port?: string; role?: string; shutdownGraceMs: number } {
  return {
    port: given(env.PORT),
    role: given(env.BERTH_ROLE),
    // The agent server reads the same variable for its runs' grace; the command adds its own margin to it.
    shutdownGraceMs: envNumber("BERTH_SHUTDOWN_GRACE_SECONDS", 10, { min: 0 }, env) * 1000,
  };
}

/** The Docker Engine API `berth base-image` builds with (unless --engine names one), and the Node base image it builds on. */
export function containerEngineFromEnv(env: Env = process.env): { address?: string; baseImage?: string } {
  return { address: given(env.BERTH_CONTAINER_ENGINE), baseImage: given(env.BERTH_NODE_BASE_IMAGE) };
}

/** XDG_CONFIG_HOME when absolute (a relative one is ignored, as the XDG spec says). */
export function configHomeFromEnv(env: Env = process.env): string | undefined {
  return given(env.XDG_CONFIG_HOME);
}

/**
 * Node flags for `berth dev`'s server process: V8's young generation capped at 2 MB a semi-space (default 16 MB).
 * Loading a project fills the default's 32 MB, which stays resident until V8's memory reducer runs ~15 s into an idle
 * process; capped, the server holds ~20 MB less from its first request on, for a few percent of run throughput that a
 * development server does not need. None when NODE_OPTIONS or node's own arguments set the size.
 */
export function devServerNodeFlags(env: Env = process.env, execArgv: string[] = process.execArgv): string[] {
  const setsIt = (flags: string) => /--max[-_]semi[-_]space[-_]size/.test(flags);
  return setsIt(env.NODE_OPTIONS ?? "") || execArgv.some(setsIt) ? [] : ["--max-semi-space-size=2"];
}

/**
 * The environment of `berth dev`'s server process: glibc's malloc in one arena (MALLOC_ARENA_MAX=1) unless the variable
 * is set. Each thread allocating (the event loop, V8's helpers, libuv's pool, the loader hooks' thread) otherwise gets an
 * arena of its own, ~6–8 MB more resident for a server that serves one developer.
 */
export function devServerEnv(env: Env = process.env): Env {
  return env.MALLOC_ARENA_MAX === undefined ? { ...env, MALLOC_ARENA_MAX: "1" } : { ...env };
}
