import { BadRequestError } from "@berth/service-kit";

export interface Secret {
  name: string;
  value: string;
}

/** What every secret value reads as in a response. */
export const MASKED_VALUE = "********";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables the platform sets itself when it runs a deployment. */
const RESERVED_NAMES = new Set(["PORT", "HOST", "DATABASE_URL", "REDIS_URL", "NODE_OPTIONS", "PATH"]);
const RESERVED_PREFIXES = ["BERTH_", "LANGSMITH_", "LANGCHAIN_"];

/**
 * The secrets a request asks for, checked; a value sent as the mask keeps the
 * previous value of that name (so a client may send back what it read).
 */
export function resolveSecrets(requested: Secret[], previous: Secret[]): Secret[] {
  const seen = new Set<string>();
  return requested.map(({ name, value }, index) => {
    if (!ENV_NAME.test(name)) {
      throw new BadRequestError(`secrets[${index}].name "${name}" is not a valid environment variable name`);
    }
    if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      throw new BadRequestError(`secrets[${index}].name "${name}" is reserved: the platform sets it`);
    }
    if (seen.has(name)) throw new BadRequestError(`secrets[${index}].name "${name}" is given more than once`);
    seen.add(name);
    if (value !== MASKED_VALUE) return { name, value };
    const kept = previous.find((secret) => secret.name === name);
    if (!kept) throw new BadRequestError(`secrets[${index}] "${name}" has the masked value but no stored value to keep`);
    return kept;
  });
}

export const maskSecrets = (secrets: Secret[]) => secrets.map(({ name }) => ({ name, value: MASKED_VALUE }));
