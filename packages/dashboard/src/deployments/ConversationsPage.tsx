import { lazy, Suspense } from "react";
import { useSession } from "../api/context";
import type { Deployment } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";

// Loaded on this page only: it brings the LangGraph SDK, most of the dashboard's weight.
const ConversationBrowser = lazy(() =>
  import("../conversations/ConversationBrowser").then((module) => ({ default: module.ConversationBrowser })),
);

/** A deployment's threads and runs, read from its agent server through the router (the deployment's URL). */
export function ConversationsPage({ id }: { id: string }) {
  const { api, credentials } = useSession();
  // Read once: a deployment's URL does not change.
  const { data: deployment, error } = usePolling(() => api.get<Deployment>(`v2/deployments/${id}`), null, [api, id]);
  const url = deployment?.source_config.custom_url;
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / <a href={hrefOf.deployment(id)}>{deployment?.name ?? id}</a> / Conversations
      </nav>
      <PageTitle title={`Conversations of ${deployment?.name ?? "the deployment"}`} />
      <ErrorNote error={error} />
      {deployment && !url && <p>This deployment has no URL yet: it has not been deployed.</p>}
      {url && (
        <div data-testid="conversation-browser">
          <Suspense fallback={<p aria-live="polite">Loading…</p>}>
            <ConversationBrowser deploymentUrl={url} apiKey={credentials.apiKey} tenantId={credentials.tenantId} />
          </Suspense>
        </div>
      )}
    </>
  );
}
