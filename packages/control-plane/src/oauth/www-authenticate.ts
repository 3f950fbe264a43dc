/**
 * The `resource_metadata` parameter of a WWW-Authenticate challenge (RFC 9728
 * §5.1), e.g. `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource"`.
 * Null when the header has none.
 */
export function resourceMetadataFromChallenge(header: string | null): string | null {
  if (!header) return null;
  const match = /(?:^|[\s,])resource_metadata\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/i.exec(header);
  if (!match) return null;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2];
}
