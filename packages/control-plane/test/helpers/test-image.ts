import type Docker from "dockerode";
import { join } from "node:path";
import { pack } from "tar-fs";
import { CONTROL_PLANE_FIXTURES } from "@berth/test-support";

/**
 * Builds the stand-in server image (fixtures/external-image) as `ref`, pushes
 * it to its registry and removes the local copy: a listener must pull it.
 */
export async function pushTestImage(
  docker: Docker,
  ref: string,
  authconfig: { username?: string; password?: string; serveraddress: string },
): Promise<void> {
  const base = process.env.BERTH_NODE_BASE_IMAGE || `berth/node-base:${process.versions.node.split(".")[0]}`;
  const context = pack(join(CONTROL_PLANE_FIXTURES, "external-image"), {
    finalize: false,
    finish(archive) {
      archive.entry({ name: "Dockerfile" }, `FROM ${base}\nCOPY server.mjs /srv/server.mjs\nCMD ["node", "/srv/server.mjs"]\n`);
      archive.finalize();
    },
  });
  await new Promise((resolve, reject) =>
    docker.buildImage(context, { t: ref }, (error, stream) =>
      error ? reject(error) : docker.modem.followProgress(stream!, (failed) => (failed ? reject(failed) : resolve(undefined))),
    ),
  );
  const pushed = await docker.getImage(ref).push({ authconfig });
  await new Promise((resolve, reject) =>
    docker.modem.followProgress(pushed, (failed, events: { error?: string }[]) =>
      failed || events.some((event) => event.error) ? reject(failed ?? new Error(JSON.stringify(events))) : resolve(undefined),
    ),
  );
  await docker.getImage(ref).remove({ force: true });
}
