// Imported as `@berth/test-support/container-engine`, so that tests without containers do not load dockerode.
import Docker from "dockerode";

/**
 * The container engine the container tests use: DOCKER_HOST (`.ci/run` starts
 * one with scripts/container-engine.sh) with the Node base image made by
 * scripts/node-base-image.sh. Without them the tests are skipped, loudly.
 */
export async function containerEngine(): Promise<{ docker?: Docker; address: string; skip: string | false }> {
  const address = process.env.DOCKER_HOST ?? "";
  const base = process.env.BERTH_NODE_BASE_IMAGE || `berth/node-base:${process.versions.node.split(".")[0]}`;
  const skip = (reason: string) => {
    process.stderr.write(`\n*** SKIPPED: the container tests: ${reason} ***\n\n`);
    return { address, skip: reason };
  };
  if (!address.startsWith("unix://"))
    return skip("DOCKER_HOST is not set to an engine's unix socket (see scripts/container-engine.sh)");
  const docker = new Docker({ socketPath: address.slice("unix://".length) });
  try {
    await docker.ping();
  } catch (error) {
    return skip(`the engine at ${address} does not answer (${(error as Error).message})`);
  }
  try {
    await docker.getImage(base).inspect();
  } catch {
    return skip(`the engine has no ${base} (make it with scripts/node-base-image.sh)`);
  }
  return { docker, address, skip: false };
}

/**
 * The engine's images with `label`. podman's engine before 4.6 fails a listing when one of the images it
 * lists is removed meanwhile ("image not known"), as the listener does while a test waits: asked again then.
 */
export async function imagesLabelled(docker: Docker, label: string): Promise<Docker.ImageInfo[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await docker.listImages({ filters: { label: [label] } });
    } catch (error) {
      if (attempt >= 5 || !/image not known/.test((error as Error).message)) throw error;
    }
  }
}
