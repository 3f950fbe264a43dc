import { lazy, Suspense } from "react";
import { useSession } from "../api/context";
import { useDeploymentEndpoint } from "../hooks/useDeploymentEndpoint";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";

// Loaded on this page only: the LangGraph SDK and the graph drawing library.
const Studio = lazy(() => import("./Studio").then((module) => ({ default: module.Studio })));

/** A deployment's Studio: its assistants' graphs, run and watched through the router (the deployment's URL). */
export function StudioPage({ id }: { id: string }) {
  const { credentials } = useSession();
  const { deployment, endpoint, error } = useDeploymentEndpoint(id);
  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / <a href={hrefOf.deployment(id)}>{deployment?.name ?? id}</a> / Studio
      </nav>
      <PageTitle title={`Studio of ${deployment?.name ?? "the deployment"}`} />
      <ErrorNote error={error} />
      {endpoint?.kind === "not-deployed" && <p>This deployment has no URL yet: it has not been deployed.</p>}
      {endpoint?.kind === "refused" && (
        <p role="alert" className="error">
          {endpoint.reason}
        </p>
      )}
      {endpoint?.kind === "router" && (
        <Suspense fallback={<p aria-live="polite">Loading…</p>}>
          <Studio deploymentId={id} deploymentUrl={endpoint.url} apiKey={credentials.apiKey} tenantId={credentials.tenantId} />
        </Suspense>
      )}
    </>
  );
}
