/** A user as the domain sees it (plain object, never a mongoose document). */
export interface User {
  id: string;
  email: string;
  name: string;
  /** absent for accounts created through OAuth only */
  passwordHash?: string;
  emailVerified: boolean;
  googleId?: string;
  githubId?: string;
  createdAt: Date;
  /** set on every password change: reset tokens issued earlier stop working */
  passwordChangedAt?: Date;
  deletedAt?: Date;
  /** set while an admin has suspended the account (CONTRACT 12): no login, no session, every key refused */
  suspendedAt?: Date;
}

/** SPEC 2.2 plus CONTRACT 2's email_verified, as the API answers it. */
export interface PublicUser {
  id: string;
  email: string;
  name: string;
  created_at: string;
}

export const toPublicUser = (user: User): PublicUser => ({
  id: user.id,
  email: user.email,
  name: user.name,
  created_at: user.createdAt.toISOString(),
});
