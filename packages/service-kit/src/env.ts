/** An environment to read settings from (process.env by default). */
export type Env = Record<string, string | undefined>;

/** A setting's value is not one the variable accepts: the message names the variable and what it accepts. */
export class EnvError extends Error {
  override name = "EnvError";
}

const TRUE = ["1", "true", "yes", "on"];
const FALSE = ["0", "false", "no", "off"];

/** The variable's value, trimmed; undefined when unset or empty (the default applies). */
function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** A boolean: `1/true/yes/on` or `0/false/no/off`, any case; anything else is an error, never a silent default. */
export function envBoolean(name: string, fallback: boolean, env: Env = process.env): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (TRUE.includes(value)) return true;
  if (FALSE.includes(value)) return false;
  throw new EnvError(`${name} must be one of ${[...TRUE, ...FALSE].join(", ")}, got "${env[name]}"`);
}

export interface NumberRule {
  min?: number;
  max?: number;
  /** Whole numbers only. */
  integer?: boolean;
}

/** A number within the rule's bounds (seconds may be fractional unless `integer`). */
export function envNumber(name: string, fallback: number, rule: NumberRule = {}, env: Env = process.env): number {
  const text = raw(env, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  const kind = rule.integer ? "an integer" : "a number";
  const bounds = [rule.min !== undefined ? `>= ${rule.min}` : "", rule.max !== undefined ? `<= ${rule.max}` : ""].filter(Boolean);
  const valid =
    Number.isFinite(value) &&
    (!rule.integer || Number.isInteger(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max);
  if (!valid) throw new EnvError(`${name} must be ${kind}${bounds.length ? ` ${bounds.join(" and ")}` : ""}, got "${env[name]}"`);
  return value;
}

/** One of the allowed words, any case. */
export function envOneOf<T extends string>(name: string, allowed: readonly T[], fallback: T, env: Env = process.env): T {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new EnvError(`${name} must be one of ${allowed.join(", ")}, got "${env[name]}"`);
  }
  return value as T;
}
