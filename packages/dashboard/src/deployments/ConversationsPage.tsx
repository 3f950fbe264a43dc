import { lazy, Suspense } from "react";
import { useSession } from "../api/context";
import { useDeploymentEndpoint } from "../hooks/useDeploymentEndpoint";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";

// Loaded on this page only: it brings the LangGraph SDK, most of the dashboard's weight.
const ConversationBrowser = lazy(() =>
  import("../conversations/ConversationBrowser").then((module) => ({ default: module.ConversationBrowser })),
);

/** A deployment's threads and runs, read from its agent server through the router (the deployment's stable URL). */
export function ConversationsPage({ id }: { id: string }) {
  const { credentials } = useSession();
  const { deployment, endpoint, error } = useDeploymentEndpoint(id);
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / <a href={hrefOf.deployment(id)}>{deployment?.name ?? id}</a> / Conversations
      </nav>
      <PageTitle title={`Conversations of ${deployment?.name ?? "the deployment"}`} />
      <ErrorNote error={error} />
      {endpoint?.kind === "not-deployed" && <p>This deployment has no URL yet: it has not been deployed.</p>}
      {endpoint?.kind === "refused" && (
        <p role="alert" className="error" data-testid="conversations-refused">
          {endpoint.reason}
        </p>
      )}
      {endpoint?.kind === "router" && (
        <>
          {endpoint.note && (
            <p role="note" data-testid="conversations-through-router">
              {endpoint.note}
            </p>
          )}
          <div data-testid="conversation-browser">
            <Suspense fallback={<p aria-live="polite">Loading…</p>}>
              <ConversationBrowser deploymentUrl={endpoint.url} apiKey={credentials.apiKey} tenantId={credentials.tenantId} />
            </Suspense>
          </div>
        </>
      )}
    </>
  );
}
