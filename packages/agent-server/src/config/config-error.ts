/** A project configuration Berth cannot serve: the message says what to fix. */
export class ConfigError extends Error {}
