import { initTRPC } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { readCookie, SESSION_COOKIE } from "@gw/auth";
import type { LimitName } from "@gw/config";
import { AppError, nestedErrorBody, textFieldError, type ErrorCode } from "@gw/shared";
import type { Request, Response } from "express";
import type { OpenApiMeta } from "trpc-to-openapi";
import { setRateLimitHeaders } from "@gw/limits";
import type { AppContext, Principal } from "./app-context";
import { toApiError } from "./errors";
import { clientLimitAddress } from "./client-address";
import { isAdmin } from "./console/admins";

/**
 * 1. CONTEXT: one per request. `principal` starts null; the auth procedures below fill it in.
 */
export interface ApiContext {
  app: AppContext;
  req: Request;
  res: Response;
  principal: Principal | null;
}

export function createApiContext(app: AppContext, req: Request, res: Response): ApiContext {
  return { app, req, res, principal: null };
}

/**
 * Route metadata: trpc-to-openapi's `openapi` block, the success status of the REST answer (default 200) and the
 * route-specific error codes it may answer (listed in the OpenAPI document next to the common ones).
 */
export type ApiMeta = OpenApiMeta & { successStatus?: number; errors?: ErrorCode[]; auth?: RouteAuth };

/** Which credentials a procedure accepts; set by the procedure kinds below and shown as the OpenAPI `security`. */
export type RouteAuth = "none" | "session" | "sessionOrKey" | "admin";

type TrpcCodeKey = keyof typeof TRPC_ERROR_CODES_BY_KEY;

/** tRPC's name for an HTTP status, so `data.code` and the JSON-RPC `code` agree with the answer's status. */
const TRPC_KEY_BY_STATUS: Record<number, TrpcCodeKey> = {
  400: "BAD_REQUEST", 401: "UNAUTHORIZED", 402: "PAYMENT_REQUIRED", 403: "FORBIDDEN", 404: "NOT_FOUND",
  405: "METHOD_NOT_SUPPORTED", 408: "TIMEOUT", 409: "CONFLICT", 412: "PRECONDITION_FAILED", 413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE", 422: "UNPROCESSABLE_CONTENT", 428: "PRECONDITION_REQUIRED", 429: "TOO_MANY_REQUESTS",
  499: "CLIENT_CLOSED_REQUEST", 501: "NOT_IMPLEMENTED", 502: "BAD_GATEWAY", 503: "SERVICE_UNAVAILABLE", 504: "GATEWAY_TIMEOUT",
};
const trpcKeyOf = (status: number): TrpcCodeKey => TRPC_KEY_BY_STATUS[status] ?? (status < 500 ? "BAD_REQUEST" : "INTERNAL_SERVER_ERROR");

/**
 * 2. INITIALIZATION. No transformer: plain JSON keeps the REST layer and the tRPC client on one wire format.
 * Errors reach the dashboard's tRPC client as `data.error` in the SPEC 7.1 shape, with no stack.
 */
const t = initTRPC.context<ApiContext>().meta<ApiMeta>().create({
  errorFormatter({ shape, error, input }) {
    return trpcErrorShape(toApiError(error, input), shape.data.path);
  },
});

/**
 * A domain error in tRPC's error shape (also for the body errors the server answers before the adapter runs).
 * An AppError thrown in a procedure reaches tRPC as INTERNAL_SERVER_ERROR: its real status is named instead.
 */
export function trpcErrorShape(appError: AppError, path: string | undefined) {
  const key = trpcKeyOf(appError.status);
  return {
    message: appError.message,
    code: TRPC_ERROR_CODES_BY_KEY[key],
    data: { code: key, httpStatus: appError.status, path, error: nestedErrorBody(appError).error },
  };
}

/** 3. ROUTERS AND PROCEDURES */
export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Successful answers use the status named by the procedure's meta (e.g. 201 for creations). Set only once the
 * call succeeded: tRPC's adapter keeps a status other than 200 that is already set, so a failed call answered 201.
 */
const successStatus = t.middleware(async ({ ctx, meta, next }) => {
  const result = await next();
  if (result.ok && meta?.successStatus) ctx.res.status(meta.successStatus);
  return result;
});

/**
 * CONTRACT 7b on the tRPC wire too: a NUL character or half a surrogate pair in any input string or key is 400
 * invalid_parameter naming it (the REST routes refuse such bodies before the adapter; /api/trpc stored e.g. a key
 * description with its NUL).
 */
const plainTextInput = t.middleware(async ({ getRawInput, next }) => {
  const error = textFieldError(await getRawInput());
  if (error) throw error;
  return next();
});

/** No authentication. */
export const publicProcedure = t.procedure.use(successStatus).use(plainTextInput).meta({ auth: "none" });

/** Session cookie only: a request carrying just an API key is refused with 401 unauthorized (SPEC 5, CONTRACT 3). */
const requireSession = t.middleware(async ({ ctx, next }) => {
  const principal = await ctx.app.sessions.fromRequest(ctx.req);
  if (!principal) {
    const message = ctx.req.get("authorization") === undefined
      ? "Authentication required: log in first."
      : "This endpoint requires a logged-in session; API keys are not accepted.";
    throw new AppError("unauthorized", message);
  }
  return next({ ctx: { ...ctx, principal } });
});

export const sessionProcedure = publicProcedure.use(requireSession).meta({ auth: "session" });

/**
 * Logout (SPEC 3: logout clears session and cookies): a session cookie refused as expired, revoked or unreadable is
 * still cleared, so the browser stops sending it; the answer stays the 401 of any session route.
 */
const clearRefusedSessionCookie = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok && readCookie(ctx.req.get("cookie"), SESSION_COOKIE) && !ctx.res.headersSent) {
    const { code } = toApiError(result.error);
    if (code === "unauthorized" || code === "session_expired") ctx.res.append("Set-Cookie", ctx.app.auth.sessions.clearCookie());
  }
  return result;
});

export const logoutProcedure = publicProcedure.use(clearRefusedSessionCookie).use(requireSession).meta({ auth: "session" });

const invalidApiKey = () => new AppError("invalid_api_key", "Invalid API key.");

/** API key (`Authorization: Bearer`) when the header is present, else the session cookie. */
export const sessionOrKeyProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const result = await ctx.app.credentials.verify(ctx.req);
  if (!result.ok) {
    throw result.code === "no_credentials" ? new AppError("unauthorized", "Authentication required: log in or send an API key.") : invalidApiKey();
  }
  return next({ ctx: { ...ctx, principal: result.principal } });
}).meta({ auth: "sessionOrKey" });

const requireVerifiedEmail = t.middleware(({ ctx, next }) => {
  if (ctx.principal && !ctx.principal.emailVerified) {
    throw new AppError("email_not_verified", "Verify your e-mail address first: follow the link we sent you.");
  }
  return next();
});

/** Session with a verified e-mail (403 email_not_verified otherwise). */
export const verifiedSessionProcedure = sessionProcedure.use(requireVerifiedEmail);
/** API key or session, with a verified e-mail. */
export const verifiedSessionOrKeyProcedure = sessionOrKeyProcedure.use(requireVerifiedEmail);

/**
 * An admin's session (CONTRACT 12): no credentials 401 unauthorized; an API key (valid: 403, it never makes an admin;
 * invalid: 401 invalid_api_key) or any account that is not an admin 403 admin_required. Adds the admin's account.
 */
export const adminProcedure = publicProcedure.use(async ({ ctx, next }) => {
  // a key is only told valid from invalid: it is neither checked further nor counted
  const result = await ctx.app.credentials.verify(ctx.req, { checkAccess: false, countUse: false });
  if (!result.ok) throw result.code === "no_credentials" ? new AppError("unauthorized", "Authentication required: log in first.") : invalidApiKey();
  const { principal } = result;
  if (principal.keyId) throw adminRequired();
  const admin = await ctx.app.auth.users.findById(principal.userId);
  if (!admin || !isAdmin(ctx.app, admin)) throw adminRequired();
  return next({ ctx: { ...ctx, principal, admin } });
}).meta({ auth: "admin" });

const adminRequired = () => new AppError("admin_required", "This endpoint is for the gateway's admins only.");

/**
 * Counts the request against a SPEC 8 limit (config.limits[name]), per client IP or per authenticated user
 * (falls back to the IP before authentication). Over the limit: 429 with Retry-After and X-RateLimit-*.
 */
export function rateLimit(name: LimitName, per: "ip" | "user") {
  return t.middleware(async ({ ctx, next }) => {
    const key = per === "user" && ctx.principal ? `user:${ctx.principal.userId}` : `ip:${clientLimitAddress(ctx.req)}`;
    const state = await ctx.app.limits.consume(name, key);
    setRateLimitHeaders(ctx.res, state);
    return next();
  });
}
