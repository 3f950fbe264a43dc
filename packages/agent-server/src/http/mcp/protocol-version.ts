/**
 * The MCP protocol versions this server speaks, newest first. Every one of them suits a stateless server of tools
 * with JSON replies; what changed between them (batches, the `MCP-Protocol-Version` header, structured output) is
 * either unused here or optional.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

/** The version `initialize` answers: the client's when this server speaks it, else the newest (as MCP prescribes). */
export function negotiatedProtocolVersion(requested: string | undefined): string {
  const supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  return requested && supported.includes(requested) ? requested : SUPPORTED_PROTOCOL_VERSIONS[0];
}

/** Whether an `MCP-Protocol-Version` request header is acceptable (absent is: older clients do not send it). */
export function acceptsProtocolVersionHeader(header: string | string[] | undefined): boolean {
  if (header === undefined) return true;
  const supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  return typeof header === "string" && supported.includes(header.trim());
}
