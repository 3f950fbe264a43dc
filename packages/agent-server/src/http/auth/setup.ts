import type { AuthSettings } from "../../config/auth-config.js";
import { ConfigError } from "../../config/config-error.js";
import { type AuthHandlers, AuthLoadError, loadAuthHandlers } from "../../graphs/auth-module.js";
import type { Logger } from "../../logger.js";
import { type BuiltinAuthenticator, builtinAuthenticator } from "./builtin-schemes.js";

/** How the server authenticates users: the project's handler, or the built-in schemes; undefined when it does not. */
export interface AuthenticationSetup {
  authenticate?: AuthHandlers["authenticate"];
  builtin?: BuiltinAuthenticator;
  disableStudioAuth: boolean;
}

/**
 * Loads `auth.path` and the built-in schemes the environment turns on.
 * Resource handlers (`auth.on(...)`) are not applied yet: a project that
 * registers some does not start, since serving it would show every user's
 * resources to every other, unless `allowUnenforced` says a gateway does it.
 */
export async function loadAuthentication(
  settings: AuthSettings,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  allowUnenforced: boolean,
): Promise<AuthenticationSetup | undefined> {
  let handlers: AuthHandlers | undefined;
  if (settings.module) {
    try {
      handlers = await loadAuthHandlers(settings.module);
    } catch (error) {
      if (error instanceof AuthLoadError) throw new ConfigError(error.message);
      throw error;
    }
  }
  const events = Object.keys(handlers?.callbacks ?? {});
  if (events.length > 0) {
    const message =
      `the project's auth registers resource handlers (${events.join(", ")}), which Berth does not apply yet: ` +
      "every authenticated user would see every other user's threads";
    if (!allowUnenforced) {
      throw new ConfigError(
        `${message}. Pass --allow-unenforced-auth (or set BERTH_ALLOW_UNENFORCED_AUTH=1) to serve without them, e.g. behind a gateway that authorizes`,
      );
    }
    logger.warn(`${message} (--allow-unenforced-auth)`);
  }
  const builtin = handlers?.authenticate ? undefined : builtinAuthenticator(env);
  if (handlers?.authenticate && builtinAuthenticator(env)) {
    logger.warn("the project's authenticate handler is used: the built-in schemes (BERTH_AUTH_*) are ignored");
  }
  if (!handlers?.authenticate && !builtin) return undefined;
  return { authenticate: handlers?.authenticate, builtin, disableStudioAuth: settings.disableStudioAuth };
}
