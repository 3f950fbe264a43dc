import { ForbiddenError } from "@berth/service-kit";
import type { Caller } from "../api-keys/authenticate.js";

/**
 * Who an Auth Service request acts for (docs/auth-service.md). Berth's users
 * are its API keys: a workspace key is one user, whose id is `key:<key id>`.
 * A deployment's Auth Service key and admin keys act for the users they name
 * (`user_id`: whatever identifies the run's user, such as its custom-auth
 * identity); no other key may name a user but itself.
 */
export interface AuthUser {
  tenantId: string;
  /** null: a deployment key that named no user (only agent connections can answer it). */
  userId: string | null;
  /** May revoke every Slack token of the workspace. */
  isAdmin: boolean;
  /** A deployment or admin key: it may name users other than itself. */
  actsForOthers: boolean;
  /**
   * A deployment's Auth Service key: the deployment it is scoped to. It gets
   * the tokens its own consents stored, the agent connections made for it,
   * and waits on its own consents only; every user's tokens only of providers
   * shared across deployments.
   */
  deploymentId: string | null;
}

export const ownUserId = (caller: Pick<Caller, "apiKeyId">) => `key:${caller.apiKeyId}`;

export function authUserOf(caller: Caller, named?: string | null): AuthUser {
  const own = ownUserId(caller);
  const actsForOthers = caller.authServiceOnly || caller.allTenants;
  if (named && named !== own && !actsForOthers) {
    throw new ForbiddenError("This API key acts for its own user only: user_id may be given by deployment and admin keys");
  }
  const userId = named || (caller.authServiceOnly ? null : own);
  const deploymentId = caller.authServiceOnly ? caller.deploymentId : null;
  return { tenantId: caller.tenantId, userId, isAdmin: caller.allTenants, actsForOthers, deploymentId };
}
