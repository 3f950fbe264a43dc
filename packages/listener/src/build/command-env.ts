import { dirname, join } from "node:path";

/**
 * Variables copied from the listener's environment when set. They describe the
 * machine (locale, temp dir, time zone) or how it reaches the network (proxies,
 * extra CA certificates), which an install needs; none of them is a Berth secret.
 */
const PASSED_THROUGH = [
  "LANG",
  "LC_ALL",
  "TZ",
  "TMPDIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
];

/**
 * The complete environment of a build command. The listener's own environment
 * is NOT inherited: it may hold DATABASE_URL, BERTH_SECRETS_KEY,
 * BERTH_ADMIN_API_KEY, cloud credentials... that a project's install scripts
 * (arbitrary code from the upload and its dependencies) must not read.
 *
 * - PATH: the running Node's directory first (so `node`, `npm`, `npx` and
 *   `corepack` match the Node that serves the project), then the listener's PATH.
 * - HOME: a directory under the cache, not the listener's home, so the
 *   operator's ~/.npmrc (registry tokens), ~/.ssh and ~/.gitconfig stay out of
 *   reach. A project needing a private registry ships its own `.npmrc`.
 * - npm's and yarn's caches under the cache directory (pnpm's store and
 *   corepack's downloads default to places under HOME, so they land there
 *   too); CI=true keeps every tool non-interactive. Sandboxed builds pass
 *   their deployment's /tmp as the cache directory (see sandbox/).
 * - The variables of PASSED_THROUGH, when set.
 */
export function commandEnv(cacheDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const inherited = process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  return {
    ...env,
    PATH: `${dirname(process.execPath)}:${inherited}`,
    HOME: join(cacheDir, "_home"),
    CI: "true",
    npm_config_cache: join(cacheDir, "_npm"),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    YARN_CACHE_FOLDER: join(cacheDir, "_yarn"),
    ...extra,
  };
}
