import { hash, randomBytes } from "node:crypto";

/** 32 random bytes (256 bits), URL-safe: what goes into the e-mailed link. */
export const generateToken = (): string => randomBytes(32).toString("base64url");

/** Only this hash is stored, so a database leak does not leak usable links. */
export const hashToken = (token: string): string => hash("sha256", token, "hex");
