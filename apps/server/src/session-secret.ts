// Start-up's part of the settings: what DATA_DIR keeps for a server that was given no SESSION_SECRET.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { ConfigError, SESSION_SECRET_MIN_LENGTH, type Config } from "@gw/config";
import { writeOnce } from "./write-once";

/**
 * The settings with a session secret: SESSION_SECRET's, else (outside production, where it is required) a generated
 * one kept under DATA_DIR so that sessions survive restarts (written once: two servers starting on one fresh DATA_DIR
 * keep the same secret, or the second would refuse the first's sessions). A file too short to be a
 * secret (empty) stops the start: every login sealed its session with it and was a 500.
 */
export function withSessionSecret(config: Config): Config {
  if (config.sessionSecret) return config;
  const file = path.join(config.dataDir, "session-secret");
  const secret = writeOnce(file, () => randomBytes(32).toString("hex")).trim();
  if (secret.length < SESSION_SECRET_MIN_LENGTH) {
    throw new ConfigError(`SESSION_SECRET is unset and ${file} holds ${secret.length} characters, fewer than the ${SESSION_SECRET_MIN_LENGTH} a session secret needs: delete that file (a new secret is generated) or set SESSION_SECRET`);
  }
  return { ...config, sessionSecret: secret };
}
