import type { IncomingHttpHeaders } from "node:http";
import type { HeaderPatterns } from "../config/http-config.js";

/** Credentials: a wildcard never selects them, only their exact name in `includes` does. */
const CREDENTIAL_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "x-tenant-id",
  "x-service-key",
]);

export type HeaderSelector = (name: string) => boolean;

/** Header names matched by `patterns` (lower-case, `*` for any run of characters); exclusions win. */
export function headerSelector(patterns: HeaderPatterns, byDefault: HeaderSelector): HeaderSelector {
  const includes = patterns.includes?.map((pattern) => [pattern, globRegex(pattern)] as const);
  const excludes = patterns.excludes.map(globRegex);
  return (name) => {
    if (excludes.some((regex) => regex.test(name))) return false;
    if (!includes) return byDefault(name);
    if (CREDENTIAL_HEADERS.has(name)) return includes.some(([pattern]) => pattern === name);
    return includes.some(([, regex]) => regex.test(name));
  };
}

/** The request's headers `select` keeps, multiple values joined as HTTP joins them. */
export function selectHeaders(headers: IncomingHttpHeaders, select: HeaderSelector): Record<string, string> {
  const selected: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (value !== undefined && select(key)) selected[key] = Array.isArray(value) ? value.join(", ") : value;
  }
  return selected;
}

function globRegex(pattern: string): RegExp {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`);
}
