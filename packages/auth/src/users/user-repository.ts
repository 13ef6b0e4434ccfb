import { Schema, trusted, type Connection } from "mongoose";
import { AppError, newId } from "@gw/shared";
import { isDuplicateKey, modelOn } from "@gw/db";
import { asciiDomainEmail } from "./email";
import type { User } from "./user";

export type OAuthProviderName = "google" | "github";

interface UserDoc {
  _id: string;
  email: string;
  name: string;
  passwordHash?: string;
  emailVerifiedAt?: Date;
  googleId?: string;
  githubId?: string;
  createdAt: Date;
  passwordChangedAt?: Date;
  deletedAt?: Date;
  suspendedAt?: Date;
}

const userSchema = () => new Schema<UserDoc>({
  _id: String,
  // unique: concurrent sign-ups with one e-mail race on this index, and only one insert wins
  email: { type: String, required: true, unique: true },
  name: { type: String, default: "" },
  passwordHash: String,
  emailVerifiedAt: Date,
  googleId: { type: String, index: true },
  githubId: { type: String, index: true },
  createdAt: { type: Date, required: true },
  passwordChangedAt: Date,
  deletedAt: Date,
  suspendedAt: Date,
}, { collection: "users", versionKey: false });

function toUser(doc: UserDoc): User {
  const user: User = {
    id: doc._id,
    email: doc.email,
    name: doc.name,
    emailVerified: doc.emailVerifiedAt !== undefined && doc.emailVerifiedAt !== null,
    createdAt: doc.createdAt,
  };
  if (doc.passwordHash) user.passwordHash = doc.passwordHash;
  if (doc.googleId) user.googleId = doc.googleId;
  if (doc.githubId) user.githubId = doc.githubId;
  if (doc.passwordChangedAt) user.passwordChangedAt = doc.passwordChangedAt;
  if (doc.deletedAt) user.deletedAt = doc.deletedAt;
  if (doc.suspendedAt) user.suspendedAt = doc.suspendedAt;
  return user;
}

/** What creating a user needs: the document without its id and later-life fields. */
export type NewUser = Omit<UserDoc, "_id" | "passwordChangedAt" | "deletedAt" | "suspendedAt">;

/** The operator console's user list: newest first, a page at a time. */
export interface UserSearch {
  /** a part of the e-mail or the name, case-insensitive */
  query?: string;
  status?: "active" | "suspended";
  limit: number;
  /** where the previous page ended (its last user) */
  after?: { createdAt: Date; id: string };
}

/** A search text as a literal regular expression (no operator of the caller reaches the database). */
const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export interface UserRepository {
  /** throws account_exists when the e-mail is taken */
  create(input: NewUser): Promise<User>;
  findById(id: string): Promise<User | null>;
  findByEmail(email: string): Promise<User | null>;
  findByProviderId(provider: OAuthProviderName, providerId: string): Promise<User | null>;
  markEmailVerified(id: string, at: Date): Promise<void>;
  /** links the identity; an account not verified yet becomes verified and loses its password and other identities (set by someone unproven) */
  linkProvider(id: string, provider: OAuthProviderName, providerId: string, verifiedAt: Date): Promise<void>;
  /** with `expected`, only while the stored hash is still that one (false when another change came first) */
  setPasswordHash(id: string, passwordHash: string, at: Date, expected?: string): Promise<boolean>;
  setName(id: string, name: string): Promise<void>;
  /** removes personal data; the e-mail becomes free for a new sign-up */
  anonymize(id: string, at: Date): Promise<void>;
  /** suspends (a date) or reinstates (null) the account */
  setSuspended(id: string, at: Date | null): Promise<void>;
  /** live (not deleted) accounts, newest first */
  search(search: UserSearch): Promise<User[]>;
}

export async function createUserRepository(connection: Connection): Promise<UserRepository> {
  const users = modelOn(connection, "User", userSchema);
  await users.init();

  const one = async (filter: Partial<UserDoc>): Promise<User | null> => {
    const doc = await users.findOne(filter).lean<UserDoc>();
    return doc ? toUser(doc) : null;
  };

  return {
    async create(input) {
      const ascii = asciiDomainEmail(input.email);
      // the same address stored with its domain spelled in IDNA ASCII (before e-mails were normalized) is taken
      if (ascii !== input.email && (await one({ email: ascii }))) throw new AppError("account_exists", "An account with this e-mail already exists.");
      try {
        const created = await users.create({ _id: newId("usr"), ...input });
        return toUser(created.toObject());
      } catch (err) {
        if (isDuplicateKey(err)) throw new AppError("account_exists", "An account with this e-mail already exists.");
        throw err;
      }
    },
    findById: (id) => one({ _id: id }),
    // an address stored decomposed (before e-mails were put in NFC) or with an "xn--" domain (before domains were
    // put in their Unicode form) is still its owner's account
    findByEmail: async (email) => {
      const found = (await one({ email })) ?? (email.normalize("NFD") === email ? null : await one({ email: email.normalize("NFD") }));
      const ascii = asciiDomainEmail(email);
      return found ?? (ascii === email ? null : one({ email: ascii }));
    },
    findByProviderId: (provider, providerId) => one(provider === "google" ? { googleId: providerId } : { githubId: providerId }),
    async markEmailVerified(id, at) {
      await users.updateOne({ _id: id, emailVerifiedAt: null }, { $set: { emailVerifiedAt: at } });
    },
    async linkProvider(id, provider, providerId, verifiedAt) {
      const field = provider === "google" ? "googleId" : "githubId";
      // the provider proves the e-mail; a password or identity attached before anyone had proved it may be a squatter's: dropped
      await users.updateOne(
        { _id: id, emailVerifiedAt: null },
        { $set: { emailVerifiedAt: verifiedAt, passwordChangedAt: verifiedAt }, $unset: { passwordHash: 1, googleId: 1, githubId: 1 } },
      );
      await users.updateOne({ _id: id }, { $set: { [field]: providerId } });
    },
    async setPasswordHash(id, passwordHash, at, expected) {
      const filter = expected === undefined ? { _id: id } : { _id: id, passwordHash: expected };
      const result = await users.updateOne(filter, { $set: { passwordHash, passwordChangedAt: at } });
      return result.matchedCount === 1;
    },
    async setName(id, name) {
      await users.updateOne({ _id: id }, { $set: { name } });
    },
    async setSuspended(id, at) {
      await users.updateOne({ _id: id }, at ? { $set: { suspendedAt: at } } : { $unset: { suspendedAt: 1 } });
    },
    async search({ query, status, limit, after }) {
      const and: Array<Record<string, unknown>> = [{ deletedAt: null }];
      if (query) {
        // operators are ours (trusted): the caller's text is matched literally
        const pattern = () => trusted({ $regex: literal(query), $options: "i" });
        and.push({ $or: [{ email: pattern() }, { name: pattern() }] });
      }
      if (status === "suspended") and.push({ suspendedAt: trusted({ $ne: null }) });
      if (status === "active") and.push({ suspendedAt: null });
      if (after) {
        and.push({ $or: [{ createdAt: trusted({ $lt: after.createdAt }) }, { createdAt: after.createdAt, _id: trusted({ $lt: after.id }) }] });
      }
      const docs = await users.find({ $and: and }).sort({ createdAt: -1, _id: -1 }).limit(limit).lean<UserDoc[]>();
      return docs.map(toUser);
    },
    async anonymize(id, at) {
      await users.updateOne(
        { _id: id },
        {
          $set: { email: `deleted+${id}@invalid`, name: "", deletedAt: at },
          $unset: { passwordHash: 1, googleId: 1, githubId: 1, emailVerifiedAt: 1 },
        },
      );
    },
  };
}
