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
function checkName(name: string, where: string): void {
  if (!ENV_NAME.test(name)) throw new BadRequestError(`${where} "${name}" is not a valid environment variable name`);
  if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) {
    throw new BadRequestError(`${where} "${name}" is reserved: the platform sets it`);
  }
}

/** Secret references fill environment variables too: the same name rules, and no name a secret already sets. */
export function checkSecretReferences(references: { name: string }[] | null, secrets: Secret[]): void {
  const seen = new Set(secrets.map((secret) => secret.name));
  (references ?? []).forEach(({ name }, index) => {
    checkName(name, `secret_references[${index}].name`);
    if (seen.has(name)) throw new BadRequestError(`secret_references[${index}].name "${name}" is already set by another secret`);
    seen.add(name);
  });
}

export function resolveSecrets(requested: Secret[], previous: Secret[]): Secret[] {
  const seen = new Set<string>();
  return requested.map(({ name, value }, index) => {
    checkName(name, `secrets[${index}].name`);
    if (seen.has(name)) throw new BadRequestError(`secrets[${index}].name "${name}" is given more than once`);
    seen.add(name);
    if (value !== MASKED_VALUE) return { name, value };
    const kept = previous.find((secret) => secret.name === name);
    if (!kept) throw new BadRequestError(`secrets[${index}] "${name}" has the masked value but no stored value to keep`);
    return kept;
  });
}

export const maskSecrets = (secrets: Secret[]) => secrets.map(({ name }) => ({ name, value: MASKED_VALUE }));
