import type { ErrorMessages } from "../../lib/api-error";

/**
 * What /login shows for each `?error=` code the OAuth redirects send (docs/api.md), where the generic text would
 * mislead: provider_not_configured names models, and "failed" alone does not tell the user what to do next.
 */
export const OAUTH_MESSAGES: ErrorMessages = {
  provider_not_configured: "Signing in with this provider is not set up on this gateway. Log in with your e-mail and password instead.",
  unsupported_provider: "Signing in with this provider is not supported. Log in with your e-mail and password instead.",
  access_denied: "Signing in was cancelled at the provider.",
  invalid_state: "The sign-in attempt expired or was already used. Please start again.",
  missing_code: "The provider did not complete the sign-in. Please start again.",
  oauth_failed: "The provider could not be reached or refused the sign-in. Please try again.",
  email_unavailable: "The provider did not share a verified e-mail address. Add or verify one there, or sign up with your e-mail and password.",
  account_exists: "An account with this e-mail already exists, and the provider has not verified the address. Log in with your password instead.",
  account_suspended: "This account is suspended. Contact the operator of this gateway.",
  server_error: "Something went wrong on our side while signing you in. Please try again.",
};
