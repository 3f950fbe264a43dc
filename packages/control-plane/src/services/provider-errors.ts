import { BadGatewayError, BadRequestError } from "@berth/service-kit";
import { OAuthError, OAuthUrlError } from "../oauth/errors.js";

/**
 * A call to an OAuth provider on a request's behalf: a URL the provider's
 * configuration makes unusable is the workspace's mistake (400); a provider
 * that fails or answers nonsense is a bad gateway (502), never a 500.
 */
export async function withProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof OAuthUrlError) throw new BadRequestError(`The provider's configuration: ${error.message}`);
    if (error instanceof OAuthError) throw new BadGatewayError(`The OAuth provider: ${error.message}`);
    throw error;
  }
}
