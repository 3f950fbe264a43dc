import { deployErrorOf } from "../placement.js";
import type { RevisionPreparation } from "../../revision-preparation.js";
import { Abandoned, type RevisionWork } from "../../revision-work.js";
import type { ClusterImages, PushedImage } from "./cluster-images.js";

/** How getting a built revision's image into the registry ended. */
export type PushOutcome = { kind: "pushed"; image: PushedImage } | { kind: "failed" };

/**
 * The image a built revision (internal_source, repo_host) runs on a cluster:
 * built, or found built, as on a docker listener (the same Dockerfile, build
 * key and reuse), then pushed to the listener's registry unless a revision of
 * the same source pushed it already. Failed once the revision was moved to a
 * failed status, with the reason logged.
 */
export async function pushedBuildOf(
  work: RevisionWork,
  preparation: RevisionPreparation,
  images: ClusterImages,
): Promise<PushOutcome> {
  const { assignment, revision, buildLog, move, signal } = work;
  const unavailable = images.unavailable(revision.source);
  if (unavailable) {
    await move("DEPLOY_FAILED", unavailable);
    return { kind: "failed" };
  }
  const outcome = await preparation.buildSource(work, images.builds(assignment.id));
  if (outcome.kind !== "built") return { kind: "failed" };
  const built = outcome.build;
  if (built.kind === "pushed") {
    await move("AWAITING_DEPLOY", `${built.pushed.ref} is in the registry already: nothing to push`);
    return { kind: "pushed", image: built.pushed };
  }
  let pushed: PushedImage;
  try {
    pushed = await images.push(assignment.id, outcome.key, built.image, buildLog, signal);
  } catch (error) {
    if (signal.aborted) throw new Abandoned();
    const reason = deployErrorOf(error, "Pushing the image failed").message;
    buildLog({ level: "error", message: reason });
    await move("DEPLOY_FAILED", reason);
    return { kind: "failed" };
  }
  await move("AWAITING_DEPLOY", `Pushed ${pushed.ref}`);
  return { kind: "pushed", image: pushed };
}
