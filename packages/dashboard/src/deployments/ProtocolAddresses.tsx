import { useSession } from "../api/context";
import { deploymentEndpoint, loadRouterUrls } from "../api/platform";
import type { Deployment } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { CopyButton } from "../ui/CopyButton";

interface Served {
  mcp: boolean;
  a2a: boolean;
}

/**
 * Which of MCP and A2A the deployment's agent server serves: a family a project turns off (`http.disable_mcp`,
 * `http.disable_a2a`) is absent from its OpenAPI document. Asked through the platform's router only (where the page
 * may send the key); undefined when it cannot be asked (not serving, another origin).
 */
function useServed(deployment: Deployment): Served | undefined {
  const { credentials } = useSession();
  const { data } = usePolling(
    async () => {
      const endpoint = deploymentEndpoint(deployment, await loadRouterUrls());
      if (endpoint.kind !== "router") return undefined;
      const headers: Record<string, string> = { "X-Api-Key": credentials.apiKey };
      if (credentials.tenantId) headers["X-Tenant-Id"] = credentials.tenantId;
      const response = await fetch(`${endpoint.url}/openapi.json`, { headers, redirect: "error" });
      if (!response.ok) return undefined;
      const paths = Object.keys(((await response.json()) as { paths?: Record<string, unknown> }).paths ?? {});
      return { mcp: paths.includes("/mcp"), a2a: paths.some((path) => path.startsWith("/a2a/")) };
    },
    null,
    // The revision that serves decides: asked again when another one takes over.
    [credentials, deployment.id, deployment.active_revision_id],
  );
  return data;
}

const TURNED_OFF = (switch_: string) => (
  <span className="hint">
    turned off by the project (<code>{switch_}</code> in its <code>langgraph.json</code>)
  </span>
);

/**
 * Where a deployment's agent server speaks MCP and A2A, under its URL (the router passes both on, with the same
 * key check as the rest of the API), each with a copy button; a family the project turned off is said so. The A2A
 * addresses end with an assistant's id: their copy buttons copy them up to it.
 */
export function ProtocolAddresses({ url, deployment }: { url: string; deployment: Deployment }) {
  const base = url.replace(/\/+$/, "");
  const served = useServed(deployment);
  return (
    <>
      <dt>MCP</dt>
      <dd className="address" data-served={served?.mcp}>
        {served?.mcp === false ? (
          TURNED_OFF("http.disable_mcp")
        ) : (
          <>
            <code data-testid="mcp-url">{`${base}/mcp`}</code>
            <CopyButton value={`${base}/mcp`} label="Copy the MCP address" />
          </>
        )}
      </dd>
      {served?.a2a === false ? (
        <>
          <dt>A2A</dt>
          <dd>{TURNED_OFF("http.disable_a2a")}</dd>
        </>
      ) : (
        <>
          <dt>A2A agent card</dt>
          <dd className="address">
            <code data-testid="a2a-card-url">
              {`${base}/.well-known/agent-card.json?assistant_id=`}
              <var>assistant id</var>
            </code>
            <CopyButton
              value={`${base}/.well-known/agent-card.json?assistant_id=`}
              label="Copy the A2A agent card address (add the assistant id)"
            />
          </dd>
          <dt>A2A endpoint</dt>
          <dd className="address">
            <code data-testid="a2a-url">
              {`${base}/a2a/`}
              <var>assistant id</var>
            </code>
            <CopyButton value={`${base}/a2a/`} label="Copy the A2A endpoint (add the assistant id)" />
          </dd>
        </>
      )}
    </>
  );
}
