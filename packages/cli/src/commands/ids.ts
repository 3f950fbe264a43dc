import type { ControlPlaneClient, Deployment, Page, Revision } from "./client.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE = 100;

/**
 * A revision's full id from its id or any unique prefix of it (the dashboard
 * shows the first 8 characters). A full id is taken as given: the control
 * plane answers 404 for one that is not the deployment's.
 */
export async function revisionIdOf(client: ControlPlaneClient, deployment: Deployment, ref: string): Promise<string> {
  const prefix = ref.trim().toLowerCase();
  if (UUID.test(prefix)) return prefix;
  if (!/^[0-9a-f-]+$/.test(prefix)) throw new Error(`"${ref}" is not a revision id or the start of one`);
  const matches = (await allRevisions(client, deployment.id)).filter((revision) => revision.id.startsWith(prefix));
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new Error(`${deployment.name} has no revision whose id starts with "${ref}"`);
  const candidates = matches.map((revision) => `  ${revision.id}  ${revision.status}  ${revision.created_at}`).join("\n");
  throw new Error(
    `"${ref}" is the start of ${matches.length} revision ids of ${deployment.name}; give more characters:\n${candidates}`,
  );
}

/** Every revision of the deployment, newest first, page by page. */
async function allRevisions(client: ControlPlaneClient, deploymentId: string): Promise<Revision[]> {
  const revisions: Revision[] = [];
  for (;;) {
    const page = await client.request<Page<Revision>>(
      "GET",
      `/v2/deployments/${deploymentId}/revisions?limit=${PAGE}&offset=${revisions.length}`,
    );
    revisions.push(...page.resources);
    if (page.resources.length < PAGE) return revisions;
  }
}
