import type { CredentialVerifier, Principal } from "@gw/auth";
import { AppError, isAppError } from "@gw/shared";
import type { Request } from "express";

const invalidKey = (message: string) => new AppError("invalid_api_key", message);
/** The refusal of the model routes when no credential was sent. */
export const missingKey = () => invalidKey("Missing API key: send 'Authorization: Bearer <API_KEY>'.");
/** The refusal of the `/api` routes that take a session or a key (as `/api/billing/*`): neither was sent. */
export const noCredentials = () => new AppError("unauthorized", "Authentication required: log in or send an API key.");

/**
 * The caller of a gateway route (the model routes, and the usage API however it is reached): `Authorization: Bearer
 * <key>` through the cached key verifier, else the dashboard's session cookie. The session reader also refuses
 * cookie-authenticated writes from another site (CONTRACT 2). Only "no valid session" reads as `missing`: its other
 * refusals (session_expired, csrf_rejected) and failures (the database unreachable: 503) reach the client as they are.
 */
export async function gatewayPrincipal(credentials: CredentialVerifier<Request>, req: Request, missing: () => AppError): Promise<Principal> {
  let result;
  try {
    result = await credentials.verify(req);
  } catch (err) {
    // only the session reader refuses with `unauthorized` (a key's refusals are invalid_api_key or their own codes)
    if (isAppError(err) && err.code === "unauthorized") throw missing();
    throw err;
  }
  if (result.ok) return result.principal;
  switch (result.code) {
    case "no_credentials": throw missing();
    case "malformed_authorization": throw invalidKey("Invalid API key: the Authorization header must be 'Bearer <API_KEY>'.");
    case "invalid_key": throw invalidKey("Invalid API key: the key is unknown or revoked.");
  }
}
