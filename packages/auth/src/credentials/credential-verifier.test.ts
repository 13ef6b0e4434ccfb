import { AppError, ManualClock } from "@gw/shared";
import { describe, expect, it } from "vitest";
import { compileAccess, NO_CONTROLS } from "../api-keys/controls";
import { createCredentialVerifier, type Principal } from "./credential-verifier";

const NOW = Date.UTC(2030, 0, 1);
const GOOD = "good-key";
const EXPIRED = "expired-key";

function setup(session: Principal | null = null) {
  const used: string[] = [];
  const keyPrincipal = (keyId: string, expiresAt: Date | null): Principal => ({
    userId: "usr_1", keyId, emailVerified: true, key: compileAccess(keyId, { ...NO_CONTROLS, expiresAt }),
  });
  const verifier = createCredentialVerifier<{ get(name: string): string | undefined; ip?: string }>({
    keys: {
      verify: async (raw) => (raw === GOOD ? keyPrincipal("key_good", null) : raw === EXPIRED ? keyPrincipal("key_old", new Date(NOW - 1)) : null),
      recordUse: (keyId) => used.push(keyId),
    },
    session: async () => session,
    clock: new ManualClock(NOW),
  });
  const request = (authorization?: string) => ({ get: (name: string) => (name === "authorization" ? authorization : undefined), ip: "192.0.2.1" });
  return { verifier, request, used };
}

describe("credential verifier", () => {
  it("takes the session cookie only without an Authorization header", async () => {
    const session: Principal = { userId: "usr_s", sessionId: "ses_1", emailVerified: true };
    const { verifier, request } = setup(session);
    expect(await verifier.verify(request())).toEqual({ ok: true, principal: session });
    expect(await verifier.verify(request("Bearer nope"))).toEqual({ ok: false, code: "invalid_key" });
    expect(await setup().verifier.verify(request())).toEqual({ ok: false, code: "no_credentials" });
  });

  it("tells a malformed header from an invalid key, and counts the use of a valid one", async () => {
    const { verifier, request, used } = setup();
    expect(await verifier.verify(request("Basic abc"))).toEqual({ ok: false, code: "malformed_authorization" });
    expect(await verifier.verify(request("Bearer unknown"))).toEqual({ ok: false, code: "invalid_key" });
    const result = await verifier.verify(request(`Bearer ${GOOD}`));
    expect(result).toMatchObject({ ok: true, principal: { userId: "usr_1", keyId: "key_good" } });
    expect(used).toEqual(["key_good"]);
  });

  it("throws CONTRACT 10's key_expired unless the access checks are off, and counts nothing when asked not to", async () => {
    const { verifier, request, used } = setup();
    await expect(verifier.verify(request(`Bearer ${EXPIRED}`))).rejects.toSatisfy((err) => err instanceof AppError && err.code === "key_expired");
    expect(await verifier.verify(request(`Bearer ${EXPIRED}`), { checkAccess: false, countUse: false })).toMatchObject({ ok: true });
    expect(used).toEqual([]);
  });
});
