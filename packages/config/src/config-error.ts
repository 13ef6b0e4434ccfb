/** A setting the gateway cannot start with; its message names the setting (start-up prints it without a stack trace). */
export class ConfigError extends Error {}
