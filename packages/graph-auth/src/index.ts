import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";

/*
 * Graph code served by a Berth deployment gets its users' OAuth tokens here
 * (docs/auth-service.md). The deployment's environment names the Auth Service
 * (BERTH_AUTH_SERVICE_URL) and a key valid only for asking it for tokens
 * (BERTH_AUTH_SERVICE_KEY). Berth resolves imports of this package to its own
 * copy, so a project needs no install of it.
 */

export interface TokenRequest {
  /** The provider's provider_id, as the workspace configured it. */
  provider: string;
  scopes: string[];
  /** Default: the run's user (`langgraph_auth_user_id`, else `user_id`, of the run's configurable). */
  userId?: string;
  /** An agent's bound token answers when the user has none. Default: the run's assistant_id. */
  agentId?: string;
  /** Ask for a new consent though a token is stored. */
  forceNew?: boolean;
}

/** What the run's interrupt carries when the user must consent: the client shows `url`, then resumes the run. */
export interface ConsentRequired {
  type: "berth.auth_required";
  provider: string;
  /** Where the user gives consent. */
  url: string;
  auth_id: string;
  /** "pending", or "token_expired" when the stored token could not be refreshed. */
  status: string;
}

export class AuthServiceError extends Error {
  override readonly name = "AuthServiceError";
}

interface Answer {
  status: "completed" | "pending" | "connection_required" | "token_expired";
  url: string | null;
  auth_id: string | null;
  token: string | null;
}

function configurableString(config: LangGraphRunnableConfig | undefined, name: string): string | undefined {
  const value = config?.configurable?.[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

async function authenticate(request: TokenRequest, config: LangGraphRunnableConfig | undefined): Promise<Answer> {
  const base = process.env.BERTH_AUTH_SERVICE_URL;
  const key = process.env.BERTH_AUTH_SERVICE_KEY;
  if (!base || !key) {
    throw new AuthServiceError(
      "No Auth Service here: BERTH_AUTH_SERVICE_URL and BERTH_AUTH_SERVICE_KEY are set on Berth deployments",
    );
  }
  const userId = request.userId ?? configurableString(config, "langgraph_auth_user_id") ?? configurableString(config, "user_id");
  const agentId = request.agentId ?? configurableString(config, "assistant_id");
  const response = await fetch(`${base.replace(/\/+$/, "")}/v2/auth/authenticate`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({
      provider: request.provider,
      scopes: request.scopes,
      user_id: userId ?? null,
      agent_id: agentId ?? null,
      force_new: request.forceNew ?? false,
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json().catch(() => null)) as (Answer & { detail?: unknown }) | null;
  if (!response.ok || !body) {
    throw new AuthServiceError(`The Auth Service answered ${response.status}: ${JSON.stringify(body?.detail ?? body)}`);
  }
  return body;
}

/**
 * The access token for the run's user (or agent). When the user must consent
 * first, the run is interrupted with a ConsentRequired value; once the client
 * resumes it (after the user consented), the token is returned. Call it inside
 * a node: the node runs again from its start when the run resumes.
 */
export async function getAccessToken(config: LangGraphRunnableConfig | undefined, request: TokenRequest): Promise<string> {
  const first = await authenticate(request, config);
  if (first.status === "completed" && first.token) return first.token;
  if (first.status === "connection_required") {
    throw new AuthServiceError(
      `No user is named and agent ${request.agentId ?? "of this run"} has no ${request.provider} token bound`,
    );
  }
  const required: ConsentRequired = {
    type: "berth.auth_required",
    provider: request.provider,
    url: first.url ?? "",
    auth_id: first.auth_id ?? "",
    status: first.status,
  };
  interrupt(required);
  // Resumed: the consent should have stored the token.
  const after = await authenticate({ ...request, forceNew: false }, config);
  if (after.status === "completed" && after.token) return after.token;
  throw new AuthServiceError(`The run was resumed, but the user has not given consent for ${request.provider} yet`);
}
