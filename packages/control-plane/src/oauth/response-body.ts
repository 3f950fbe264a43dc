import { OAuthProviderError, OAuthResponseError } from "./errors.js";

export type ResponseFields = Record<string, unknown>;

/**
 * A provider's answer as fields: JSON, or form-encoded as a few older
 * providers still answer token requests. Null when the body is neither.
 */
export async function readFields(response: Response): Promise<ResponseFields | null> {
  const type = response.headers.get("content-type")?.split(";")[0].trim().toLowerCase() ?? "";
  const text = await response.text();
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as ResponseFields) : null;
  } catch {
    return null;
  }
}

/** The provider's OAuth error in `fields`, if any (some providers answer errors with HTTP 200). */
export function providerError(fields: ResponseFields | null, status: number, endpoint: string): OAuthProviderError | null {
  if (typeof fields?.error !== "string" || fields.error === "") return null;
  const description = typeof fields.error_description === "string" ? fields.error_description : null;
  return new OAuthProviderError(fields.error, description, status, endpoint);
}

/** Reads a successful answer's fields, or throws the provider's error (or why the answer is unusable). */
export async function expectFields(response: Response, endpoint: string): Promise<ResponseFields> {
  const fields = await readFields(response);
  const refused = providerError(fields, response.status, endpoint);
  if (refused) throw refused;
  if (response.status < 200 || response.status > 299)
    throw new OAuthResponseError(`${endpoint} answered HTTP ${response.status}`);
  if (!fields) throw new OAuthResponseError(`${endpoint} answered no JSON object`);
  return fields;
}
