import { DeployError } from "../compute/types.js";
import type { AssignedRevision } from "@berth/listener-protocol";
import type { ClusterImages, PushedImage } from "./cluster-images.js";
import type { RevisionPreparation } from "./revision-preparation.js";
import { Abandoned, type LogWriter, type Move } from "./revision-work.js";

/** What building a revision for a cluster works with. */
export interface ClusterBuildWork {
  preparation: RevisionPreparation;
  images: ClusterImages;
  buildLog: LogWriter;
  move: Move;
  signal: AbortSignal;
}

/**
 * The image a built revision (internal_source, repo_host) runs on a cluster:
 * built, or found built, as on a docker listener (the same Dockerfile, build
 * key and reuse), then pushed to the listener's registry unless a revision of
 * the same source pushed it already. Null once the revision failed (moved, logged).
 */
export async function pushedBuildOf(
  deploymentId: string,
  revision: AssignedRevision,
  { preparation, images, buildLog, move, signal }: ClusterBuildWork,
): Promise<PushedImage | null> {
  const unavailable = images.unavailable(revision.source);
  if (unavailable) {
    await move("DEPLOY_FAILED", unavailable);
    return null;
  }
  const prepared = await preparation.buildSource(revision, buildLog, move, signal);
  if (!prepared) return null;
  if (prepared.pushed) {
    await move("AWAITING_DEPLOY", `${prepared.pushed.ref} is in the registry already: nothing to push`);
    return prepared.pushed;
  }
  let pushed: PushedImage;
  try {
    pushed = await images.push(deploymentId, prepared.key!, prepared.image!, buildLog, signal);
  } catch (error) {
    if (signal.aborted) throw new Abandoned();
    const reason = error instanceof DeployError ? error.message : `Pushing the image failed: ${(error as Error).message}`;
    buildLog({ level: "error", message: reason });
    await move("DEPLOY_FAILED", reason);
    return null;
  }
  await move("AWAITING_DEPLOY", `Pushed ${pushed.ref}`);
  return pushed;
}
