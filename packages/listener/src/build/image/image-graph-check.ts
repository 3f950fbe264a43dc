import { posix } from "node:path";
import { type ContainerEngine, runToCompletion } from "../../engine/docker-engine.js";
import { BuildError, type BuildLog } from "../errors.js";

/** How `berth check` prefixes its reason for failing (stderr), and its warnings, which are not reasons. */
const FAILURE_PREFIX = "berth check: ";
const WARNING_PREFIX = "berth check: warning: ";
/** As long as a build's step may take, at most. */
const CHECK_TIMEOUT_MS = 10 * 60_000;

/**
 * The build's graph check for an image: `berth check` of the image's graph configuration in a container of the
 * image just built (as the image's own user, without privileges, on the build network), so a graph that fails at
 * import fails the build with its error as the reason, rather than the deploy with none.
 */
export async function checkImageGraphs(
  engine: ContainerEngine,
  options: { image: string; configFile: string; env: Record<string, string>; labels: Record<string, string>; log: BuildLog },
): Promise<void> {
  const { log } = options;
  log({ level: "info", message: "==> Checking that every graph loads (berth check, in the image)" });
  const result = await runToCompletion(engine, {
    image: options.image,
    cmd: ["node", "/opt/berth/packages/cli/bin/berth.mjs", "check", options.configFile],
    env: options.env,
    labels: options.labels,
    timeoutMs: CHECK_TIMEOUT_MS,
  });
  let failure: string | undefined;
  // Paths as the user knows them, relative to their project, not to where the image keeps it.
  const projectDir = `${posix.dirname(options.configFile)}/`;
  for (const line of result.output.split("\n").filter((text) => text.trim() !== "")) {
    const shown = line.split(projectDir).join("");
    // The failure becomes the build's reason, which the build logs once.
    if (line.startsWith(FAILURE_PREFIX) && !line.startsWith(WARNING_PREFIX)) failure = shown.slice(FAILURE_PREFIX.length);
    else log({ level: "info", message: shown });
  }
  if (result.timedOut) throw new BuildError("The graph check did not finish within 10 minutes");
  if (result.code !== 0)
    throw new BuildError(
      failure !== undefined ? `A graph failed to load: ${failure}` : `The graph check exited with code ${result.code}`,
    );
}
