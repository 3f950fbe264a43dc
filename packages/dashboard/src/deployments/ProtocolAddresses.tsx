/**
 * Where a deployment's agent server speaks MCP and A2A, under its URL (the router passes both on, with the same
 * key check as the rest of the API). A project may turn either off (`http.disable_mcp`, `http.disable_a2a`).
 */
export function ProtocolAddresses({ url }: { url: string }) {
  const base = url.replace(/\/+$/, "");
  return (
    <>
      <dt>MCP</dt>
      <dd>
        <code data-testid="mcp-url">{`${base}/mcp`}</code>
      </dd>
      <dt>A2A agent card</dt>
      <dd>
        <code data-testid="a2a-card-url">
          {`${base}/.well-known/agent-card.json?assistant_id=`}
          <var>assistant id</var>
        </code>
      </dd>
      <dt>A2A endpoint</dt>
      <dd>
        <code data-testid="a2a-url">
          {`${base}/a2a/`}
          <var>assistant id</var>
        </code>
      </dd>
    </>
  );
}
