import { CopyButton } from "../ui/CopyButton";

/**
 * Where a deployment's agent server speaks MCP and A2A, under its URL (the router passes both on, with the same
 * key check as the rest of the API). A project may turn either off (`http.disable_mcp`, `http.disable_a2a`).
 * The A2A addresses end with an assistant's id: their copy buttons copy them up to it.
 */
export function ProtocolAddresses({ url }: { url: string }) {
  const base = url.replace(/\/+$/, "");
  return (
    <>
      <dt>MCP</dt>
      <dd className="address">
        <code data-testid="mcp-url">{`${base}/mcp`}</code>
        <CopyButton value={`${base}/mcp`} label="Copy the MCP address" />
      </dd>
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
  );
}
