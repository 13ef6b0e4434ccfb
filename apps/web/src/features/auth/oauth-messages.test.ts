import { describe, expect, it } from "vitest";
import { ApiError, errorMessage } from "../../lib/api-error";
import { OAUTH_MESSAGES } from "./oauth-messages";

// every code the OAuth redirects send to /login?error= (docs/api.md)
const CODES = ["provider_not_configured", "unsupported_provider", "invalid_state", "access_denied", "missing_code", "oauth_failed", "email_unavailable", "account_exists", "server_error"];

describe("OAuth error wording on /login", () => {
  it("says what happened for every redirect code, never the bare generic text", () => {
    for (const code of CODES) {
      const text = errorMessage(new ApiError(code, "Signing in with the provider failed.", 401), OAUTH_MESSAGES);
      expect(text, code).not.toBe("Signing in with the provider failed.");
      expect(text, code).toBe(OAUTH_MESSAGES[code]);
    }
  });
});
