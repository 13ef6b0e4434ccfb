// CONTRACT 15: `npm start` reads the project root's `.env` when present; a variable already set in the process
// environment wins. Loaded into process.env (Node's own parser), so everything the gateway starts sees it too
// (the embedded FerretDB's GOGC, for one).
import { existsSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./config-error";

/**
 * Loads `ENV_FILE` (default `<rootDir>/.env`; empty: none) into process.env without overriding what is set.
 * Returns the file read, if any.
 */
export function loadEnvFile(rootDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = env.ENV_FILE ?? path.join(rootDir, ".env");
  if (file === "" || !existsSync(file)) return undefined;
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new ConfigError(`ENV_FILE ${file} could not be read: ${(err as Error).message}`);
  }
  return file;
}
