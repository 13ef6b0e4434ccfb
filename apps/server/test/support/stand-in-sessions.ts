import { readCookie, SESSION_COOKIE } from "@gw/auth";
import type { Principal } from "@gw/api";
import type { TestServer } from "../harness";

/**
 * Sessions are the accounts feature's; tests of other routes pin a stand-in reader (cookie value `<userId>:<verified>`)
 * so that those routes are exercised on their own over real HTTP and a real database.
 */
export function useStandInSessions(server: TestServer): void {
  server.app.context.sessions = {
    fromRequest: async (req): Promise<Principal | null> => {
      const value = readCookie(req.get("cookie"), SESSION_COOKIE);
      if (!value) return null;
      const [userId = "", verified] = value.split(":");
      return { userId, sessionId: `ses_${userId}`, emailVerified: verified === "1" };
    },
    isActive: async () => true,
  };
}

/** The stand-in session cookie of `userId`. */
export const sessionOf = (userId: string, verified = true) => ({ cookie: `${SESSION_COOKIE}=${userId}:${verified ? "1" : "0"}` });
