import argon2 from "argon2";

// OWASP's argon2id baseline (19 MiB, 2 passes): strong enough, and cheap enough for 2-core machines.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, OPTIONS);

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    // a malformed stored hash never matches
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/** Spends the time of one real verification, so an unknown e-mail answers as slowly as a wrong password. */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword("dummy-password-for-timing-Aa1!");
  await verifyPassword(await dummyHash, password);
  return false;
}
