import type { AuthenticateResult } from "../../graphs/auth-module.js";
import type { AuthUser } from "../../services/authorization.js";

export type RequestUser = AuthUser;

/** Studio's requests, marked `x-auth-scheme: langsmith`, as the reference server names their user. */
export const STUDIO_USER: RequestUser = {
  kind: "StudioUser",
  identity: "langgraph-studio-user",
  permissions: [],
  is_authenticated: true,
  display_name: "langgraph-studio-user",
};

/** The user an authenticate handler (or a built-in scheme) returned, with the fields the SDK's BaseUser has. */
export function toRequestUser(result: AuthenticateResult): RequestUser {
  if (typeof result === "string") {
    if (result === "") throw new TypeError("authenticate returned an empty identity");
    return { identity: result, permissions: [], is_authenticated: true, display_name: result };
  }
  if (!result || typeof result !== "object" || typeof result.identity !== "string" || result.identity === "") {
    throw new TypeError("authenticate must return an identity string or an object with a string identity");
  }
  const permissions = Array.isArray(result.permissions) ? result.permissions.filter((p) => typeof p === "string") : [];
  return {
    ...result,
    identity: result.identity,
    permissions,
    is_authenticated: typeof result.is_authenticated === "boolean" ? result.is_authenticated : true,
    display_name: typeof result.display_name === "string" ? result.display_name : result.identity,
  };
}
