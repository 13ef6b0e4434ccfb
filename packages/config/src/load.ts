import { z } from "zod";
import { ConfigError } from "./config-error";
import { envSections, type Config } from "./schema";

type Env = Record<string, string | undefined>;

/**
 * Reads and validates every setting, creating nothing (the server's start-up makes what DATA_DIR holds). The only
 * place in the codebase that reads process.env. Every section's variables are checked before any section's
 * settings are made, so that one message names every bad variable.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const issues = new Map<string, z.core.$ZodIssue>();
  for (const section of envSections) {
    const checked = section.in.safeParse(env);
    // NODE_ENV is read by two sections: its error is named once
    if (!checked.success) for (const issue of checked.error.issues) issues.set(`${issue.path.join(".")}\0${issue.message}`, issue);
  }
  if (issues.size > 0) throw new ConfigError(`Invalid environment: ${z.prettifyError(new z.ZodError([...issues.values()]))}`);
  const settings = Object.assign({}, ...envSections.map((section) => section.parse(env))) as Config;
  return { ...settings, ...overrides };
}
