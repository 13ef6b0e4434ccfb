import { Schema, type Connection, type Model } from "mongoose";
import { AppError, type Clock } from "@gw/shared";
import { isDuplicateKey, modelOn } from "@gw/db";
import { generateToken, hashToken } from "./token-crypto";

export type TokenPurpose = "verify_email" | "password_reset";

interface TokenDoc {
  _id: string;
  purpose: TokenPurpose;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
}

/** One row per consumed token: inserting it is the single-use guard (unique _id, atomic even on FerretDB). */
interface TokenUseDoc {
  _id: string;
  usedAt: Date;
}

export interface IssuedToken {
  userId: string;
  createdAt: Date;
}

export interface OneTimeTokens {
  /** returns the raw token (for the e-mail); only its hash is stored */
  issue(purpose: TokenPurpose, userId: string, ttlMs: number): Promise<string>;
  /** checks a token without using it up; throws invalid_token */
  peek(purpose: TokenPurpose, token: string): Promise<IssuedToken>;
  /** uses a token up exactly once, also under concurrency; throws invalid_token */
  consume(purpose: TokenPurpose, token: string): Promise<IssuedToken>;
}

const invalidToken = () => new AppError("invalid_token", "The token is invalid, expired or already used.");

function models(connection: Connection): { tokens: Model<TokenDoc>; uses: Model<TokenUseDoc> } {
  const tokens = modelOn(connection, "AuthToken", () => new Schema<TokenDoc>({
    _id: String,
    purpose: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  }, { collection: "auth_tokens", versionKey: false }));
  const uses = modelOn(connection, "AuthTokenUse", () => new Schema<TokenUseDoc>({
    _id: String,
    usedAt: { type: Date, required: true },
  }, { collection: "auth_token_uses", versionKey: false }));
  return { tokens, uses };
}

export async function createOneTimeTokens(connection: Connection, clock: Clock): Promise<OneTimeTokens> {
  const { tokens, uses } = models(connection);
  await Promise.all([tokens.init(), uses.init()]);

  async function peek(purpose: TokenPurpose, token: string): Promise<IssuedToken> {
    if (token.length === 0 || token.length > 200) throw invalidToken();
    const id = hashToken(token);
    const [row, used] = await Promise.all([tokens.findById(id).lean(), uses.exists({ _id: id })]);
    if (!row || row.purpose !== purpose || used || row.expiresAt.getTime() <= clock.now()) throw invalidToken();
    return { userId: row.userId, createdAt: row.createdAt };
  }

  return {
    async issue(purpose, userId, ttlMs) {
      const token = generateToken();
      const now = clock.now();
      await tokens.create({ _id: hashToken(token), purpose, userId, createdAt: new Date(now), expiresAt: new Date(now + ttlMs) });
      return token;
    },
    peek,
    async consume(purpose, token) {
      const issued = await peek(purpose, token);
      try {
        await uses.create({ _id: hashToken(token), usedAt: new Date(clock.now()) });
      } catch (err) {
        if (isDuplicateKey(err)) throw invalidToken();
        throw err;
      }
      return issued;
    },
  };
}
