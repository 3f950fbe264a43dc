import type { RevisionCause, RevisionEvent } from "@berth/control-plane";
import { terminalText } from "@berth/service-kit";

const CAUSES: Record<RevisionCause, string> = {
  create: "new deployment",
  patch: "update",
  rebuild: "rebuild requested",
  redeploy: "redeploy",
  push: "git push",
};

const FAILED = ["CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED"];

/** A status message on one line, cut where a terminal line would wrap too often. */
function brief(message: string): string {
  const line = terminalText(message).split("\n", 1)[0]!.trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/**
 * The terminal line of a revision event, or undefined for a step not worth
 * a line (queueing between the steps that are). A deployment's build output
 * reaches it (a failed build's reason quotes it): it is printed as terminalText.
 */
export function revisionLine(event: RevisionEvent, at = new Date()): string | undefined {
  const what = describe(event);
  if (what === undefined) return undefined;
  const time = at.toTimeString().slice(0, 8);
  return terminalText(`${time} ${event.deployment.name}: revision ${event.revision.number} ${what}`);
}

function describe(event: RevisionEvent): string | undefined {
  if (event.kind === "created") {
    // Its status message tells the API client what to send; the terminal only that it waits.
    const waiting = event.status === "CREATING" ? "; waiting for its source" : "";
    return `created (${CAUSES[event.cause]}), id ${event.revision.id}${waiting}`;
  }
  const { status, previous, message } = event;
  if (status === "BUILDING") return "building";
  if (status === "DEPLOYING") return "deploying";
  // A serving revision's compute crashed or came back: the message says which.
  if (status === "DEPLOYED" && previous === "DEPLOYED") return `serving: ${brief(message)}`;
  if (status === "DEPLOYED") return `deployed${event.url ? ` at ${event.url}` : ""}`;
  if (FAILED.includes(status)) return `failed (${status}): ${brief(message)}`;
  if (status === "INTERRUPTED") return `interrupted: ${brief(message)}`;
  if (status === "UNKNOWN") return `status unknown: ${brief(message)}`;
  return undefined;
}
