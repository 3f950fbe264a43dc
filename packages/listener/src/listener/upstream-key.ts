import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const FILE = "upstream.key";

/**
 * The key a deployment's agent servers require (their BERTH_API_KEY), kept in
 * the deployment's directory, which no sandbox sees: the router sends it, so
 * the servers, listening on the shared loopback, answer nobody else — not
 * another deployment that found their port. One per deployment, so both
 * revisions of a switch take the router's requests.
 */
export function upstreamKeyOf(deploymentDir: string): Promise<string> {
  return deploymentSecretOf(deploymentDir, FILE);
}

/** A random secret of the deployment kept in its directory under `name` (0600), made on first use. */
export async function deploymentSecretOf(deploymentDir: string, name: string): Promise<string> {
  const file = join(deploymentDir, name);
  try {
    const existing = (await readFile(file, "utf8")).trim();
    if (existing) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32).toString("base64url");
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}
