// Start-up's part of the settings: what DATA_DIR keeps for a server that was given no SESSION_SECRET.
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, SESSION_SECRET_MIN_LENGTH, type Config } from "@gw/config";

/**
 * The settings with a session secret: SESSION_SECRET's, else (outside production, where it is required) a generated
 * one kept under DATA_DIR so that sessions survive restarts. It is written whole under another name and linked in
 * place, so that two servers starting on one fresh DATA_DIR keep the same secret (the second one's overwrote the
 * first's, whose sessions the second then refused) and neither reads a half-written file. A file too short to be a
 * secret (empty) stops the start: every login sealed its session with it and was a 500.
 */
export function withSessionSecret(config: Config): Config {
  if (config.sessionSecret) return config;
  const file = path.join(config.dataDir, "session-secret");
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    const draft = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
    writeFileSync(draft, randomBytes(32).toString("hex"), { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      unlinkSync(draft);
    }
  }
  const secret = readFileSync(file, "utf8").trim();
  if (secret.length < SESSION_SECRET_MIN_LENGTH) {
    throw new ConfigError(`SESSION_SECRET is unset and ${file} holds ${secret.length} characters, fewer than the ${SESSION_SECRET_MIN_LENGTH} a session secret needs: delete that file (a new secret is generated) or set SESSION_SECRET`);
  }
  return { ...config, sessionSecret: secret };
}
