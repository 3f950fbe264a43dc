import { parseArgs } from "node:util";
import { parsedOrError } from "../process.js";
import { connectionFromEnv } from "../settings.js";
import { LOGIN_USAGE, LOGOUT_USAGE } from "../usage.js";
import { ApiError, CONNECTION_OPTIONS, ControlPlaneClient, DEFAULT_URL, withoutSlash } from "./client.js";
import { configFilePath, removeSavedLogin, writeSavedLogin } from "./config-file.js";
import { fail, failWith, printJson } from "./output.js";
import { readSecretLine } from "./secret-input.js";

/**
 * `berth login`: checks a key against the control plane, then saves url, key
 * and tenant for every later command (below flags and environment).
 */
export async function loginCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() => parseArgs({ args: argv, options: CONNECTION_OPTIONS }));
  if (parsed instanceof Error) return fail("login", `${parsed.message}\n\n${LOGIN_USAGE}`, 2);
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(LOGIN_USAGE);
    return 0;
  }
  const fromEnv = connectionFromEnv();
  const url = withoutSlash(values.url ?? fromEnv.url ?? DEFAULT_URL);
  const tenant = values.tenant ?? fromEnv.tenantId;
  let apiKey = values["api-key"];
  if (apiKey === undefined) {
    try {
      apiKey = await readSecretLine(`API key for ${url}: `);
    } catch (error) {
      return failWith("login", error);
    }
  }
  if (!apiKey) return fail("login", "no API key: pass --api-key, type it at the prompt or pipe it on stdin", 2);

  // A cheap call that needs the key (and the workspace, for a key that reaches several): nothing is saved unless it answers.
  const client = new ControlPlaneClient({ url, apiKey, tenant });
  try {
    await client.request("GET", "/v2/deployments?limit=1");
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      return fail("login", `${url} refused the key (${error.status} ${error.detail}); nothing was saved`);
    }
    return failWith("login", error);
  }
  const configFile = writeSavedLogin({ url, api_key: apiKey, tenant_id: tenant ?? null });
  if (values.json) printJson({ url, tenant_id: tenant ?? null, config_file: configFile });
  else process.stdout.write(`logged in to ${url}${tenant ? ` (workspace ${tenant})` : ""}; saved in ${configFile}\n`);
  return 0;
}

/** `berth logout`: forgets what `berth login` saved. */
export async function logoutCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() =>
    parseArgs({ args: argv, options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } } }),
  );
  if (parsed instanceof Error) return fail("logout", `${parsed.message}\n\n${LOGOUT_USAGE}`, 2);
  if (parsed.values.help) {
    process.stdout.write(LOGOUT_USAGE);
    return 0;
  }
  const configFile = configFilePath();
  const removed = removeSavedLogin();
  if (parsed.values.json) printJson({ removed, config_file: configFile });
  else process.stdout.write(removed ? `removed ${configFile}\n` : `not logged in (no ${configFile})\n`);
  return 0;
}
