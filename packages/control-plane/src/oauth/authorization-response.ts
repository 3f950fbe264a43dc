import { flowIdFromState } from "./authorization-request.js";
import { OAuthError } from "./errors.js";

/** What the provider's redirect to our callback carries (RFC 6749 §4.1.2). */
export type AuthorizationCallback =
  | { outcome: "code"; code: string; state: string | null; flow_id: string | null }
  | {
      outcome: "error";
      /** E.g. `access_denied` when the user declined. */
      error: string;
      error_description: string | null;
      state: string | null;
      flow_id: string | null;
    };

/**
 * Reads the callback's query. The caller finds the flow by `flow_id`, then must
 * check that `state` equals the flow's state before exchanging the code.
 */
export function readAuthorizationCallback(query: URLSearchParams): AuthorizationCallback {
  const state = query.get("state") || null;
  const flowId = state === null ? null : flowIdFromState(state);
  const error = query.get("error");
  if (error) {
    const description = query.get("error_description") || null;
    return { outcome: "error", error, error_description: description, state, flow_id: flowId };
  }
  const code = query.get("code");
  if (!code) throw new OAuthError("the authorization callback carries neither a code nor an error");
  return { outcome: "code", code, state, flow_id: flowId };
}
