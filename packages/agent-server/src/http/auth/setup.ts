import type { AuthSettings } from "../../config/auth-config.js";
import { ConfigError } from "../../config/config-error.js";
import { type AuthHandlers, AuthLoadError, loadAuthHandlers } from "../../graphs/auth-module.js";
import type { Logger } from "../../logger.js";
import { Authorizer } from "../../services/authorization.js";
import type { BuiltinAuthSettings } from "../../config/settings.js";
import { type BuiltinAuthenticator, builtinAuthenticator } from "./builtin-schemes.js";

/** How the server authenticates users (the project's handler, or the built-in schemes) and authorizes what they do. */
export interface AuthenticationSetup {
  authenticate?: AuthHandlers["authenticate"];
  builtin?: BuiltinAuthenticator;
  authorizer: Authorizer;
  disableStudioAuth: boolean;
}

/** Loads `auth.path` and the built-in schemes the environment turns on; undefined when the server authenticates nobody. */
export async function loadAuthentication(
  settings: AuthSettings,
  builtinSettings: BuiltinAuthSettings,
  logger: Logger,
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
  const builtin = handlers?.authenticate ? undefined : builtinAuthenticator(builtinSettings);
  if (handlers?.authenticate && builtinAuthenticator(builtinSettings)) {
    logger.warn("the project's authenticate handler is used: the built-in schemes (BERTH_AUTH_*) are ignored");
  }
  const authorizer = new Authorizer(handlers?.callbacks ?? {});
  if (!handlers?.authenticate && !builtin) {
    if (authorizer.enabled) {
      // As the reference server: handlers authorize an authenticated user, and without authentication there is none.
      logger.warn(
        "the project's auth registers resource handlers (auth.on) but nothing authenticates users (no authenticate handler, " +
          "no BERTH_AUTH_* scheme): the handlers never run and every client reaches every resource",
      );
    }
    return undefined;
  }
  return { authenticate: handlers?.authenticate, builtin, authorizer, disableStudioAuth: settings.disableStudioAuth };
}
